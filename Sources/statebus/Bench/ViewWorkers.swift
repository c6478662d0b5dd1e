import Foundation
import Histogram
import StateBus
import StateBusCommandLine
import StateBusRuntime
import StateBusWire

/// The StateBus side of the benchmarks that run in a view process. Each joins the bench's
/// host with a ``Replica``, prints `bench ready`, does its work, checks what it saw and
/// prints `bench result`.
enum ViewWorkers {
    /// The object every benchmark host serves.
    static let object = "Bench"

    private static func liveReplica(_ control: String, name: String, cpu: Int32? = nil) async throws -> Replica {
        var configuration = ReplicaConfiguration(nodeName: name)
        configuration.pinnedCPU = cpu
        // The "with keys" rows start the worker with its key files in its environment.
        configuration.security = try EnvironmentValues.process().replicaSecurity()
        let replica = try Replica(object: object, controlEndpoint: control, configuration: configuration)
        try await replica.waitUntilLive(timeout: .seconds(120))
        return replica
    }

    /// Throughput: counts the host's updates of `value` until `updates` more have been
    /// applied than at the join.
    ///
    /// Loss and order check: a replica applies batches strictly in sequence order and
    /// takes a snapshot instead after a gap (``ReplicaStatistics``), so the run counts only if
    /// no snapshot followed the join, exactly `updates` batches were applied, and the final
    /// value is the host's last.
    static func countUpdates(control: String, kind: PayloadKind, updates: Int) async throws {
        let replica = try await liveReplica(control, name: "bench-view")
        defer { replica.close() }
        let start = replica.sequence
        let target = start + UInt64(updates)
        var progress = replica.sequenceChanges.makeAsyncIterator()
        let joined = replica.statistics
        WorkerLine.emit("ready", ["sequence": start])
        var firstAt: UInt64 = 0
        while replica.sequence < target {
            guard await progress.next() != nil else { throw BenchError("the replica closed at sequence \(replica.sequence) of \(target)") }
            if firstAt == 0 { firstAt = MonotonicClock.now() }
        }
        let end = MonotonicClock.now()
        let statistics = replica.statistics
        let applied = statistics.appliedUpdates - joined.appliedUpdates
        let snapshots = statistics.appliedSnapshots - joined.appliedSnapshots
        let finalOK = replica["value"] == kind.value(updates) && replica.sequence == target
        WorkerLine.emit(
            "result",
            [
                "ok": applied == updates && snapshots == 0 && finalOK,
                "applied": applied, "resyncs": snapshots, "final": finalOK,
                "first": firstAt, "end": end
            ])
    }

    /// Echo latency: writes `echo` = 1, 2, 3, … one at a time, on the replica's loop
    /// (``Replica/executor``); each write's time runs from the call to `write` until its
    /// receipt holds the host's verdict (the own confirmation). The next write waits until
    /// the host's broadcast of this one has been applied here too (the replica holds no
    /// unconfirmed write and shows the value), and, given `reports`, until the observing view
    /// has reported it (``ObserverReports``). Send times go to `out` when given, for the
    /// observing view's arrivals, and the times each write's verdict came to `ownCopies`
    /// (with confirmation by echo, the host's copy of the write to this view).
    static func echo(
        control: String, writes: Int, warmup: Int, out: String?, ownCopies: String?, reports: String?, cpu: Int32?
    ) async throws {
        let replica = try await liveReplica(control, name: "bench-echo", cpu: cpu)
        defer { replica.close() }
        let observer = try reports.map(ObserverReports.init(opening:))
        var progress = replica.sequenceChanges.makeAsyncIterator()
        let startSequence = replica.sequence
        WorkerLine.emit("ready", ["sequence": startSequence])
        var histogram = Histogram<UInt64>(highestTrackableValue: 60_000_000_000, numberOfSignificantValueDigits: .three)
        let total = warmup + writes
        var sent = [UInt64](repeating: 0, count: total)
        var confirmedAt = [UInt64](repeating: 0, count: total)
        var accepted = 0
        var wrongValues = 0
        try await withTaskExecutorPreference(replica.executor) {
            for index in 1...total {
                let started = MonotonicClock.now()
                sent[index - 1] = started
                let receipt = replica.write("echo", to: .int(Int64(index)))
                let wasAccepted = (try? await receipt.accepted()) != nil
                if wasAccepted { accepted += 1 }
                let confirmed = MonotonicClock.now()
                confirmedAt[index - 1] = confirmed
                while replica.pendingWriteCount > 0 {
                    guard await progress.next() != nil else { throw BenchError("the replica closed during write \(index)") }
                }
                let shown = replica["echo"] == .int(Int64(index))
                if !shown { wrongValues += 1 }
                if index > warmup { histogram.record(confirmed - started) }
                // A write refused or overtaken never reaches the observer as this value: the
                // round has failed already, and waiting would only add the deadline. The wait
                // blocks the loop, which has nothing else to do between two writes.
                if wasAccepted, shown { try observer?.wait(for: UInt64(index), timeout: .seconds(30)) }
            }
        }
        if let out { try EchoTimes.write(sent, to: out) }
        if let ownCopies { try EchoTimes.write(confirmedAt, to: ownCopies) }
        let inOrder = replica.sequence == startSequence + UInt64(total)
        WorkerLine.emit(
            "result",
            [
                "ok": accepted == total && wrongValues == 0 && inOrder,
                "accepted": accepted, "wrong": wrongValues, "count": histogram.totalCount,
                "p50": histogram.valueAtPercentile(50), "p99": histogram.valueAtPercentile(99),
                "p999": histogram.valueAtPercentile(99.9), "max": histogram.max
            ])
    }

    /// The other view of the echo benchmark: records when each value of `echo` (1, 2, 3, …,
    /// `count`) was applied here, on the replica's loop, reports it to the writer when
    /// `reports` is given (``ObserverReports``), and writes the times to `out`. A value
    /// applied in the same turn as a later one arrived no later than it, and gets its time.
    static func observe(control: String, count: Int, out: String, reports: String?, cpu: Int32?) async throws {
        let replica = try await liveReplica(control, name: "bench-observer", cpu: cpu)
        defer { replica.close() }
        let writer = try reports.map(ObserverReports.init(opening:))
        var progress = replica.sequenceChanges.makeAsyncIterator()
        let joined = replica.statistics
        var arrived = [UInt64](repeating: 0, count: count)
        var seen = 0
        WorkerLine.emit("ready", ["sequence": replica.sequence])
        try await withTaskExecutorPreference(replica.executor) {
            while seen < count {
                guard await progress.next() != nil else { throw BenchError("the replica closed after \(seen) of \(count) values") }
                let now = MonotonicClock.now()
                guard case .int(let value)? = replica["echo"], value > seen, value <= count else { continue }
                for index in seen..<Int(value) { arrived[index] = now }
                seen = Int(value)
                try writer?.report(UInt64(seen))
            }
        }
        try EchoTimes.write(arrived, to: out)
        let resyncs = replica.statistics.appliedSnapshots - joined.appliedSnapshots
        WorkerLine.emit("result", ["ok": resyncs == 0, "seen": seen, "resyncs": resyncs])
    }

    /// Late join: the time from creating the replica to holding the full snapshot, and the
    /// process's memory before and after.
    static func join(control: String, properties: Int) async throws {
        let before = ProcessMemory.read()
        let started = MonotonicClock.now()
        let replica = try await liveReplica(control, name: "bench-join")
        let joined = MonotonicClock.now()
        defer { replica.close() }
        // Memory first, as statebus-bench-view reads it: the list of names is the bench's own cost.
        let after = ProcessMemory.read()
        let count = replica.propertyNames.count
        WorkerLine.emit(
            "result",
            [
                "ok": count == properties, "count": count, "elapsed": joined - started,
                "baseline": before?.residentBytes ?? -1, "peak": after?.peakBytes ?? -1, "resident": after?.residentBytes ?? -1,
                "shared": ProcessMemory.loadsSharedSwiftRuntime.map(String.init) ?? "unknown"
            ])
    }

    /// Durable writes: `writes` writes to the persisted property `durable`, at most
    /// `window` of them unacknowledged at a time; each acknowledgement means committed.
    static func durableWrites(control: String, writes: Int, window: Int) async throws {
        let replica = try await liveReplica(control, name: "bench-durable")
        defer { replica.close() }
        WorkerLine.emit("ready", ["sequence": replica.sequence])
        let started = MonotonicClock.now()
        var inFlight: [WriteReceipt] = []
        var accepted = 0
        var firstError: String?
        func settle(_ receipt: WriteReceipt) async {
            do {
                _ = try await receipt.accepted()
                accepted += 1
            } catch {
                if firstError == nil { firstError = "\(error)" }
            }
        }
        for index in 1...writes {
            inFlight.append(replica.write("durable", to: .int(Int64(index))))
            if inFlight.count >= window { await settle(inFlight.removeFirst()) }
        }
        for receipt in inFlight { await settle(receipt) }
        let elapsed = MonotonicClock.now() - started
        WorkerLine.emit(
            "result",
            [
                "ok": accepted == writes, "accepted": accepted, "elapsed": elapsed,
                "error": (firstError ?? "none").replacingOccurrences(of: " ", with: "_")
            ])
    }
}
