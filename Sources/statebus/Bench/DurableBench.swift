import Foundation
import StateBus
import StateBusLaunch

/// Durable writes: a view writes a persisted property; each write is acknowledged only once
/// committed to the host's SQLite database (WAL, `synchronous=FULL`). The host runs in the
/// bench process with a database in a fresh temporary folder, so its commit counter
/// (``HostStatistics/persistenceCommits``, one fsync each) is read directly.
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

    func run() async throws -> Outcome {
        let folder = try ScratchFolder()
        defer { folder.remove() }
        let host = try await StateHost(
            objects: [
                ObjectDefinition(ViewWorkers.object, properties: [PropertyDefinition("durable", kind: .int, default: .int(0), persisted: true)])
            ],
            configuration: HostConfiguration(
                name: "bench", controlEndpoint: folder.endpoint("host.control"), persistence: .file("\(folder.path)/bench.sqlite"),
                logger: BenchLogger.quiet)
        )
        defer { host.stop() }
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
