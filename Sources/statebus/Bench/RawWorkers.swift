import Foundation
import Histogram
import StateBusCommandLine
import StateBusRuntime
import ZeroMQ

/// The raw libzmq baselines' worker side: the same socket types, transports and message
/// sizes as StateBus, with nothing on top. Blocking calls on the worker's own thread.
enum RawWorkers {
    /// The 8-byte sequence number every raw message starts with.
    static func sequence(of message: Message) -> UInt64 {
        message.withUnsafeBytes { $0.count >= 8 ? $0.loadUnaligned(as: UInt64.self) : 0 }
    }

    /// Throughput baseline: a SUB socket receives `count` messages; each must carry the next
    /// sequence number (1, 2, 3, …): a loss or reordering fails the run.
    static func subscribe(endpoint: String, count: Int) throws {
        let context = try Context()
        let subscriber = try Socket(context: context, type: .sub)
        try subscriber.set(.receiveHighWaterMark, 100_000)
        try subscriber.set(.receiveTimeout, 60_000)
        try subscriber.subscribe()
        try subscriber.connect(endpoint)
        WorkerLine.emit("ready", ["endpoint": endpoint])
        let message = Message()
        var expected: UInt64 = 1
        var firstAt: UInt64 = 0
        var inOrder = true
        while expected <= UInt64(count) {
            try subscriber.receive(into: message)
            if firstAt == 0 { firstAt = MonotonicClock.now() }
            guard sequence(of: message) == expected else {
                inOrder = false
                break
            }
            expected += 1
        }
        let end = MonotonicClock.now()
        WorkerLine.emit("result", ["ok": inOrder, "applied": expected - 1, "resyncs": 0, "final": inOrder, "first": firstAt, "end": end])
    }

    /// Echo baselines, one message at a time, each timed from its send: `own` waits for the
    /// ROUTER's copy back on the DEALER; `other` waits for the PUB's copy on this process's
    /// SUB (as a StateBus writer waits for its broadcast), while another process observes,
    /// and, given `reports`, for that process's report of it (``ObserverReports``). Send
    /// times go to `out` for the bench to set against the observer's arrivals, and the times
    /// each own copy came to `ownCopies`.
    ///
    /// Readiness: a PUB drops messages until the subscription has reached it, so `other`
    /// first sends probes until one comes back (retrying after 200 ms without an answer)
    /// and, given `reports`, until the observer has reported one too; only then it
    /// measures. Probes carry sequence 0, which observers report but do not time.
    static func echo(
        control: String, updates: String, path: EchoBench.Path, writes: Int, warmup: Int, size: Int, out: String?, ownCopies: String?,
        reports: String?, cpu: Int32?
    ) throws {
        if let cpu { ThreadAffinity.pinCurrentThread(to: cpu) }
        let observer = try reports.map(ObserverReports.init(opening:))
        let context = try Context(ioThreadCPU: cpu)
        let dealer = try Socket(context: context, type: .dealer)
        try dealer.set(.receiveTimeout, 30_000)
        try dealer.connect(control)
        let subscriber = try Socket(context: context, type: .sub)
        try subscriber.subscribe()
        try subscriber.connect(updates)
        try subscriber.set(.receiveTimeout, 30_000)
        var payload = [UInt8](repeating: 0x2A, count: size)
        func send(_ sequence: UInt64) throws {
            withUnsafeBytes(of: sequence) { payload.replaceSubrange(0..<8, with: $0) }
            try dealer.send(payload)
        }
        let message = Message()
        if path == .other {
            let poller = Poller()
            poller.add(subscriber, events: .readable)
            var connected = false
            var observed = observer == nil
            for _ in 0..<300 where !(connected && observed) {
                try send(0)
                let deadline = ContinuousClock.now + .milliseconds(200)
                while !connected, try !poller.poll(timeout: .milliseconds(200)).isEmpty {
                    try subscriber.receive(into: message)
                    if Self.sequence(of: message) == 0 { connected = true }
                }
                // The observer reports each probe it takes: its subscription has reached the PUB.
                if connected, !observed, let observer { observed = try observer.nextReport(before: deadline) != nil }
            }
            guard connected && observed else {
                throw BenchError(connected ? "the observer took no probe within 60 s" : "no probe came back within 60 s")
            }
        }
        WorkerLine.emit("ready", ["endpoint": control])
        let source = path == .own ? dealer : subscriber
        var histogram = Histogram<UInt64>(highestTrackableValue: 60_000_000_000, numberOfSignificantValueDigits: .three)
        var sent = [UInt64](repeating: 0, count: warmup + writes)
        var copiedAt = [UInt64](repeating: 0, count: warmup + writes)
        var wrong = 0
        for index in 1...(warmup + writes) {
            let sequence = UInt64(index)
            let started = MonotonicClock.now()
            sent[index - 1] = started
            try send(sequence)
            repeat {
                try source.receive(into: message)
                // A probe's copy (sequence 0) may still come after the readiness check.
                if Self.sequence(of: message) != sequence, Self.sequence(of: message) != 0 { wrong += 1 }
            } while Self.sequence(of: message) != sequence
            copiedAt[index - 1] = MonotonicClock.now()
            if index > warmup { histogram.record(copiedAt[index - 1] - started) }
            try observer?.wait(for: sequence, timeout: .seconds(30))
        }
        if let out { try EchoTimes.write(sent, to: out) }
        if let ownCopies { try EchoTimes.write(copiedAt, to: ownCopies) }
        WorkerLine.emit(
            "result",
            [
                "ok": wrong == 0, "accepted": warmup + writes, "wrong": wrong, "count": histogram.totalCount,
                "p50": histogram.valueAtPercentile(50), "p99": histogram.valueAtPercentile(99),
                "p999": histogram.valueAtPercentile(99.9), "max": histogram.max
            ])
    }

    /// The observer of the `other` baseline: a SUB in a process of its own that records when
    /// each message arrived, until message `count`, reports it to the writer when `reports`
    /// is given, and writes the times to `out`.
    static func observe(updates: String, count: Int, out: String, reports: String?, cpu: Int32?) throws {
        if let cpu { ThreadAffinity.pinCurrentThread(to: cpu) }
        let writer = try reports.map(ObserverReports.init(opening:))
        let context = try Context(ioThreadCPU: cpu)
        let subscriber = try Socket(context: context, type: .sub)
        try subscriber.set(.receiveHighWaterMark, 100_000)
        try subscriber.set(.receiveTimeout, 60_000)
        try subscriber.subscribe()
        try subscriber.connect(updates)
        WorkerLine.emit("ready", ["endpoint": updates])
        var arrived = [UInt64](repeating: 0, count: count)
        var seen = 0
        let message = Message()
        while seen < count {
            try subscriber.receive(into: message)
            let now = MonotonicClock.now()
            let sequence = Int(Self.sequence(of: message))
            if sequence == 0 { try writer?.report(0) }  // a probe: this SUB is subscribed
            guard sequence > seen, sequence <= count else { continue }  // a probe, or a repeat
            for index in seen..<sequence { arrived[index] = now }
            seen = sequence
            try writer?.report(UInt64(seen))
        }
        try EchoTimes.write(arrived, to: out)
        WorkerLine.emit("result", ["ok": true, "seen": seen])
    }
}
