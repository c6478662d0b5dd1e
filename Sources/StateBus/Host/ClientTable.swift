import ZeroMQ

/// What the host knows of each connection on its control socket: the view id its hello
/// bound to it, replies waiting for room in the socket, and requests parked behind them.
///
/// **Identity.** The control socket gives every connection an id of its own (views no
/// longer choose their routing id), and a hello binds the view id it names to that
/// connection. Another connection that names a bound view id is refused (`viewIDInUse`)
/// unless it shows the binding's session token (the same replica, reconnecting) or the
/// binding's connection has been silent for the lease or is closed (`admit` asks the
/// socket). So one replica's answers can never be routed to another. A write naming a view
/// id is applied only from the connection bound to it (``admitsWrite(viewID:from:)``).
///
/// **Back-pressure.** A reply the socket will not take (the client does not read) waits in
/// the client's queue, in order, and the client's further requests wait behind it: the
/// host does not handle a client's requests until that client's replies drain. Past
/// ``HostConfiguration/maxClientBacklogBytes`` the client is dropped (its queues freed,
/// its view id unbound, counted and logged) and its connection discarded: whatever it
/// sends on it later is read and thrown away (``DiscardedConnections``); its writes time
/// out on its side.
///
/// Owned by the host's I/O loop thread; not thread-safe.
struct ClientTable {
    /// One connection.
    struct Client {
        /// The view id its hello bound, if any.
        var viewID: String?
        /// Its hello said it is a relay: it writes for the views joined to it.
        var isRelay = false
        /// Its hello said it takes the publication of its own write as the write's
        /// acceptance (`Hello.confirms_by_echo`): an accepted write published at once gets
        /// no answer.
        var confirmsByEcho = false
        /// The node name its hello gave ("" when none), for the list of connected views.
        var nodeName = ""
        /// The authorized key's name, on a host with keys ("" otherwise).
        var keyName = ""
        /// When its hello bound its view id.
        var boundSince: ContinuousClock.Instant?
        /// When it last sent anything.
        var lastSeen: ContinuousClock.Instant
        /// Replies that the socket did not take yet, oldest first.
        var replies: [[UInt8]] = []
        /// Requests received while replies waited, oldest first.
        var parked: [ZeroMQ.Message] = []
        /// What both queues hold.
        var backlogBytes = 0

        var isBacklogged: Bool { !replies.isEmpty || !parked.isEmpty }
    }

    /// A view id's binding to a connection.
    struct Binding {
        var identity: [UInt8]
        /// Shown by the same replica when it says hello again from a new connection.
        var token: [UInt8]
    }

    /// What a hello naming a view id gets.
    enum HelloOutcome: Equatable {
        /// Bound (or bound again) to this connection; the welcome carries the token.
        case bound(token: [UInt8])
        /// Another live connection holds the view id.
        case inUse
    }

    private(set) var clients: [[UInt8]: Client] = [:]
    private var bindings: [String: Binding] = [:]
    /// Connections with queued replies or parked requests.
    private(set) var backlogged: Set<[UInt8]> = []
    /// Connections dropped for their backlog: read on, never handled again.
    private var discarded = DiscardedConnections()
    /// The most connections remembered; the longest silent ones without a backlog go first.
    let maximumClients: Int
    /// How long a view id stays bound to a silent connection.
    let lease: Duration

    init(maximumClients: Int, lease: Duration) {
        self.maximumClients = maximumClients
        self.lease = lease
    }

    /// Records that a connection sent something.
    mutating func touch(_ identity: [UInt8], now: ContinuousClock.Instant = .now) {
        if clients[identity] == nil, clients.count >= maximumClients { evictSilent(now: now) }
        clients[identity, default: Client(lastSeen: now)].lastSeen = now
    }

    /// Binds a view id to a connection, as its hello asks.
    /// - Parameter token: the token the hello showed (empty: none).
    mutating func hello(viewID: String, from identity: [UInt8], token: [UInt8], now: ContinuousClock.Instant = .now) -> HelloOutcome {
        if let binding = bindings[viewID], binding.identity != identity {
            let holderSilentSince = clients[binding.identity]?.lastSeen
            let holderAlive = holderSilentSince.map { now - $0 < lease } ?? false
            guard !holderAlive || (!token.isEmpty && token == binding.token) else { return .inUse }
            clients[binding.identity]?.viewID = nil
        }
        if let previous = clients[identity]?.viewID, previous != viewID, bindings[previous]?.identity == identity {
            bindings[previous] = nil
        }
        // The same connection saying hello again keeps its token; a new binding gets a new one.
        let kept = bindings[viewID].flatMap { $0.identity == identity ? $0.token : nil }
        let token = kept ?? Self.newToken()
        bindings[viewID] = Binding(identity: identity, token: token)
        if clients[identity]?.viewID != viewID { clients[identity, default: Client(lastSeen: now)].boundSince = now }
        clients[identity, default: Client(lastSeen: now)].viewID = viewID
        return .bound(token: token)
    }

    /// Records what a hello said about its connection, for ``connectedViews(now:limit:)``.
    mutating func describe(_ identity: [UInt8], nodeName: String) {
        clients[identity]?.nodeName = nodeName
    }

    /// Records the name of the authorized key a connection's hello came with.
    mutating func noteKeyName(_ keyName: String, of identity: [UInt8]) {
        clients[identity]?.keyName = keyName
    }

    /// A view's goodbye: forgets its connection at once, so its view id is free and it
    /// leaves the list of connected views. A goodbye naming a view id this connection does
    /// not hold changes nothing.
    mutating func goodbye(viewID: String, from identity: [UInt8]) {
        guard !viewID.isEmpty, clients[identity]?.viewID == viewID, bindings[viewID]?.identity == identity else { return }
        drop(identity)
    }

    /// How many connections ``connectedViews(now:limit:)`` would list.
    func connectedCount(now: ContinuousClock.Instant = .now) -> Int {
        clients.values.count { $0.viewID != nil && now - $0.lastSeen < lease }
    }

    /// Bytes of replies and requests waiting for every client that does not read.
    var totalBacklogBytes: Int { backlogged.reduce(0) { $0 + (clients[$1]?.backlogBytes ?? 0) } }

    /// The connections whose hello bound a view id and that were heard from within the
    /// lease, longest connected first, at most `limit` of them.
    /// - Returns: the listed ones, and how many more there are.
    func connectedViews(now: ContinuousClock.Instant = .now, limit: Int = ConnectedView.listLimit) -> ConnectedView.ViewList {
        let live = clients.values.compactMap { client -> ConnectedView? in
            guard let viewID = client.viewID, now - client.lastSeen < lease else { return nil }
            return ConnectedView(
                viewID: viewID, nodeName: client.nodeName, isRelay: client.isRelay, connectedFor: now - (client.boundSince ?? client.lastSeen),
                silentFor: now - client.lastSeen, keyName: client.keyName)
        }
        let sorted = live.sorted { ($0.connectedFor, $1.viewID) > ($1.connectedFor, $0.viewID) }
        return ConnectedView.ViewList(views: Array(sorted.prefix(limit)), omitted: max(0, sorted.count - limit))
    }

    /// What a write naming a view id gets.
    enum WriteAdmission: Equatable {
        /// The view id is bound to this connection (or the write names none).
        case admitted
        /// Nobody holds the view id here: the connection has not said hello to this host.
        case notJoined
        /// Another connection holds the view id.
        case heldByAnother
    }

    /// Unbinds one view id: its next write must follow a new hello.
    mutating func unbind(viewID: String) {
        guard let binding = bindings.removeValue(forKey: viewID) else { return }
        if clients[binding.identity]?.viewID == viewID { clients[binding.identity]?.viewID = nil }
    }

    /// Unbinds every view id: each view must say hello again before it writes (a relay
    /// whose upstream connection was rebuilt, so no later write overtakes an earlier one).
    mutating func unbindAll() {
        bindings.removeAll()
        for identity in clients.keys { clients[identity]?.viewID = nil }
    }

    /// Marks a connection whose hello bound a view id as a relay's.
    mutating func markRelay(_ identity: [UInt8]) {
        clients[identity]?.isRelay = true
    }

    /// Records whether the connection's latest hello asked for confirmation by echo (a
    /// relay's never does: it answers its own views with the host's answers).
    mutating func setConfirmsByEcho(_ confirms: Bool, of identity: [UInt8]) {
        let isRelay = clients[identity]?.isRelay == true
        clients[identity]?.confirmsByEcho = confirms && !isRelay
    }

    /// Whether the connection has confirmation by echo (its welcome says so).
    func grantsConfirmsByEcho(to identity: [UInt8]) -> Bool { clients[identity]?.confirmsByEcho == true }

    /// Whether an accepted write from this connection, naming `viewID`, is confirmed by its
    /// publication alone: the connection asked for it and its hello bound that view id, so
    /// the view recognises the batch's origin as its own.
    /// Write id 0 is never taken for an echo (it marks the host's own batches).
    func confirmsByEcho(viewID: String, writeID: UInt64, from identity: [UInt8]) -> Bool {
        guard !viewID.isEmpty, writeID != 0, let client = clients[identity] else { return false }
        return client.confirmsByEcho && client.viewID == viewID
    }

    /// Whether a write naming `viewID` may come from this connection: only from the
    /// connection a hello to this host bound it to.
    ///
    /// A write never binds a view id by itself. ZeroMQ reconnects a view's socket underneath
    /// it, to a restarted host or after a dropped connection, and sends what was queued on
    /// it; had those writes been applied, the writes that were lost in between (sent again
    /// only after the view's next hello) would have been applied after later ones. Refused,
    /// they tell the view to say hello again and send its unanswered writes, in order.
    func admitsWrite(viewID: String, from identity: [UInt8]) -> WriteAdmission {
        guard !viewID.isEmpty else { return .admitted }
        // A relay binds its views' ids downstream and writes for them on its one connection.
        if clients[identity]?.isRelay == true, clients[identity]?.viewID != nil { return .admitted }
        guard let binding = bindings[viewID] else { return .notJoined }
        return binding.identity == identity ? .admitted : .heldByAnother
    }

    /// The view id bound to a connection.
    func viewID(of identity: [UInt8]) -> String? { clients[identity]?.viewID }

    /// The connection a view id is bound to.
    func holder(of viewID: String) -> [UInt8]? { bindings[viewID]?.identity }

    /// Whether the connection has replies or requests waiting.
    func isBacklogged(_ identity: [UInt8]) -> Bool { backlogged.contains(identity) }

    /// Queues a reply the socket did not take. - Returns: the client's backlog in bytes.
    mutating func queueReply(_ bytes: [UInt8], to identity: [UInt8]) -> Int {
        clients[identity, default: Client(lastSeen: .now)].replies.append(bytes)
        clients[identity]!.backlogBytes += bytes.count
        backlogged.insert(identity)
        return clients[identity]!.backlogBytes
    }

    /// Parks a request behind the client's queued replies. - Returns: the backlog in bytes.
    mutating func park(_ request: ZeroMQ.Message, from identity: [UInt8]) -> Int {
        clients[identity, default: Client(lastSeen: .now)].parked.append(request)
        clients[identity]!.backlogBytes += request.count
        backlogged.insert(identity)
        return clients[identity]!.backlogBytes
    }

    /// The oldest queued reply of a client, if any.
    func firstReply(of identity: [UInt8]) -> [UInt8]? { clients[identity]?.replies.first }

    /// Removes the oldest queued reply (it was sent).
    mutating func removeFirstReply(of identity: [UInt8]) {
        guard let reply = clients[identity]?.replies.first else { return }
        clients[identity]!.replies.removeFirst()
        clients[identity]!.backlogBytes -= reply.count
        if clients[identity]?.isBacklogged == false { backlogged.remove(identity) }
    }

    /// Takes the requests parked behind replies that have now drained.
    mutating func takeParked(of identity: [UInt8]) -> [ZeroMQ.Message] {
        guard let client = clients[identity], client.replies.isEmpty, !client.parked.isEmpty else { return [] }
        let parked = client.parked
        clients[identity]!.parked = []
        clients[identity]!.backlogBytes -= parked.reduce(0) { $0 + $1.count }
        backlogged.remove(identity)
        return parked
    }

    /// Whether what `identity` sends is thrown away unread (it was dropped for its backlog).
    func discards(_ identity: [UInt8]) -> Bool { discarded.contains(identity) }

    /// Forgets a connection that does not read its replies, and throws away whatever it
    /// sends from now on. - Returns: the replies and requests that were waiting.
    @discardableResult
    mutating func discard(_ identity: [UInt8]) -> (replies: Int, requests: Int) {
        discarded.insert(identity)
        return drop(identity)
    }

    /// Forgets a connection (gone, or dropped for its backlog): frees its queues and its
    /// view id. - Returns: the replies and requests that were waiting.
    @discardableResult
    mutating func drop(_ identity: [UInt8]) -> (replies: Int, requests: Int) {
        guard let client = clients.removeValue(forKey: identity) else { return (0, 0) }
        backlogged.remove(identity)
        if let viewID = client.viewID, bindings[viewID]?.identity == identity { bindings[viewID] = nil }
        return (client.replies.count, client.parked.count)
    }

    /// Forgets the connections silent the longest, keeping those with a backlog, until
    /// there is room for one more.
    private mutating func evictSilent(now: ContinuousClock.Instant) {
        let overflow = clients.count - maximumClients + 1
        guard overflow > 0 else { return }
        let silent = clients.filter { !$0.value.isBacklogged }.sorted { $0.value.lastSeen < $1.value.lastSeen }
        // Evict a tenth at once, so a flood of new connections does not sort every time.
        for (identity, _) in silent.prefix(max(overflow, maximumClients / 10)) { drop(identity) }
    }

    private static func newToken() -> [UInt8] {
        var generator = SystemRandomNumberGenerator()
        return (0..<16).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
    }
}
