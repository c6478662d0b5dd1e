import PropertyBased
import Testing
import ZeroMQ

@testable import StateBus

/// `ClientTable` against a plain reference model, over random sequences of what a host's
/// control socket sees: requests, hellos (with no token, the binding's token, or a wrong
/// one), goodbyes, replies the socket did not take, requests parked behind them, drains that
/// end full or find the client gone, drops and discards, a relay unbinding its views, and
/// time passing past the lease.
///
/// What a host relies on, checked after every event for every connection and view id: which
/// connection a view id is bound to (so a write is applied only from it, and a reply reaches
/// only it), which tokens are kept or new, which clients are remembered (at most the bound,
/// the longest silent going first, never one with a backlog), the list of connected views,
/// and each client's queued replies and parked requests, in order, with their bytes.
///
/// Time is given (`now:`), never waited for. `admit` reads the clock itself, so the events
/// bind with `hello(viewID:from:token:now:)` and record what `admit` records of a bound
/// connection; `ClientTableTests` checks `admit`'s refusals.
@Suite("ClientTable against a reference model")
struct ClientTablePropertyTests {
    /// One event: `kind` picks what happens (``actions``), `client` and `view` to whom,
    /// `count` how much, and `elapsed` how many milliseconds passed before it.
    struct Step: Sendable, CustomStringConvertible {
        let kind: Int
        let client: Int
        let view: Int
        let count: Int
        let elapsed: Int

        var description: String { "(\(kind), \(client), \(view), \(count), \(elapsed))" }
    }

    enum Action {
        case request, hello, helloWithToken, helloWithWrongToken, goodbye, unbind, unbindAll, reply, park, drain, drop, discard, wait
    }

    /// The events, weighted by how often each comes.
    static let actions: [Action] = [
        .request, .request, .hello, .hello, .hello, .helloWithToken, .helloWithWrongToken, .goodbye, .unbind, .unbindAll, .reply, .reply,
        .reply, .park, .park, .drain, .drain, .drop, .discard, .wait
    ]
    static let lease = Duration.seconds(10)
    /// More connections than the largest bound, so every bound is passed.
    static let connections = 26
    static let viewIDs = (0..<5).map { "view-\($0)" }
    static let limit = 3

    static let steps = zip(
        Gen.int(in: 0..<actions.count), Gen.int(in: 0..<connections), Gen.int(in: 0..<viewIDs.count), Gen.int(in: 0...40),
        Gen.int(in: 1...4_000)
    )
    .map { Step(kind: $0, client: $1, view: $2, count: $3, elapsed: $4) }
    .array(of: 1...90)

    static func identity(_ client: Int) -> [UInt8] { [0, 0, 0, 0x80, UInt8(client)] }

    @Test("bindings, tokens, the client bound, the list and the backlog follow the rules")
    func randomEvents() async {
        await propertyCheck(count: 60, input: Gen.int(in: 0...2), Self.steps) { bound, steps in
            let maximum = [3, 8, 20][bound]
            var table = ClientTable(maximumClients: maximum, lease: Self.lease)
            var model = ClientTableModel(maximumClients: maximum, lease: Self.lease)
            var now = ContinuousClock.now
            var issued: [[UInt8]] = []
            var serial = 0
            for (index, step) in steps.enumerated() {
                let context = "after step \(index) \(step) of \(steps), at most \(maximum) clients"
                serial += 1
                now += .milliseconds(step.elapsed)
                let identity = Self.identity(step.client)
                let viewID = Self.viewIDs[step.view]
                let action = Self.actions[step.kind]
                // A discarded connection's requests are read and thrown away: never handled.
                guard !model.discarded.contains(identity) || action == .wait || action == .unbind else { continue }
                // Replies go to connections the host knows; requests are parked, and drains
                // tried, where replies wait (when any do), so queues both grow and drain.
                let known = model.clients.keys.sorted { $0.lexicographicallyPrecedes($1) }
                let backlogged = known.filter { model.clients[$0]?.isBacklogged == true }
                switch action {
                case .request:
                    Self.touch(identity, &table, &model, now: now, context)
                case .hello, .helloWithToken, .helloWithWrongToken:
                    Self.touch(identity, &table, &model, now: now, context)
                    let current = model.bindings[viewID]?.token
                    let token: [UInt8]
                    switch action {
                    case .helloWithToken: token = current ?? []
                    case .hello: token = []
                    default:
                        let stale = issued.isEmpty ? nil : issued[step.count % issued.count]
                        token = stale != nil && stale != current ? stale! : Array(repeating: 0xEE, count: 16)
                    }
                    let expected = model.hello(viewID: viewID, from: identity, token: token, now: now)
                    let outcome = table.hello(viewID: viewID, from: identity, token: token, now: now)
                    switch (expected, outcome) {
                    case (.inUse, .inUse):
                        break
                    case (.kept(let kept), .bound(let token)):
                        #expect(token == kept, "\(context): the same connection's hello got a new token")
                        model.bindings[viewID] = (identity, token)
                    case (.new, .bound(let token)):
                        #expect(token.count == 16 && !issued.contains(token), "\(context): a new binding's token \(token) was issued before")
                        issued.append(token)
                        model.bindings[viewID] = (identity, token)
                    default:
                        Issue.record("\(context): hello answered \(outcome), the model \(expected)")
                        return
                    }
                    guard case .bound = outcome else { break }
                    // What `admit` and the host's hello record of a bound connection.
                    if step.count % 7 == 0 {
                        table.markRelay(identity)
                        model.clients[identity]?.isRelay = true
                    }
                    table.describe(identity, nodeName: "node-\(step.client)")
                    model.clients[identity]?.nodeName = "node-\(step.client)"
                    table.noteKeyName("key-\(step.client)", of: identity)
                    model.clients[identity]?.keyName = "key-\(step.client)"
                    let confirms = step.count % 2 == 0
                    table.setConfirmsByEcho(confirms, of: identity)
                    let isRelay = model.clients[identity]?.isRelay == true
                    model.clients[identity]?.confirmsByEcho = confirms && !isRelay
                case .goodbye:
                    Self.touch(identity, &table, &model, now: now, context)
                    // Half the goodbyes name the connection's own view id.
                    let named = step.count % 2 == 0 ? model.clients[identity]?.viewID ?? viewID : viewID
                    table.goodbye(viewID: named, from: identity)
                    model.goodbye(viewID: named, from: identity)
                case .unbind:
                    table.unbind(viewID: viewID)
                    model.unbind(viewID: viewID)
                case .unbindAll:
                    // A relay's upstream connection was rebuilt; rare, since it frees every id.
                    guard step.count < 8 else { break }
                    table.unbindAll()
                    model.unbindAll()
                case .reply:
                    // The host queues a reply only to a connection it knows.
                    guard !known.isEmpty else { break }
                    let target = known[step.client % known.count]
                    let bytes = Array("reply-\(serial)".utf8) + Array(repeating: 0, count: step.count)
                    model.clients[target]?.replies.append(bytes)
                    let backlog = table.queueReply(bytes, to: target)
                    #expect(backlog == model.clients[target]?.backlogBytes, "\(context): the backlog queueReply returned")
                case .park:
                    // The host parks a request only behind queued replies; otherwise it handles it.
                    guard !backlogged.isEmpty else { break }
                    let target = backlogged[step.client % backlogged.count]
                    Self.touch(target, &table, &model, now: now, context)
                    let bytes = Array("request-\(serial)".utf8) + Array(repeating: 1, count: step.count)
                    model.clients[target]?.parked.append(bytes)
                    let backlog = table.park(Message(bytes), from: target)
                    #expect(backlog == model.clients[target]?.backlogBytes, "\(context): the backlog park returned")
                case .drain:
                    // The socket takes `count % 4` replies, then is full, finds the client gone,
                    // or takes every one.
                    let target = backlogged.isEmpty ? identity : backlogged[step.client % backlogged.count]
                    let taken = step.count % 4
                    let ending: ClientTable.Delivery = [.full, .gone, .sent][step.count / 4 % 3]
                    var delivered: [[UInt8]] = []
                    table.drainBacklog(of: target) { bytes in
                        delivered.append(bytes)
                        return delivered.count <= taken ? .sent : ending
                    }
                    let expected = model.drain(target) { $0 < taken ? .sent : ending }
                    #expect(delivered == expected, "\(context): the replies handed to the socket")
                    // As the host does after each drain.
                    let parked = table.takeParked(of: target).map(\.bytes)
                    #expect(parked == model.takeParked(of: target), "\(context): the parked requests handed back")
                case .drop:
                    let counts = table.drop(identity)
                    let expected = model.drop(identity)
                    #expect([counts.replies, counts.requests] == [expected.replies, expected.requests], "\(context): what drop said was waiting")
                case .discard:
                    let counts = table.discard(identity)
                    let expected = model.drop(identity)
                    model.discarded.insert(identity)
                    #expect([counts.replies, counts.requests] == [expected.replies, expected.requests], "\(context): what discard said was waiting")
                case .wait:
                    now += .milliseconds(step.count * 500)
                }
                let mismatches = Self.mismatches(table, model, now: now)
                guard mismatches.isEmpty else {
                    Issue.record("\(context): \(mismatches.prefix(5).joined(separator: "; "))")
                    return
                }
            }
        }
    }

    /// A request arrives: the host touches its connection, which may evict silent ones.
    static func touch(
        _ identity: [UInt8], _ table: inout ClientTable, _ model: inout ClientTableModel, now: ContinuousClock.Instant, _ context: String
    ) {
        let isNew = model.clients[identity] == nil
        table.touch(identity, now: now)
        model.touch(identity, now: now)
        if isNew {
            // The bound: only clients with a backlog are kept past it.
            #expect(table.clients.count <= max(model.maximumClients, table.backlogged.count + 1), "\(context): too many clients")
        }
    }

    /// Where the table and the model disagree, as a reader would say it.
    static func mismatches(_ table: ClientTable, _ model: ClientTableModel, now: ContinuousClock.Instant) -> [String] {
        var found: [String] = []
        func check<T: Equatable>(_ actual: T, _ expected: T, _ what: @autoclosure () -> String) {
            if actual != expected { found.append("\(what()): \(actual), the model \(expected)") }
        }
        check(Set(table.clients.keys), Set(model.clients.keys), "the clients remembered")
        check(table.backlogged, Set(model.clients.filter(\.value.isBacklogged).keys), "the backlogged clients")
        check(table.totalBacklogBytes, model.clients.values.reduce(0) { $0 + $1.backlogBytes }, "the total backlog")
        for client in 0..<connections {
            let identity = identity(client)
            let expected = model.clients[identity]
            check(table.clients[identity]?.lastSeen, expected?.lastSeen, "client \(client) last seen")
            check(table.viewID(of: identity), expected?.viewID, "client \(client)'s view id")
            check(table.isBacklogged(identity), expected?.isBacklogged ?? false, "whether client \(client) is backlogged")
            check(table.firstReply(of: identity), expected?.replies.first, "client \(client)'s first reply")
            check(table.discards(identity), model.discarded.contains(identity), "whether client \(client) is discarded")
            check(table.grantsConfirmsByEcho(to: identity), expected?.confirmsByEcho ?? false, "client \(client)'s echo grant")
            check(table.admitsWrite(viewID: "", from: identity), .admitted, "client \(client) writing without a view id")
            for viewID in viewIDs {
                check(
                    table.admitsWrite(viewID: viewID, from: identity), model.admitsWrite(viewID: viewID, from: identity), "\(viewID) from \(client)")
                check(
                    table.confirmsByEcho(viewID: viewID, writeID: 1, from: identity), expected?.confirmsByEcho == true && expected?.viewID == viewID,
                    "echo for \(viewID) from \(client)")
                check(table.confirmsByEcho(viewID: viewID, writeID: 0, from: identity), false, "echo for write id 0")
            }
        }
        let list = table.connectedViews(now: now, limit: limit)
        check(list, model.connectedViews(now: now, limit: limit), "the connected views")
        check(table.connectedCount(now: now), list.views.count + list.omitted, "the connected count")
        // The rules of the list, as plainly as they are documented.
        check(list.views.allSatisfy { $0.silentFor < lease }, true, "every listed view heard within the lease")
        check(zip(list.views, list.views.dropFirst()).allSatisfy { $0.connectedFor >= $1.connectedFor }, true, "longest connected first")
        return found
    }
}

/// The reference table: what each connection said and was sent, in plain dictionaries and
/// lists, with the rules of `ClientTable`'s documentation.
struct ClientTableModel {
    struct Client {
        var viewID: String?
        var isRelay = false
        var confirmsByEcho = false
        var nodeName = ""
        var keyName = ""
        var boundSince: ContinuousClock.Instant?
        var lastSeen: ContinuousClock.Instant
        var replies: [[UInt8]] = []
        var parked: [[UInt8]] = []

        var isBacklogged: Bool { !replies.isEmpty || !parked.isEmpty }
        var backlogBytes: Int { (replies + parked).reduce(0) { $0 + $1.count } }
    }

    /// What a hello should get.
    enum Hello {
        /// Bound, keeping this token (the same connection said hello again).
        case kept([UInt8])
        /// Bound with a token never given before.
        case new
        /// Refused: another live connection holds the view id.
        case inUse
    }

    let maximumClients: Int
    let lease: Duration
    var clients: [[UInt8]: Client] = [:]
    var bindings: [String: (identity: [UInt8], token: [UInt8])] = [:]
    var discarded: Set<[UInt8]> = []

    init(maximumClients: Int, lease: Duration) {
        self.maximumClients = maximumClients
        self.lease = lease
    }

    /// A connection heard from. A new one past the bound first makes room: the longest silent
    /// clients without a backlog leave, a tenth of the bound at once (at least one).
    mutating func touch(_ identity: [UInt8], now: ContinuousClock.Instant) {
        if clients[identity] == nil, clients.count >= maximumClients {
            let silent = clients.filter { !$0.value.isBacklogged }.sorted { $0.value.lastSeen < $1.value.lastSeen }
            for (gone, _) in silent.prefix(max(clients.count - maximumClients + 1, maximumClients / 10)) { _ = drop(gone) }
        }
        clients[identity, default: Client(lastSeen: now)].lastSeen = now
    }

    /// A hello from a connection just touched. The caller records the binding's token.
    mutating func hello(viewID: String, from identity: [UInt8], token: [UInt8], now: ContinuousClock.Instant) -> Hello {
        if let holder = bindings[viewID], holder.identity != identity {
            let holderLive = clients[holder.identity].map { now - $0.lastSeen < lease } ?? false
            if holderLive, token.isEmpty || token != holder.token { return .inUse }
            clients[holder.identity]?.viewID = nil
            bindings[viewID] = nil
        }
        if let previous = clients[identity]?.viewID, previous != viewID { bindings[previous] = nil }
        if clients[identity]?.viewID != viewID { clients[identity]?.boundSince = now }
        clients[identity]?.viewID = viewID
        return bindings[viewID].map { .kept($0.token) } ?? .new
    }

    mutating func goodbye(viewID: String, from identity: [UInt8]) {
        guard !viewID.isEmpty, clients[identity]?.viewID == viewID else { return }
        _ = drop(identity)
    }

    mutating func unbind(viewID: String) {
        guard let holder = bindings.removeValue(forKey: viewID) else { return }
        clients[holder.identity]?.viewID = nil
    }

    mutating func unbindAll() {
        bindings = [:]
        for identity in clients.keys { clients[identity]?.viewID = nil }
    }

    /// Forgets a connection and frees its view id. - Returns: what was waiting.
    mutating func drop(_ identity: [UInt8]) -> (replies: Int, requests: Int) {
        guard let client = clients.removeValue(forKey: identity) else { return (0, 0) }
        if let viewID = client.viewID { bindings[viewID] = nil }
        return (client.replies.count, client.parked.count)
    }

    /// Hands replies to a socket that answers `delivery(n)` for the n-th, from 0.
    /// - Returns: the replies handed over, in order.
    mutating func drain(_ identity: [UInt8], delivery: (Int) -> ClientTable.Delivery) -> [[UInt8]] {
        var handed: [[UInt8]] = []
        while let reply = clients[identity]?.replies.first {
            let outcome = delivery(handed.count)
            handed.append(reply)
            switch outcome {
            case .sent: clients[identity]?.replies.removeFirst()
            case .full: return handed
            case .gone:
                _ = drop(identity)
                return handed
            }
        }
        return handed
    }

    /// The parked requests, once no reply is queued before them.
    mutating func takeParked(of identity: [UInt8]) -> [[UInt8]] {
        guard let client = clients[identity], client.replies.isEmpty else { return [] }
        clients[identity]?.parked = []
        return client.parked
    }

    func admitsWrite(viewID: String, from identity: [UInt8]) -> ClientTable.WriteAdmission {
        if let client = clients[identity], client.isRelay, client.viewID != nil { return .admitted }
        guard let holder = bindings[viewID] else { return .notJoined }
        return holder.identity == identity ? .admitted : .heldByAnother
    }

    /// Bound and heard within the lease; longest connected first, then by view id.
    func connectedViews(now: ContinuousClock.Instant, limit: Int) -> ConnectedView.ViewList {
        let live = clients.values.filter { $0.viewID != nil && now - $0.lastSeen < lease }
            .map {
                ConnectedView(
                    viewID: $0.viewID!, nodeName: $0.nodeName, isRelay: $0.isRelay, connectedFor: now - $0.boundSince!, silentFor: now - $0.lastSeen,
                    keyName: $0.keyName)
            }
            .sorted { $0.connectedFor != $1.connectedFor ? $0.connectedFor > $1.connectedFor : $0.viewID < $1.viewID }
        return ConnectedView.ViewList(views: Array(live.prefix(limit)), omitted: max(0, live.count - limit))
    }
}
