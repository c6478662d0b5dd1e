import Foundation
import Histogram
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
            if firstAt == 0 { firstAt = BenchClock.now() }
            guard sequence(of: message) == expected else {
                inOrder = false
                break
            }
            expected += 1
        }
        let end = BenchClock.now()
        WorkerLine.emit("result", ["ok": inOrder, "applied": expected - 1, "resyncs": 0, "final": inOrder, "first": firstAt, "end": end])
    }

    /// Echo baseline: DEALER → (bench's ROUTER → PUB) → SUB, one message at a time, each
    /// timed from send to its arrival on the SUB socket.
    ///
    /// Readiness: a PUB drops messages until the subscription has reached it, so the worker
    /// first sends probes until one comes back (retrying after 200 ms without an answer);
    /// only then it measures.
    static func echo(control: String, updates: String, writes: Int, warmup: Int, size: Int) throws {
        let context = try Context()
        let dealer = try Socket(context: context, type: .dealer)
        try dealer.connect(control)
        let subscriber = try Socket(context: context, type: .sub)
        try subscriber.subscribe()
        try subscriber.connect(updates)
        try subscriber.set(.receiveTimeout, 30_000)
        WorkerLine.emit("ready", ["endpoint": updates])
        var payload = [UInt8](repeating: 0x2A, count: size)
        var sequence: UInt64 = 0
        func send() throws {
            sequence += 1
            withUnsafeBytes(of: sequence) { payload.replaceSubrange(0..<8, with: $0) }
            try dealer.send(payload)
        }
        let message = Message()
        let poller = Poller()
        poller.add(subscriber, events: .readable)
        var connected = false
        for _ in 0..<300 where !connected {
            try send()
            while try !poller.poll(timeout: .milliseconds(200)).isEmpty {
                try subscriber.receive(into: message)
                if Self.sequence(of: message) == sequence {
                    connected = true
                    break
                }
            }
        }
        guard connected else { throw BenchError("no probe came back within 60 s") }
        var histogram = Histogram<UInt64>(highestTrackableValue: 60_000_000_000, numberOfSignificantValueDigits: .three)
        var wrong = 0
        for index in 1...(warmup + writes) {
            let started = BenchClock.now()
            try send()
            repeat {
                try subscriber.receive(into: message)
                if Self.sequence(of: message) != sequence { wrong += 1 }
            } while Self.sequence(of: message) != sequence
            if index > warmup { histogram.record(BenchClock.now() - started) }
        }
        WorkerLine.emit(
            "result",
            [
                "ok": wrong == 0, "accepted": warmup + writes, "wrong": wrong, "count": histogram.totalCount,
                "p50": histogram.valueAtPercentile(50), "p99": histogram.valueAtPercentile(99),
                "p999": histogram.valueAtPercentile(99.9), "max": histogram.max
            ])
    }
}
