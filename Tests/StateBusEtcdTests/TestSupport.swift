import Foundation
import Logging
import StateBusRuntime
import Testing

@testable import StateBusEtcd

/// The tests' logger: warnings and worse, on standard error.
let testLogger: Logger = {
    var logger = Logger(label: "statebus.etcd.tests")
    logger.logLevel = .warning
    return logger
}()

/// A wait that ran out of time, naming what was awaited.
struct WaitTimeout: Error, CustomStringConvertible {
    let description: String
}

/// Polls `condition` every 10 ms until it holds; the deadline is generous because the machine
/// running the tests may be busy.
func waitUntil(_ what: String, timeout: Duration = .seconds(15), _ condition: () async throws -> Bool) async throws {
    let deadline = ContinuousClock.now + timeout
    while true {
        if try await condition() { return }
        guard ContinuousClock.now < deadline else { throw WaitTimeout(description: "timed out after \(timeout) waiting for \(what)") }
        try await Task.sleep(for: .milliseconds(10))  // between two looks at a condition with no signal of its own
    }
}

/// Starts an etcd and a client of it, runs `body`, and shuts both down, also on failure.
func withEtcdClient<T>(
    requestTimeout: Duration = .seconds(2), maximumWatchBacklogBytes: Int = 16 << 20, _ body: (EtcdTestServer, EtcdClient) async throws -> T
) async throws -> T {
    try await EtcdTestServer.withEtcd(logger: testLogger) { server in
        let client = try EtcdClient(
            endpoints: [server.endpoint], requestTimeout: requestTimeout, logger: testLogger, maximumWatchBacklogBytes: maximumWatchBacklogBytes)
        do {
            let result = try await body(server, client)
            await client.shutdown()
            return result
        } catch {
            await client.shutdown()
            throw error
        }
    }
}

/// Records an election's events, with the instant each arrived, from a task of its own.
final class EventRecorder: Sendable {
    private final class Log: Sendable {
        let entries = Locked<[(event: LeaderElection.Event, at: ContinuousClock.Instant)]>([])
    }
    private let log = Log()
    private let task: Locked<Task<Void, Never>?> = Locked(nil)
    let name: String

    init(_ election: LeaderElection, name: String) {
        self.name = name
        let events = election.events()
        let task = Task { [log] in
            for await event in events {
                log.entries.withLock { $0.append((event, .now)) }
            }
        }
        self.task.withLock { $0 = task }
    }

    var events: [LeaderElection.Event] { log.entries.withLock { $0.map(\.event) } }

    /// The instant of the first event after `index` that matches.
    func firstTime(after index: Int = 0, where matches: (LeaderElection.Event) -> Bool) -> ContinuousClock.Instant? {
        log.entries.withLock { list in list.dropFirst(index).first { matches($0.event) }?.at }
    }

    /// Waits for an event after the first `index` that matches, and returns it.
    @discardableResult
    func waitFor(
        _ what: String, after index: Int = 0, timeout: Duration = .seconds(15), _ matches: @escaping (LeaderElection.Event) -> Bool
    ) async throws -> LeaderElection.Event {
        var found: LeaderElection.Event?
        try await waitUntil("\(name): \(what) (events so far: \(events))", timeout: timeout) {
            found = log.entries.withLock { list in list.dropFirst(index).first { matches($0.event) }?.event }
            return found != nil
        }
        return found!
    }

    var count: Int { log.entries.withLock { $0.count } }

    func stop() { task.withLock { $0?.cancel() } }
}

extension LeaderElection.Event {
    var isLeading: Bool { if case .leading = self { true } else { false } }
    var isFollowing: Bool { if case .following = self { true } else { false } }
    var isSteppedDown: Bool { if case .steppedDown = self { true } else { false } }
    var stepDownReason: String? { if case .steppedDown(let reason) = self { reason } else { nil } }
    var leadership: LeaderElection.Leadership? { if case .leading(let leadership) = self { leadership } else { nil } }
}

/// The bytes of a UTF-8 string.
func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

/// The index of the cluster member that is etcd's raft leader now, from each member's
/// `/v3/maintenance/status` (its own member ID in the header, and the leader's ID).
func raftLeaderIndex(of cluster: EtcdTestCluster) async throws -> Int {
    for (index, endpoint) in cluster.endpoints.enumerated() {
        let body = try await etcdHTTP(endpoint + "/v3/maintenance/status", post: "{}").body
        guard let status = try JSONSerialization.jsonObject(with: body) as? [String: Any],
            let header = status["header"] as? [String: Any], let member = header["member_id"] as? String,
            let leader = status["leader"] as? String
        else { continue }
        if member == leader { return index }
    }
    throw WaitTimeout(description: "no member of \(cluster.endpoints) says it is the raft leader")
}

/// One HTTP request to etcd outside the client's API (its metrics, maintenance calls), sent
/// the way the client sends its own: a `POST` of `body` when it is given, a `GET` otherwise.
func etcdHTTP(_ url: String, post body: String? = nil) async throws -> (status: Int, body: Data) {
    let transfers = try HTTPTransfers()
    defer { transfers.shutdown() }
    let request = HTTPRequest(
        method: body == nil ? .get : .post, url: url, body: Array((body ?? "").utf8), connectTimeout: .seconds(5), timeout: .seconds(5))
    return try await transfers.exchange(request, limit: 4 << 20)
}
