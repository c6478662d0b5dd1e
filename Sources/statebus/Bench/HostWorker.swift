import Foundation
import Logging
import StateBus
import StateBusCommandLine
import StateBusRuntime
import StateBusWire

/// A StateBus host in a process of its own, for the join and memory benchmarks: its memory
/// is then its own, not mixed with the bench's.
enum HostWorker {
    /// The name of the `index`-th property: fixed width, so every property holds the same
    /// number of bytes.
    static func propertyName(_ index: Int) -> String {
        let digits = String(index)
        return "p" + String(repeating: "0", count: max(0, 6 - digits.count)) + digits
    }

    /// The bytes of state `count` properties hold: names plus 8-byte integer values.
    static func stateBytes(properties count: Int) -> Int { (0..<count).reduce(0) { $0 + propertyName($1).utf8.count + 8 } }

    /// Serves an object of `properties` integer properties in a fresh temporary folder,
    /// prints `bench ready control=…`, and keeps changing `churnPerMillisecond` properties
    /// every millisecond (paced with a sleep: that is load, not synchronisation). Each
    /// `memory` line on standard input is answered with a `bench memory` line.
    static func serve(properties: Int, churnPerMillisecond: Int) async throws {
        let folder = try ScratchFolder()
        defer { folder.remove() }
        var logger = Logger(label: "statebus.bench.host")
        logger.logLevel = .warning
        let definitions = (0..<properties).map { PropertyDefinition(propertyName($0), kind: .int, default: .int(0)) }
        let host = try await StateHost(
            objects: [ObjectDefinition(ViewWorkers.object, properties: definitions)],
            configuration: HostConfiguration(name: "bench", controlEndpoint: folder.endpoint("host.control"), persistence: .disabled, logger: logger)
        )
        defer { host.stop() }
        WorkerLine.emit("ready", ["control": host.controlEndpoint, "state": stateBytes(properties: properties)])
        let churn = Task {
            guard churnPerMillisecond > 0 else { return }
            var next = 0
            var value: Int64 = 0
            while !Task.isCancelled {
                var changes: [PropertyChange] = []
                for _ in 0..<churnPerMillisecond {
                    value += 1
                    changes.append(PropertyChange(propertyName(next), to: .int(value)))
                    next = (next + 7919) % properties
                }
                _ = try? host.apply(changes, to: ViewWorkers.object)
                try? await Task.sleep(for: .milliseconds(1))
            }
        }
        defer { churn.cancel() }
        // Standard input is read on a thread of its own (a blocking read never holds a
        // thread of the cooperative pool); this returns when the bench closes it, and the
        // bench terminates the process anyway.
        await onThreadOfItsOwn(named: "bench-host-commands") {
            while let line = readLine() {
                guard line == "memory" else { continue }
                let memory = ProcessMemory.read()
                WorkerLine.emit(
                    "memory",
                    ["peak": memory?.peakBytes ?? -1, "resident": memory?.residentBytes ?? -1, "sequence": host.sequence(of: ViewWorkers.object) ?? 0]
                )
            }
        }
    }
}
