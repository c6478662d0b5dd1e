import Foundation
import StateBus
import StateBusWire
import Testing
import ZeroMQ

/// A request lost with its connection is asked again when the connection comes back, not
/// after the request timeout.
@Suite("Requests lost with a dropped connection")
struct LostHelloTests {
    /// A bare ROUTER bound at `endpoint` in place of a host, which waits at most 20 s for a
    /// message.
    static func standIn(at endpoint: String) throws -> Socket {
        let socket = try Socket(context: try Context(), type: .router)
        try socket.set(.receiveTimeout, Int32(20_000))
        try socket.bind(endpoint)
        return socket
    }

    /// Reads the hello that reached `standIn` (a routing id, then the hello) and closes it
    /// unanswered, as a standby taking the lead closes its socket.
    static func dropHello(at standIn: Socket) throws {
        let hello = try standIn.receiveMultipart()
        #expect(hello.count == 2)
        standIn.close()
    }

    /// Refuses the hello that reached `standIn` as a standby does during an election
    /// (`NOT_LEADER`, naming no leader), and closes once the refusal is out.
    static func refuseHello(at standIn: Socket) throws {
        let hello = try standIn.receiveMultipart()
        let request = try Statebus_V1_Request(serializedBytes: try #require(hello.last).bytes)
        var reply = Statebus_V1_Reply()
        reply.protocolVersion = request.protocolVersion
        reply.requestID = request.requestID
        reply.error.code = .notLeader
        reply.error.message = "this host is a standby, and no leader is known yet"
        try standIn.send(multipart: [hello[0].bytes, try reply.serializedBytes()])
        try standIn.set(.linger, 5_000)
        standIn.close()
    }

    /// A standby refused the hello during an election, so the view holds a retry that opens
    /// a new connection; then the standby took the lead and bound its endpoint anew, and the
    /// view said hello again on its connection come back. That hello is the one to answer:
    /// a retry still waiting would close the connection with the welcome on its way, and
    /// the new leader would hold the view id for a gone connection while the view asks from
    /// a new one. Here the retry would fall due at the next liveness check (one every 3 s),
    /// well after the connection comes back, and the second stand-in must hear one hello.
    @Test("a hello said again on a connection that came back cancels the retry a standby's refusal set")
    func helloOnTheConnectionBackCancelsTheRetry() async throws {
        let folder = Fixtures.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let endpoint = "ipc://\(folder)/control"
        let standby = try Self.standIn(at: endpoint)
        var configuration = ReplicaConfiguration(nodeName: "retry")
        configuration.requestTimeout = .seconds(60)
        configuration.livenessCheckInterval = .seconds(3)
        let replica = try Replica(object: "SharedData", controlEndpoint: "\(endpoint),ipc://\(folder)/other", configuration: configuration)
        defer { replica.close() }
        try Self.refuseHello(at: standby)
        let leader = try Self.standIn(at: endpoint)
        defer { leader.close() }
        let hello = try leader.receiveMultipart()
        #expect(hello.count == 2)
        // A second hello could only come from a new connection, opened by the retry at the
        // first liveness check after the refusal: within 3 s, or twice that on a busy machine.
        let poller = Poller()
        poller.add(leader, events: .readable)
        #expect(try poller.poll(timeout: .seconds(6)).isEmpty, "a second hello came, from a new connection")
    }

    /// A standby that takes the lead of its group binds its endpoint anew, and a hello it
    /// read as a standby but never answered is lost with its socket. Here a bare ROUTER reads
    /// the view's hello and closes, then a host binds the same endpoint. The view lists two
    /// endpoints and waits 60 s for an answer, so without asking again when its connection
    /// comes back it would join after a minute, or leave for the other (empty) endpoint.
    @Test("a hello read by a socket that closed is said again to the host that binds its endpoint")
    func helloAskedAgainWhenTheConnectionComesBack() async throws {
        let folder = Fixtures.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let endpoint = "ipc://\(folder)/control"
        let standIn = try Self.standIn(at: endpoint)
        var configuration = ReplicaConfiguration(nodeName: "lost-hello")
        configuration.requestTimeout = .seconds(60)
        let replica = try Replica(object: "SharedData", controlEndpoint: "\(endpoint),ipc://\(folder)/other", configuration: configuration)
        defer { replica.close() }
        try Self.dropHello(at: standIn)
        let host = try await Fixtures.host(folder: folder)
        defer { host.stop() }
        try await replica.waitUntilLive(timeout: .seconds(20))
        #expect(replica["counter"] == .int(0))
    }

    /// The same for a relay whose upstream is a group: its hello, read by a socket that
    /// closed, is said again to the host that binds the endpoint, within seconds although
    /// the relay waits 60 s for an answer.
    @Test("a relay's upstream hello read by a socket that closed is said again to the host that binds its endpoint")
    func relayHelloAskedAgainWhenTheConnectionComesBack() async throws {
        let folder = Fixtures.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let endpoint = "ipc://\(folder)/control"
        let standIn = try Self.standIn(at: endpoint)
        var configuration = RelayConfiguration(
            upstream: "\(endpoint),ipc://\(folder)/other", name: "relay", controlEndpoint: "ipc://\(folder)/relay", objects: ["SharedData"])
        configuration.upstreamRequestTimeout = .seconds(60)
        let relay = try await StateRelay(configuration: configuration)
        defer { relay.stop() }
        try Self.dropHello(at: standIn)
        let host = try await Fixtures.host(folder: folder)
        defer { host.stop() }
        try await relay.waitUntilSynced(timeout: .seconds(20))
    }
}
