import Foundation
import StateBusWire
import Testing
import ZeroMQ

@testable import StateBus

/// `ClientTable`'s rules, one example each: who may hold a view id and for how long, what
/// `admit` refuses, which clients are forgotten, what the list of connected views shows, how
/// a client's replies and parked requests drain, and who may write and be answered by echo.
/// `ClientTablePropertyTests` checks the same rules over random sequences of events.
@Suite("ClientTable: identity, lease and back-pressure per connection")
struct ClientTableTests {
    static let lease = Duration.seconds(10)
    static let start = ContinuousClock.now

    static func identity(_ number: UInt8) -> [UInt8] { [0, 0, 0, 0x80, number] }

    /// The token of a hello that bound, or `nil`.
    static func token(_ outcome: ClientTable.HelloOutcome) -> [UInt8]? {
        guard case .bound(let token) = outcome else { return nil }
        return token
    }

    /// For `admit`: every connection is still there (its socket would take a message).
    static func allConnected(_ identity: [UInt8]) -> Bool { true }

    static func hello(_ viewID: String, relay: Bool = false, token: [UInt8] = [], nodeName: String = "") -> FollowerRequest.Hello {
        FollowerRequest.Hello(viewID: viewID, nodeName: nodeName, objects: [], sessionToken: Data(token), schemaHash: 0, relay: relay)
    }

    @Test("a live holder keeps its view id; its session token, or a lease of silence, gives it to another connection")
    func lease() throws {
        var table = ClientTable(maximumClients: 100, lease: Self.lease)
        let (first, second, third) = (Self.identity(1), Self.identity(2), Self.identity(3))
        table.touch(first, now: Self.start)
        let firstToken = try #require(Self.token(table.hello(viewID: "v", from: first, token: [], now: Self.start)))
        #expect(firstToken.count == 16)

        // Another connection without the token, or with a wrong one, is refused.
        let later = Self.start + .seconds(1)
        table.touch(second, now: later)
        #expect(table.hello(viewID: "v", from: second, token: [], now: later) == .inUse)
        #expect(table.hello(viewID: "v", from: second, token: Array(repeating: 7, count: 16), now: later) == .inUse)
        #expect(table.admitsWrite(viewID: "v", from: second) == .heldByAnother)
        #expect(table.viewID(of: first) == "v")

        // The same replica on a new connection shows the token: the id moves, with a new token.
        let secondToken = try #require(Self.token(table.hello(viewID: "v", from: second, token: firstToken, now: later)))
        #expect(secondToken != firstToken)
        #expect(table.viewID(of: first) == nil)
        #expect(table.admitsWrite(viewID: "v", from: first) == .heldByAnother)
        #expect(table.admitsWrite(viewID: "v", from: second) == .admitted)
        // The old token no longer works.
        #expect(table.hello(viewID: "v", from: first, token: firstToken, now: later) == .inUse)

        // Silent for just under the lease, the holder keeps it; silent for the lease, it is gone.
        let almost = later + Self.lease - .milliseconds(1)
        table.touch(third, now: almost)
        #expect(table.hello(viewID: "v", from: third, token: [], now: almost) == .inUse)
        let past = later + Self.lease
        table.touch(third, now: past)
        #expect(table.hello(viewID: "v", from: third, token: [], now: past) != .inUse)
        #expect(table.admitsWrite(viewID: "v", from: third) == .admitted)
        #expect(table.admitsWrite(viewID: "v", from: second) == .heldByAnother)
    }

    @Test("a connection saying hello again keeps its token and its time connected; a new view id gets a new token")
    func helloAgain() throws {
        var table = ClientTable(maximumClients: 100, lease: Self.lease)
        let connection = Self.identity(1)
        table.touch(connection, now: Self.start)
        let token = try #require(Self.token(table.hello(viewID: "v", from: connection, token: [], now: Self.start)))
        let later = Self.start + .seconds(3)
        table.touch(connection, now: later)
        #expect(Self.token(table.hello(viewID: "v", from: connection, token: [], now: later)) == token)
        #expect(table.connectedViews(now: later).views.map(\.connectedFor) == [.seconds(3)])

        // Another view id on the same connection frees the first one.
        let other = try #require(Self.token(table.hello(viewID: "w", from: connection, token: token, now: later)))
        #expect(other != token)
        #expect(table.admitsWrite(viewID: "v", from: connection) == .notJoined)
        #expect(table.connectedViews(now: later).views.map(\.connectedFor) == [.zero])
        // Coming back to the first: a binding of its own, so a token of its own.
        let again = try #require(Self.token(table.hello(viewID: "v", from: connection, token: token, now: later)))
        #expect(again != token && again != other)
    }

    @Test("admit refuses a view id too long to subscribe with, a relay without a view id, and a view id in use")
    func admitRefusals() throws {
        var table = ClientTable(maximumClients: 100, lease: Self.lease)
        let (first, second) = (Self.identity(1), Self.identity(2))
        table.touch(first)
        table.touch(second)
        // The join subscription carries the view id after 4 bytes: 60 fit in 64, 61 do not.
        let longest = String(repeating: "a", count: 60)
        let fits = table.admit(Self.hello(longest), from: first, maxSubscriptionBytes: 64, speaker: "host", isConnected: Self.allConnected)
        #expect((try? fits.get())?.count == 16)
        let tooLong = String(repeating: "é", count: 31)  // 62 bytes, 31 characters
        let refusal = try #require(throws: StateBusError.self) {
            try table.admit(Self.hello(tooLong), from: second, maxSubscriptionBytes: 64, speaker: "relay", isConnected: Self.allConnected).get()
        }
        #expect(refusal.code == .badRequest)
        #expect(refusal.message.contains("62 bytes") && refusal.message.contains("this relay takes at most 60"))
        #expect(table.viewID(of: second) == nil)

        let relay = try #require(throws: StateBusError.self) {
            try table.admit(Self.hello("", relay: true), from: second, maxSubscriptionBytes: 64, speaker: "host", isConnected: Self.allConnected)
                .get()
        }
        #expect(relay.code == .badRequest)
        #expect(relay.message.contains("relay"))

        let inUse = try #require(throws: StateBusError.self) {
            try table.admit(Self.hello(longest), from: second, maxSubscriptionBytes: 64, speaker: "host", isConnected: Self.allConnected).get()
        }
        #expect(inUse.code == .viewIDInUse)
        #expect(table.admitsWrite(viewID: longest, from: second) == .heldByAnother)

        // A hello without a view id (a tool's) is welcomed without a token and binds nothing.
        #expect(try table.admit(Self.hello(""), from: second, maxSubscriptionBytes: 64, speaker: "host", isConnected: Self.allConnected).get() == [])
        #expect(table.viewID(of: second) == nil)
        #expect(table.connectedCount() == 1)
    }

    @Test("admit frees a view id whose holder's connection is gone, asking only when the hello would be refused")
    func admitAsksTheHolder() throws {
        var table = ClientTable(maximumClients: 100, lease: Self.lease)
        let (first, second, third) = (Self.identity(1), Self.identity(2), Self.identity(3))
        var asked: [[UInt8]] = []
        var holderThere = false
        func isConnected(_ identity: [UInt8]) -> Bool {
            asked.append(identity)
            return holderThere
        }
        _ = try table.admit(Self.hello("v"), from: first, maxSubscriptionBytes: 64, speaker: "host", isConnected: isConnected).get()
        #expect(asked.isEmpty, "a free view id needs no question")

        // A holder still there keeps its id, and the question went to it.
        holderThere = true
        let refusal = try #require(throws: StateBusError.self) {
            try table.admit(Self.hello("v"), from: second, maxSubscriptionBytes: 64, speaker: "host", isConnected: isConnected).get()
        }
        #expect(refusal.code == .viewIDInUse)
        #expect(asked == [first])
        #expect(table.holder(of: "v") == first)

        // A holder whose connection is gone (closed without a goodbye) frees it at once, well
        // within the lease, and leaves the list of connected views.
        holderThere = false
        let hello = Self.hello("v", nodeName: "again")
        let token = try table.admit(hello, from: third, maxSubscriptionBytes: 64, speaker: "host", isConnected: isConnected).get()
        #expect(token.count == 16)
        #expect(asked == [first, first])
        #expect(table.holder(of: "v") == third)
        #expect(table.viewID(of: first) == nil)
        #expect(table.admitsWrite(viewID: "v", from: first) == .heldByAnother)
        #expect(table.connectedViews().views.map(\.nodeName) == ["again"])
    }

    @Test("admit records a relay and its node name; a relay writes for any view id, and only while bound")
    func admitRelay() throws {
        var table = ClientTable(maximumClients: 100, lease: Self.lease)
        let (relay, view) = (Self.identity(1), Self.identity(2))
        table.touch(relay)
        table.touch(view)
        _ = try table.admit(
            Self.hello("relay-1", relay: true, nodeName: "edge"), from: relay, maxSubscriptionBytes: 256, speaker: "host",
            isConnected: Self.allConnected
        ).get()
        _ = try table.admit(
            Self.hello("view-1", nodeName: "panel"), from: view, maxSubscriptionBytes: 256, speaker: "host", isConnected: Self.allConnected
        ).get()
        let listed = table.connectedViews().views.map { "\($0.viewID) \($0.nodeName) \($0.isRelay)" }.sorted()
        #expect(listed == ["relay-1 edge true", "view-1 panel false"])
        // A relay writes for the views joined to it, whatever their ids; a view only for its own.
        #expect(table.admitsWrite(viewID: "joined-downstream", from: relay) == .admitted)
        #expect(table.admitsWrite(viewID: "view-1", from: relay) == .admitted)
        #expect(table.admitsWrite(viewID: "relay-1", from: view) == .heldByAnother)
        #expect(table.admitsWrite(viewID: "joined-downstream", from: view) == .notJoined)
        // Unbound (its upstream connection rebuilt), the relay must say hello again first.
        table.unbindAll()
        #expect(table.admitsWrite(viewID: "joined-downstream", from: relay) == .notJoined)
        #expect(table.admitsWrite(viewID: "view-1", from: view) == .notJoined)
        #expect(table.connectedCount() == 0)
    }

    @Test("past the bound the longest silent clients are forgotten, a tenth at once; clients with a backlog stay")
    func boundedClients() {
        var table = ClientTable(maximumClients: 20, lease: Self.lease)
        for number in 0..<20 { table.touch(Self.identity(UInt8(number)), now: Self.start + .seconds(number)) }
        _ = table.hello(viewID: "v2", from: Self.identity(2), token: [], now: Self.start + .seconds(20))
        // The two longest silent have replies waiting.
        _ = table.queueReply([1], to: Self.identity(0))
        _ = table.queueReply([1], to: Self.identity(1))

        table.touch(Self.identity(20), now: Self.start + .seconds(21))
        // Room for one made by forgetting two (a tenth of 20): 2 and 3, not 0 and 1.
        let remembered = Set(table.clients.keys)
        #expect(table.clients.count == 19)
        #expect(!remembered.contains(Self.identity(2)) && !remembered.contains(Self.identity(3)))
        #expect(remembered.contains(Self.identity(0)) && remembered.contains(Self.identity(1)) && remembered.contains(Self.identity(20)))
        // A forgotten client's view id is free.
        #expect(table.admitsWrite(viewID: "v2", from: Self.identity(2)) == .notJoined)
        #expect(table.hello(viewID: "v2", from: Self.identity(20), token: [], now: Self.start + .seconds(21)) != .inUse)

        // When every client has a backlog, none is forgotten: the count passes the bound.
        var full = ClientTable(maximumClients: 3, lease: Self.lease)
        for number in 0..<3 {
            full.touch(Self.identity(UInt8(number)), now: Self.start)
            _ = full.queueReply([1], to: Self.identity(UInt8(number)))
        }
        full.touch(Self.identity(3), now: Self.start + .seconds(1))
        #expect(full.clients.count == 4)
        // The next newcomer forgets the one without a backlog, and only it.
        full.touch(Self.identity(4), now: Self.start + .seconds(2))
        #expect(Set(full.clients.keys) == Set([0, 1, 2, 4].map { Self.identity($0) }))
    }

    @Test("connected views: bound, heard within the lease, longest connected first, at most the limit")
    func connectedViews() {
        var table = ClientTable(maximumClients: 100, lease: Self.lease)
        let now = Self.start + .seconds(30)
        // (connection, view id, bound at, last heard at)
        let clients: [(UInt8, String, Int, Int)] = [(1, "b", 5, 29), (2, "a", 5, 25), (3, "c", 1, 28), (4, "old", 0, 20), (5, "d", 12, 30)]
        for (number, viewID, bound, heard) in clients {
            table.touch(Self.identity(number), now: Self.start + .seconds(bound))
            _ = table.hello(viewID: viewID, from: Self.identity(number), token: [], now: Self.start + .seconds(bound))
            table.touch(Self.identity(number), now: Self.start + .seconds(heard))
        }
        table.touch(Self.identity(6), now: now)  // no hello: not a view
        let list = table.connectedViews(now: now, limit: 3)
        // "old" was last heard exactly one lease ago: gone. Equal times connected go by view id.
        #expect(list.views.map(\.viewID) == ["c", "a", "b"])
        #expect(list.omitted == 1)
        #expect(list.views.map(\.connectedFor) == [.seconds(29), .seconds(25), .seconds(25)])
        #expect(list.views.map(\.silentFor) == [.seconds(2), .seconds(5), .seconds(1)])
        #expect(table.connectedCount(now: now) == 4)
        #expect(table.connectedViews(now: now).views.map(\.viewID) == ["c", "a", "b", "d"])
        // A goodbye takes a view off the list at once, and only its own view id does.
        table.goodbye(viewID: "a", from: Self.identity(1))
        table.goodbye(viewID: "b", from: Self.identity(1))
        #expect(table.connectedViews(now: now).views.map(\.viewID) == ["c", "a", "d"])
        #expect(table.clients[Self.identity(1)] == nil)
    }

    @Test("a client's replies drain in order until the socket is full; its parked requests come back after them")
    func backlogOrder() {
        var table = ClientTable(maximumClients: 100, lease: Self.lease)
        let client = Self.identity(1)
        table.touch(client)
        #expect(table.queueReply([1], to: client) == 1)
        #expect(table.queueReply([2, 2], to: client) == 3)
        #expect(table.park(Message([10, 10, 10]), from: client) == 6)
        #expect(table.queueReply([3, 3, 3, 3], to: client) == 10)
        #expect(table.park(Message([11]), from: client) == 11)
        #expect(table.isBacklogged(client) && table.totalBacklogBytes == 11)
        // Nothing parked comes back while a reply waits before it.
        #expect(table.takeParked(of: client).isEmpty)

        var handed: [[UInt8]] = []
        table.drainBacklog(of: client) { bytes in
            handed.append(bytes)
            return handed.count < 3 ? .sent : .full
        }
        // The third was offered, not taken: it stays first.
        #expect(handed == [[1], [2, 2], [3, 3, 3, 3]])
        #expect(table.firstReply(of: client) == [3, 3, 3, 3])
        #expect(table.totalBacklogBytes == 8)
        #expect(table.takeParked(of: client).isEmpty)

        table.drainBacklog(of: client) { _ in .sent }
        #expect(table.firstReply(of: client) == nil)
        // Replies gone, parked requests still wait: the client is still backlogged.
        #expect(table.isBacklogged(client) && table.totalBacklogBytes == 4)
        #expect(table.takeParked(of: client).map(\.bytes) == [[10, 10, 10], [11]])
        #expect(!table.isBacklogged(client) && table.backlogged.isEmpty && table.totalBacklogBytes == 0)
        #expect(table.takeParked(of: client).isEmpty)
        // Backlogged again later, the client's count starts from nothing.
        #expect(table.queueReply([4, 4], to: client) == 2)
    }

    @Test("a client found gone while draining is forgotten with its queues and its view id")
    func goneWhileDraining() {
        var table = ClientTable(maximumClients: 100, lease: Self.lease)
        let client = Self.identity(1)
        table.touch(client)
        _ = table.hello(viewID: "v", from: client, token: [])
        _ = table.queueReply([1], to: client)
        _ = table.queueReply([2], to: client)
        _ = table.park(Message([3]), from: client)
        var offered = 0
        table.drainBacklog(of: client) { _ in
            offered += 1
            return .gone
        }
        #expect(offered == 1)
        #expect(table.clients[client] == nil && !table.isBacklogged(client) && table.totalBacklogBytes == 0)
        #expect(table.takeParked(of: client).isEmpty)
        #expect(table.admitsWrite(viewID: "v", from: client) == .notJoined)
        // Gone is not discarded: a connection with that id would be handled again.
        #expect(!table.discards(client))
    }

    @Test("a discarded client is forgotten, its view id freed, and what it sends from then on thrown away")
    func discard() {
        var table = ClientTable(maximumClients: 100, lease: Self.lease)
        let (slow, other) = (Self.identity(1), Self.identity(2))
        table.touch(slow)
        table.touch(other)
        _ = table.hello(viewID: "slow", from: slow, token: [])
        _ = table.hello(viewID: "other", from: other, token: [])
        _ = table.queueReply([1, 1], to: slow)
        _ = table.queueReply([2], to: slow)
        _ = table.park(Message([3]), from: slow)
        _ = table.queueReply([4], to: other)

        let dropped = table.discard(slow)
        #expect(dropped.replies == 2 && dropped.requests == 1)
        #expect(table.discards(slow) && !table.discards(other))
        #expect(table.clients[slow] == nil && table.backlogged == [other] && table.totalBacklogBytes == 1)
        #expect(table.admitsWrite(viewID: "slow", from: other) == .notJoined)
        #expect(table.connectedViews().views.map(\.viewID) == ["other"])
        // Discarding again, or a client never seen, changes nothing more.
        let again = table.discard(slow)
        #expect(again.replies == 0 && again.requests == 0)
        #expect(table.discards(slow))
    }

    @Test("a write is admitted only from the connection its view id is bound to")
    func writeAdmission() {
        var table = ClientTable(maximumClients: 100, lease: Self.lease)
        let (first, second) = (Self.identity(1), Self.identity(2))
        table.touch(first)
        table.touch(second)
        // No hello yet: not joined (the write must follow a hello, so it is not applied out of order).
        #expect(table.admitsWrite(viewID: "v", from: first) == .notJoined)
        // A write naming no view id is anonymous: admitted from anyone.
        #expect(table.admitsWrite(viewID: "", from: first) == .admitted)
        _ = table.hello(viewID: "v", from: first, token: [])
        #expect(table.admitsWrite(viewID: "v", from: first) == .admitted)
        #expect(table.admitsWrite(viewID: "v", from: second) == .heldByAnother)
        #expect(table.admitsWrite(viewID: "w", from: first) == .notJoined)
        // Unbound, the view must say hello again; a goodbye of another's id changes nothing.
        table.unbind(viewID: "v")
        #expect(table.admitsWrite(viewID: "v", from: first) == .notJoined)
        _ = table.hello(viewID: "v", from: first, token: [])
        table.goodbye(viewID: "v", from: second)
        #expect(table.admitsWrite(viewID: "v", from: first) == .admitted)
        table.goodbye(viewID: "v", from: first)
        #expect(table.admitsWrite(viewID: "v", from: first) == .notJoined)
    }

    @Test("confirmation by echo: as the hello asked, never to a relay, only for its own view id and a real write id")
    func echoGrants() {
        var table = ClientTable(maximumClients: 100, lease: Self.lease)
        let (view, relay, other) = (Self.identity(1), Self.identity(2), Self.identity(3))
        for identity in [view, relay, other] { table.touch(identity) }
        _ = table.hello(viewID: "v", from: view, token: [])
        table.setConfirmsByEcho(true, of: view)
        _ = table.hello(viewID: "r", from: relay, token: [])
        table.markRelay(relay)
        table.setConfirmsByEcho(true, of: relay)
        _ = table.hello(viewID: "o", from: other, token: [])
        table.setConfirmsByEcho(false, of: other)

        #expect(table.grantsConfirmsByEcho(to: view))
        #expect(table.confirmsByEcho(viewID: "v", writeID: 1, from: view))
        // Write id 0 marks the host's own batches; another view id's origin is not this view's.
        #expect(!table.confirmsByEcho(viewID: "v", writeID: 0, from: view))
        #expect(!table.confirmsByEcho(viewID: "o", writeID: 1, from: view))
        #expect(!table.confirmsByEcho(viewID: "", writeID: 1, from: view))
        #expect(!table.confirmsByEcho(viewID: "v", writeID: 1, from: other))
        // A relay answers its own views with the host's answers: never granted.
        #expect(!table.grantsConfirmsByEcho(to: relay))
        #expect(!table.confirmsByEcho(viewID: "r", writeID: 1, from: relay))
        #expect(!table.grantsConfirmsByEcho(to: other))
        // A later hello asking for none withdraws it.
        table.setConfirmsByEcho(false, of: view)
        #expect(!table.confirmsByEcho(viewID: "v", writeID: 1, from: view))
    }
}
