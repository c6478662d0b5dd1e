import Foundation
import StateBusLaunch

/// Late join and memory: a host process serving `properties` integer properties, changing
/// some of them every millisecond, and a view process that joins it.
///
/// The join time runs, inside the view process, from creating the ``Replica`` (its I/O loop
/// and sockets included) to the replica being live with the full snapshot and every update
/// buffered meanwhile applied. Memory is each process's peak resident set (`VmHWM`) once the
/// view has joined; the view's resident set before it started joining is reported too, as
/// the floor a Swift process starts from.
struct JoinBench {
    /// One join's figures.
    struct Outcome: Sendable {
        var properties: Int
        var joinNanoseconds: Double
        /// The view held every property.
        var complete: Bool
        var viewPeakBytes: Int
        var viewBaselineBytes: Int
        /// The view loaded the Swift runtime and Foundation as shared libraries (a build
        /// without `--static-swift-stdlib`); `nil` when the view could not tell.
        var viewLoadsSharedRuntime: Bool?
        /// The view was `statebus-bench-view`, a view as small as an application's; `false`:
        /// it was not built beside this executable, so the `statebus` tool itself joined.
        var viewIsApplicationSized: Bool
        var hostPeakBytes: Int
        /// Bytes of state held: names plus 8-byte values.
        var stateBytes: Int
        var problem: String?

        /// The joins of one size as one: the join time and each memory figure the median of
        /// the joins' (the lower middle one for an even count, so that a figure is one a
        /// process had); `nil` for no join.
        static func median(of rounds: [Outcome]) -> Outcome? {
            guard var outcome = rounds.first else { return nil }
            func median<T: Comparable>(_ figure: KeyPath<Outcome, T>) -> T { rounds.map { $0[keyPath: figure] }.lowerMedian! }
            outcome.joinNanoseconds = median(\.joinNanoseconds)
            outcome.viewPeakBytes = median(\.viewPeakBytes)
            outcome.viewBaselineBytes = median(\.viewBaselineBytes)
            outcome.hostPeakBytes = median(\.hostPeakBytes)
            return outcome
        }
    }

    let properties: Int
    /// Changes the host makes per millisecond during the join.
    let churn: Int

    func run() async throws -> Outcome {
        let workers = WorkerGroup()
        defer { workers.terminateAll() }
        let host = try workers.start("host", ["--properties", "\(properties)", "--churn", "\(churn)"], name: "host of \(properties)")
        let ready = try await WorkerGroup.line("ready", from: host, timeout: .seconds(300))
        guard let control = ready.fields["control"] else { throw BenchError("the host worker announced no control endpoint") }
        // A view as small as an application's, when it was built (it is, with the package):
        // its memory is then a view's, not the `statebus` tool's.
        let arguments = ["--control", control, "--properties", "\(properties)"]
        let sibling = try workers.startSibling("statebus-bench-view", ["join"] + arguments, as: "joining view")
        let view = try sibling ?? workers.start("join", arguments, name: "joining view")
        let result = try await WorkerGroup.line("result", from: view, timeout: .seconds(300))
        host.send(line: "memory")
        let memory = try await WorkerGroup.line("memory", from: host, timeout: .seconds(60))
        let count = result.int("count") ?? 0
        return Outcome(
            properties: properties,
            joinNanoseconds: Double(result.uint("elapsed") ?? 0),
            complete: result.bool("ok"),
            viewPeakBytes: result.int("peak") ?? -1,
            viewBaselineBytes: result.int("baseline") ?? -1,
            viewLoadsSharedRuntime: ["true": true, "false": false][result.fields["shared"] ?? ""],
            viewIsApplicationSized: sibling != nil,
            hostPeakBytes: memory.int("peak") ?? -1,
            stateBytes: ready.int("state") ?? HostWorker.stateBytes(properties: properties),
            problem: result.bool("ok") ? nil : "the view held \(count) of \(properties) properties"
        )
    }
}
