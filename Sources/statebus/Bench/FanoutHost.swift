import Foundation
import Logging
import StateBus
import StateBusCommandLine
import StateBusRuntime
import Synchronization

/// The host of the fan-out benchmark, in a process of its own so that its CPU time is its
/// own. It serves ``ViewWorkers/object`` with `properties` integer properties and takes
/// commands on standard input, one per line:
///
/// - `churn N`: change N properties every millisecond from now on (0 stops).
/// - `publish N`: make N changes as fast as it can, one batch each; prints
///   `bench published last=SEQ start=NS` (NS: ``MonotonicClock``).
/// - `cpu`: prints `bench cpu ns=… at=…`, the CPU time the process has used so far and when
///   (``MonotonicClock``).
enum FanoutHost {
    static func serve(properties: Int, churnPerMillisecond: Int) async throws {
        let folder = try ScratchFolder()
        defer { folder.remove() }
        var logger = Logger(label: "statebus.bench.fanout")
        logger.logLevel = .warning
        let definitions = (0..<properties).map { PropertyDefinition(HostWorker.propertyName($0), kind: .int, default: .int(0)) }
        let host = try await StateHost(
            objects: [ObjectDefinition(ViewWorkers.object, properties: definitions)],
            configuration: HostConfiguration(name: "fanout", controlEndpoint: folder.endpoint("host.control"), persistence: .disabled, logger: logger)
        )
        defer { host.stop() }
        let churn = Atomic<Int>(churnPerMillisecond)
        WorkerLine.emit("ready", ["control": host.controlEndpoint])
        let churner = Task {
            var next = 0
            var value: Int64 = 0
            while !Task.isCancelled {
                let count = churn.load(ordering: .relaxed)
                if count > 0 {
                    var changes: [PropertyChange] = []
                    for _ in 0..<count {
                        value += 1
                        changes.append(PropertyChange(HostWorker.propertyName(next), to: .int(value)))
                        next = (next + 7919) % properties
                    }
                    _ = try? host.apply(changes, to: ViewWorkers.object)
                }
                try? await Task.sleep(for: .milliseconds(1))  // pacing the load, not synchronisation
            }
        }
        defer { churner.cancel() }
        await onThreadOfItsOwn(named: "bench-fanout-commands") {
            var value: Int64 = 1_000_000_000
            while let line = readLine() {
                let words = line.split(separator: " ")
                switch (words.first, words.count > 1 ? Int(words[1]) : nil) {
                case ("churn"?, let count?):
                    churn.store(count, ordering: .relaxed)
                case ("publish"?, let count?):
                    let start = MonotonicClock.now()
                    var last: UInt64 = 0
                    for index in 0..<count {
                        value += 1
                        last = (try? host.update(HostWorker.propertyName(index % properties), to: .int(value), in: ViewWorkers.object)) ?? last
                    }
                    WorkerLine.emit("published", ["last": last, "start": start])
                case ("cpu"?, _):
                    var spec = timespec()
                    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &spec)
                    WorkerLine.emit("cpu", ["ns": UInt64(spec.tv_sec) * 1_000_000_000 + UInt64(spec.tv_nsec), "at": MonotonicClock.now()])
                default:
                    continue
                }
            }
        }
    }
}
