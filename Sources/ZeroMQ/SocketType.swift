import CZeroMQ

/// The ZeroMQ socket patterns the wrapper supports.
public enum SocketType: Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// Publishes to every subscriber; drops when a subscriber's queue is full.
    case pub
    /// Receives what matches its subscriptions.
    case sub
    /// A PUB that also delivers subscription messages to the application.
    case xpub
    /// A SUB that sends subscriptions as messages.
    case xsub
    /// Addresses peers by routing id; the first frame of each message names the peer.
    case router
    /// Load-balances outgoing, fair-queues incoming; the client side of ROUTER.
    case dealer
    /// Pipeline sender.
    case push
    /// Pipeline receiver.
    case pull
    /// Exclusive one-to-one pair.
    case pair

    var rawValue: Int32 {
        switch self {
        case .pub: ZMQ_PUB
        case .sub: ZMQ_SUB
        case .xpub: ZMQ_XPUB
        case .xsub: ZMQ_XSUB
        case .router: ZMQ_ROUTER
        case .dealer: ZMQ_DEALER
        case .push: ZMQ_PUSH
        case .pull: ZMQ_PULL
        case .pair: ZMQ_PAIR
        }
    }

    /// The pattern's name in capitals, as the ZeroMQ Guide writes it.
    public var description: String {
        switch self {
        case .pub: "PUB"
        case .sub: "SUB"
        case .xpub: "XPUB"
        case .xsub: "XSUB"
        case .router: "ROUTER"
        case .dealer: "DEALER"
        case .push: "PUSH"
        case .pull: "PULL"
        case .pair: "PAIR"
        }
    }
}
