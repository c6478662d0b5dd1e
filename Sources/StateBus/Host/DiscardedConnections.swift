/// Connections dropped for their backlog, whose further requests are read and thrown away.
///
/// libzmq 4.3.4 cannot close one connection of a ROUTER socket, and a connection whose
/// reading stops can abort the process (``ServingSockets``), so a client that does not read
/// its replies is read on, as cheaply as possible: its requests are received and freed, not
/// handled, and not a single reply is queued for it again. A well-behaved view that was
/// dropped (stopped in a debugger, say) hears nothing more on that connection, takes the
/// silence for a lost host, and joins again on a new connection, which the socket gives a
/// new id.
///
/// Bounded: the socket never gives an id twice, so forgetting the oldest ids past the bound
/// lets at most those connections be handled again, which costs one more drop each.
struct DiscardedConnections {
    /// The most ids kept; each is a routing id (5 bytes for the socket's own ids).
    static let capacity = 4_096

    private var members: Set<[UInt8]> = []
    private var order: [[UInt8]] = []
    private var oldest = 0

    /// Whether requests from `identity` are thrown away.
    func contains(_ identity: [UInt8]) -> Bool { members.contains(identity) }

    /// Throws away everything `identity` sends from now on.
    mutating func insert(_ identity: [UInt8]) {
        guard members.insert(identity).inserted else { return }
        order.append(identity)
        if members.count > Self.capacity {
            members.remove(order[oldest])
            oldest += 1
            // Compacted now and then, so the order's dead prefix stays within the bound.
            if oldest >= Self.capacity {
                order.removeFirst(oldest)
                oldest = 0
            }
        }
    }
}
