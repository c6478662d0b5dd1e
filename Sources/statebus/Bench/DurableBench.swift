import Foundation
import StateBus
import StateBusEtcd
import StateBusHA
import StateBusLaunch

/// Durable writes: a view writes a persisted property; each write is acknowledged only once
/// committed: to the host's SQLite database (WAL, `synchronous=FULL`), or to etcd by the
/// leader of a high-availability group. The host runs in the bench process with its data in
/// a fresh temporary folder, so its commit counter (``HostStatistics/persistenceCommits``:
/// one fsync, or one etcd transaction, each) is read directly.
struct DurableBench {
    /// One run's figures.
    struct Outcome: Sendable {
        var writes: Int
        var window: Int
        var writesPerSecond: Double
        var commits: Int
        /// Every write was acknowledged, and the host holds the last one.
        var complete: Bool
        var problem: String?
    }

    let writes: Int
    /// Writes in flight at once: 1 waits for each acknowledgement before the next write.
    let window: Int
    /// Where the host commits: its SQLite file, or etcd as the leader of a group.
    var store: DurableStore = .sqlite

    /// Where a durable write is committed.
    enum DurableStore: Sendable {
        /// The host's SQLite database (WAL, `synchronous=FULL`).
        case sqlite
        /// etcd, a single member started for the run, behind the leader's fencing check.
        case etcd
    }

    func run() async throws -> Outcome {
        let folder = try ScratchFolder()
        defer { folder.remove() }
        let objects = [
            ObjectDefinition(ViewWorkers.object, properties: [PropertyDefinition("durable", kind: .int, default: .int(0), persisted: true)])
        ]
        let configuration = HostConfiguration(
            name: "bench", controlEndpoint: folder.endpoint("host.control"), persistence: .file("\(folder.path)/bench.sqlite"),
            logger: BenchLogger.quiet)
        switch store {
        case .sqlite:
            let host = try await StateHost(objects: objects, configuration: configuration)
            defer { host.stop() }
            return try await measure(host)
        case .etcd:
            let etcd = try await LocalEtcd.start(in: folder.path, isHealthy: EtcdClient.isHealthy)
            defer { etcd.process.terminate(grace: .seconds(1)) }
            let group = try await HighAvailabilityHost(
                objects: objects, configuration: configuration, highAvailability: HighAvailability(etcdEndpoints: [etcd.endpoint], group: "bench"))
            do {
                guard let host = await group.leadingHost else { throw BenchError("the only host of the bench's group does not lead") }
                let outcome = try await measure(host)
                await group.stop()
                return outcome
            } catch {
                await group.stop()
                throw error
            }
        }
    }

    /// Has a writer process write to `host` and times it.
    private func measure(_ host: StateHost) async throws -> Outcome {
        let workers = WorkerGroup()
        defer { workers.terminateAll() }
        let commitsBefore = host.statistics.persistenceCommits
        let writer = try workers.start(
            "durable", ["--control", host.controlEndpoint, "--count", "\(writes)", "--window", "\(window)"], name: "durable writer")
        let result = try await WorkerGroup.line("result", from: writer, timeout: .seconds(600))
        let commits = host.statistics.persistenceCommits - commitsBefore
        let seconds = Double(result.uint("elapsed") ?? 0) / 1e9
        let finalOK = host.value(of: "durable", in: ViewWorkers.object) == .int(Int64(writes))
        let complete = result.bool("ok") && finalOK
        return Outcome(
            writes: writes, window: window,
            writesPerSecond: seconds > 0 ? Double(result.int("accepted") ?? 0) / seconds : 0,
            commits: commits, complete: complete,
            problem: complete
                ? nil
                : "acknowledged \(result.fields["accepted"] ?? "?") of \(writes) (first error: \(result.fields["error"] ?? "?")); host holds the last write: \(finalOK)"
        )
    }
}
