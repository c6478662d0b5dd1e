import Foundation
import Logging
import StateBusWire
import ZeroMQ

/// The host's gatekeeper when it has keys: the ZAP handler that admits only listed keys,
/// the per-request authorization by role, the binding of view ids to keys, and the reload
/// of the authorized keys file.
///
/// Lives on the host's I/O loop thread only, like ``HostServer``: the ZAP handler is a
/// ROUTER on `inproc://zeromq.zap.01` in the host's context, polled by the same loop, so no
/// other thread touches it or the key table. (libzmq's own I/O thread waits for the ZAP
/// reply during each handshake; a busy loop delays handshakes, it does not race them.)
///
/// **What is enforced where.**
/// - Handshake (both sockets): a client must speak CURVE, know the host's public key and
///   hold a key listed in the file; anything else is refused (ZAP 400) before one message
///   is delivered either way. `ZMQ_ZAP_ENFORCE_DOMAIN` makes the sockets refuse everyone
///   should the handler be missing, instead of libzmq's default of admitting every key.
/// - Every request on the control socket: its connection's key (the ZAP `User-Id`, carried
///   by each message) must still be listed; a write needs a `write` role naming the object;
///   a view id belongs to the first key that used it.
/// - After a reload that removed keys, the updates socket is unbound and bound again, which
///   closes every subscriber connection: views reconnect and pass the handshake again, the
///   removed keys fail it. (libzmq 4.3 has no way to close one XPUB connection.) The
///   removed key's control connection stays open until its client closes it, but every
///   request on it is refused with `forbidden`, and a new one fails the handshake.
final class HostGuard {
    /// The ZAP domain of the host's sockets.
    static let domain = "statebus"
    /// What CURVE adds to the largest frame the updates socket must read: its handshake
    /// command and the box around each message.
    static let curveFrameAllowance = 512
    /// View ids remembered with their key; the oldest bindings go first past it.
    static let maxViewBindings = 100_000

    private let security: HostSecurity
    private(set) var authorized: AuthorizedKeys
    private let zap: Socket
    private let counters: HostCounters
    private let logger: Logger
    private unowned let thread: LoopThread
    /// The updates socket and where it is bound, to close its connections after a removal.
    private var updates: (socket: Socket, endpoint: String)?
    /// Each view id's key, and the order they were bound in (for the bound above).
    private var viewOwners: [String: String] = [:]
    private var ownerOrder: [String] = []

    /// Checks the endpoints against the secure default and, when the configuration has
    /// keys, makes `sockets` CURVE servers guarded by a new ZAP handler. Call before the
    /// sockets bind.
    /// - Returns: the guard, or `nil` for a host without keys.
    /// - Throws: `StateBusError.unsafeEndpoint` for a network endpoint without keys (and
    ///   without ``HostConfiguration/allowsInsecureNetwork``); ``AuthorizedKeysError``;
    ///   `ZeroMQError` when the ZAP endpoint is taken (another host with keys in the context).
    static func install(configuration: HostConfiguration, thread: LoopThread, control: Socket, updates: Socket, counters: HostCounters) throws
        -> HostGuard?
    {
        let exposed = [configuration.controlEndpoint, configuration.updatesEndpoint].filter { !NetworkExposure.isLocal($0) }
        guard let security = configuration.security else {
            guard !exposed.isEmpty else { return nil }
            guard configuration.allowsInsecureNetwork else {
                throw StateBusError(
                    .unsafeEndpoint,
                    "refusing to serve \(exposed.joined(separator: " and ")) without CURVE keys: anyone who can reach it could read and write every object. "
                        + "Either give the host a key and the keys it admits (`statebus keygen host`, then --key host.key --authorized authorized.keys; "
                        + "HostConfiguration.security), or accept the risk with --insecure (HostConfiguration.allowsInsecureNetwork)")
            }
            configuration.logger.warning(
                "INSECURE: serving \(exposed.joined(separator: " and ")) without CURVE keys (--insecure): anyone who can reach it reads and writes every object, in clear text"
            )
            return nil
        }
        let hostGuard = try HostGuard(security: security, thread: thread, counters: counters, logger: configuration.logger)
        for socket in [control, updates] {
            try socket.makeCurveServer(keys: security.keys)
            try socket.set(.zapDomain, domain)
            try socket.set(.zapEnforceDomain, true)
        }
        // libzmq applies ZMQ_MAXMSGSIZE to the frames on the wire: with CURVE these are the
        // handshake's INITIATE (about 270 bytes) and each subscription inside a MESSAGE box
        // (33 bytes more). The subscription gate still refuses a subscription past
        // HostLimits.maxSubscriptionBytes, having read it.
        try updates.set(.maxMessageSize, Int64(configuration.limits.maxSubscriptionBytes + Self.curveFrameAllowance))
        return hostGuard
    }

    private init(security: HostSecurity, thread: LoopThread, counters: HostCounters, logger: Logger) throws {
        self.security = security
        authorized = try AuthorizedKeys(contentsOf: security.authorizedKeysFile)
        self.counters = counters
        self.logger = logger
        self.thread = thread
        zap = try Socket(context: thread.context, type: .router)
        do {
            try zap.bind(ZAPRequest.endpoint)
        } catch {
            throw StateBusError(
                .other, "cannot start the host's ZAP handler (\(error)): a host with keys needs a ZeroMQ context of its own; pass none to StateHost")
        }
        thread.register(zap) { [unowned self] in self.zapReadable() }
        logger.info(
            "CURVE on: host key \(security.keys.publicKey), \(authorized.entries.count) authorized keys from \(security.authorizedKeysFile)")
    }

    /// Remembers where the updates socket is bound, once it is.
    func updatesBound(_ socket: Socket, at endpoint: String) {
        updates = (socket, endpoint)
    }

    // MARK: Handshakes

    private func zapReadable() {
        for _ in 0..<256 {
            guard let frames = try? zap.tryReceiveMultipart() else { return }
            guard let request = ZAPRequest(routerFrames: frames.map(\.bytes)) else { continue }
            // libzmq's side of ZAP waits for this answer; one the inproc queue will not take
            // leaves that peer's handshake to time out (it then reconnects): counted, logged.
            guard (try? zap.send(multipart: answer(request), wait: false)) == true else {
                counters.droppedMessages.add(1, ordering: .relaxed)
                logger.warning("could not answer a handshake's ZAP request (queue full); that peer's handshake times out and it reconnects")
                continue
            }
        }
    }

    private func answer(_ request: ZAPRequest) -> [[UInt8]] {
        guard request.version == "1.0" else { return request.reply(status: "500", text: "ZAP version \(request.version) is not 1.0") }
        guard request.mechanism == "CURVE", request.credentials.count == 1, let key = try? Z85.encode(request.credentials[0]) else {
            refused(request, key: nil, reason: "it does not use CURVE (\(request.mechanism))")
            return request.reply(status: "400", text: "CURVE required")
        }
        guard authorized.entry(for: key) != nil else {
            refused(request, key: key, reason: "its key is not in \(security.authorizedKeysFile)")
            return request.reply(status: "400", text: "key not authorized")
        }
        // The key itself is the user id: every message of the connection carries it, and it
        // is looked up again at each request, so a reload takes effect at once.
        return request.reply(status: "200", text: "OK", userID: key)
    }

    private func refused(_ request: ZAPRequest, key: String?, reason: String) {
        // The first and then one in a thousand: a peer knocking in a loop must not flood the log.
        if counters.refusedHandshakes.add(1, ordering: .relaxed).oldValue % 1_000 == 0 {
            logger.warning(
                "refused a connection from \(request.address.isEmpty ? "a local peer" : request.address)\(key.map { " with key \($0)" } ?? ""): \(reason) (refused so far: \(counters.refusedHandshakes.load(ordering: .relaxed)); HostStatistics.refusedHandshakes)"
            )
        }
    }

    // MARK: Requests

    /// The name the authorized keys file gives the key of the connection a frame came in on
    /// (for the list of connected views), or `nil` for a key not listed.
    func keyName(of payload: ZeroMQ.Message) -> String? {
        payload.property("User-Id").flatMap { authorized.entry(for: $0)?.name }
    }

    /// Why a request may not be handled, or `nil` when its key may make it.
    /// - Parameters:
    ///   - request: the decoded request.
    ///   - payload: the frame it came in, which carries its connection's key.
    func refusal(for request: ViewRequest, from payload: ZeroMQ.Message) -> StateBusError? {
        guard let key = payload.property("User-Id"), let entry = authorized.entry(for: key) else {
            return StateBusError(
                .forbidden, "this connection's key is no longer in the host's authorized keys; ask the host's operator to list it, then connect again"
            )
        }
        switch request {
        case .hello(let hello):
            if hello.relay, entry.role != .relay {
                return StateBusError(
                    .forbidden,
                    "key '\(entry.name)' has the role \(entry.role) in the authorized keys: a relay needs the role relay (a line `relay \(entry.publicKey) \(entry.name)`)"
                )
            }
            return claim(viewID: hello.viewID, for: entry)
        case .write(let write):
            return refusal(forWriteTo: write.object, viewID: write.viewID, by: entry)
        case .call(let call):
            // An action may change anything of its object: calling it needs the right to
            // write the object, as a write does.
            if entry.role == .relay { return nil }
            if let refusal = claim(viewID: call.viewID, for: entry) { return refusal }
            guard entry.role.mayWrite(call.object) else {
                return StateBusError(
                    .forbidden,
                    "key '\(entry.name)' has the role \(entry.role) in the host's authorized keys: it may not call actions of '\(call.object)' (that needs the right to write it)",
                    object: call.object)
            }
            return nil
        default:
            return nil
        }
    }

    /// Binds a view id to the first key that uses it; another key naming it is refused.
    /// Why the key that sent `payload` may not write to `object` as `viewID`, or `nil` when
    /// it may (the write path's fast decoder asks this without a decoded request).
    func refusal(forWriteTo object: String, viewID: String, from payload: ZeroMQ.Message) -> StateBusError? {
        guard let key = payload.property("User-Id"), let entry = authorized.entry(for: key) else {
            return StateBusError(
                .forbidden, "this connection's key is no longer in the host's authorized keys; ask the host's operator to list it, then connect again"
            )
        }
        return refusal(forWriteTo: object, viewID: viewID, by: entry)
    }

    private func refusal(forWriteTo object: String, viewID: String, by entry: AuthorizedKeys.Entry) -> StateBusError? {
        // A relay writes for its views, under their ids: its own keys file vouched for them.
        if entry.role == .relay { return nil }
        if let refusal = claim(viewID: viewID, for: entry) { return refusal }
        guard entry.role.mayWrite(object) else {
            return StateBusError(
                .forbidden, "key '\(entry.name)' has the role \(entry.role) in the host's authorized keys: it may not write to '\(object)'",
                object: object)
        }
        return nil
    }

    private func claim(viewID: String, for entry: AuthorizedKeys.Entry) -> StateBusError? {
        guard !viewID.isEmpty else { return nil }
        if let owner = viewOwners[viewID] {
            guard owner == entry.publicKey else {
                return StateBusError(
                    .forbidden,
                    "view id '\(viewID)' belongs to another key (\(authorized.entry(for: owner)?.name ?? "a removed key")); key '\(entry.name)' may not use it: give each replica its own id"
                )
            }
            return nil
        }
        if viewOwners.count >= Self.maxViewBindings {
            for old in ownerOrder.prefix(Self.maxViewBindings / 10) { viewOwners[old] = nil }
            ownerOrder.removeFirst(min(ownerOrder.count, Self.maxViewBindings / 10))
        }
        viewOwners[viewID] = entry.publicKey
        ownerOrder.append(viewID)
        return nil
    }

    // MARK: Reload

    /// Reads the authorized keys file again. Roles take effect at each key's next request;
    /// when keys were removed, every subscriber connection is closed (views reconnect, the
    /// removed keys cannot). A malformed file changes nothing.
    /// - Throws: ``AuthorizedKeysError``: the old list stays in force.
    func reload() throws -> AuthorizedKeysReload {
        let fresh: AuthorizedKeys
        do {
            fresh = try AuthorizedKeys(contentsOf: security.authorizedKeysFile)
        } catch {
            logger.error("not reloading the authorized keys: \(error); the previous list stays in force")
            throw error
        }
        let old = authorized
        let name = { (entry: AuthorizedKeys.Entry) in "\(entry.name) (\(entry.publicKey))" }
        let removed = old.entries.filter { fresh.entry(for: $0.publicKey) == nil }
        let added = fresh.entries.filter { old.entry(for: $0.publicKey) == nil }
        let changed = fresh.entries.filter { entry in old.entry(for: entry.publicKey).map { $0.role != entry.role } ?? false }
        authorized = fresh
        let outcome = AuthorizedKeysReload(removed: removed.map(name), added: added.map(name), changed: changed.map(name))
        logger.notice("\(outcome)")
        if !removed.isEmpty { closeSubscriberConnections() }
        return outcome
    }

    /// Unbinds the updates socket, which closes each of its connections, and binds it again
    /// at the same endpoint. The old listener closes on libzmq's I/O thread after
    /// `zmq_unbind` returns, so a tcp port may still be taken for a moment (retried every
    /// 5 ms for up to 5 s). An ipc bind replaces the socket file; should the old listener
    /// delete the path as it closes, a check 250 ms later binds again.
    private func closeSubscriberConnections() {
        guard let (socket, endpoint) = updates else { return }
        do {
            try socket.unbind(endpoint)
        } catch {
            logger.error("could not unbind the updates socket to close removed keys' connections: \(error)")
            return
        }
        let deadline = ContinuousClock.now + .seconds(5)
        func attempt() {
            do {
                try socket.bind(endpoint)
                HostServer.restrictSocketFile(of: endpoint)
                logger.notice("closed every subscriber connection (keys were removed) and listen again on \(endpoint)")
                if endpoint.hasPrefix("ipc://") { thread.scheduleTimer(after: .milliseconds(250)) { checkSocketFile() } }
            } catch ZeroMQError.addressInUse where .now < deadline {
                thread.scheduleTimer(after: .milliseconds(5)) { attempt() }
            } catch {
                logger.critical(
                    "the updates socket could not bind \(endpoint) again after closing removed keys' connections: \(error); views get no updates")
            }
        }
        func checkSocketFile() {
            guard !FileManager.default.fileExists(atPath: String(endpoint.dropFirst("ipc://".count))) else { return }
            logger.warning("the updates socket's file \(endpoint) vanished after the rebind; binding again")
            try? socket.unbind(endpoint)
            attempt()
        }
        attempt()
    }
}
