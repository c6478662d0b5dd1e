import Foundation
import StateBusWire
import ZeroMQ

/// Reads one request from a control socket the way PROTOCOL.md section 4 orders the checks
/// (size, decoding, version, keys), for every server of a control socket: a host and a
/// relay read their views' requests with the same code, so they refuse the same requests
/// with the same errors. What a request then does is the server's own.
struct RequestReader {
    /// What one request turned out to be.
    enum Reading {
        /// A decoded request of a supported version, its key checked; `keyName` is the name
        /// the authorized keys give the connection's key (set for a hello on a host with keys).
        case request(ViewRequest, Requester, keyName: String?)
        /// A request not taken: answer the refusal.
        case refused(Refusal)
    }

    /// A request not taken, and how to answer it.
    struct Refusal: Error {
        /// How the refusal is answered, so the view that waits for it hears it where it waits.
        typealias Answer = ViewRequest.RefusalAnswer

        var error: StateBusError
        var requester: Requester
        var answer: Answer
        /// Whether the connection's key may not make this request (counted as forbidden),
        /// rather than the request being malformed (counted as a bad message).
        var isForbidden: Bool
    }

    /// "host" or "relay": who refuses, in the refusals' words.
    let speaker: String
    /// The key checks of a server with keys.
    let keyGuard: HostGuard?

    /// Reads a write with the write path's fast decoder, which takes a write with nothing
    /// unusual in it, its key checked: what a host tries first, since it applies writes (a
    /// relay forwards the decoded request as it is).
    /// - Returns: the write or its refusal; `nil` for anything the fast decoder does not take
    ///   (another request, a write in another form, a request past `maxMessageBytes`):
    ///   ``read(identity:payload:maxMessageBytes:)`` then takes it or says why not.
    func readWrite(identity: [UInt8], payload: ZeroMQ.Message, maxMessageBytes: Int) -> Result<(WireWrite, Requester), Refusal>? {
        guard payload.count <= maxMessageBytes, let write = payload.withUnsafeBytes(WriteCodec.decodeWrite),
            StateBusProtocol.versions.contains(write.protocolVersion)
        else { return nil }
        let requester = Requester(identity: identity, requestID: write.requestID, version: write.protocolVersion)
        if let refusal = keyGuard?.refusal(forWriteTo: write.object, viewID: write.viewID, from: payload) {
            return .failure(Refusal(error: refusal, requester: requester, answer: .write(writeID: write.writeID), isForbidden: true))
        }
        return .success((write, requester))
    }

    /// Reads and checks one request.
    /// - Parameters:
    ///   - identity: the connection's routing id.
    ///   - payload: the request's frame.
    ///   - maxMessageBytes: the largest request taken (`TOO_LARGE` past it).
    func read(identity: [UInt8], payload: ZeroMQ.Message, maxMessageBytes: Int) -> Reading {
        guard payload.count <= maxMessageBytes else {
            return .refused(
                Refusal(
                    error: StateBusError(.tooLarge, "the request has \(payload.count) bytes; this \(speaker) accepts at most \(maxMessageBytes)"),
                    requester: Requester(identity: identity), answer: .error, isForbidden: false))
        }
        let decoded: DecodedRequest
        do {
            decoded = try payload.withUnsafeBytes(DecodedRequest.init(bytes:))
        } catch {
            return .refused(
                Refusal(
                    error: StateBusError(.badRequest, "not a StateBus request (\(error)); see proto/PROTOCOL.md"),
                    requester: Requester(identity: identity), answer: .error, isForbidden: false))
        }
        guard StateBusProtocol.versions.contains(decoded.protocolVersion) else {
            return .refused(
                Refusal(
                    error: StateBusError(
                        .unsupportedVersion,
                        "protocol version \(decoded.protocolVersion) is not supported; this \(speaker) speaks versions \(StateBusProtocol.versions.lowerBound) and \(StateBusProtocol.versions.upperBound)"
                    ),
                    requester: Requester(identity: identity, requestID: decoded.requestID), answer: .error, isForbidden: false))
        }
        let requester = Requester(identity: identity, requestID: decoded.requestID, version: decoded.protocolVersion)
        let request = decoded.request
        if let refusal = keyGuard?.refusal(for: request, from: payload) {
            return .refused(Refusal(error: refusal, requester: requester, answer: request.refusalAnswer, isForbidden: true))
        }
        var keyName: String?
        if case .hello = request { keyName = keyGuard?.keyName(of: payload) }
        return .request(request, requester, keyName: keyName)
    }
}
