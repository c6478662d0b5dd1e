import Foundation
import Histogram

/// The times one process of the echo benchmark took, one per write (`times[n - 1]` for the
/// write of value `n`), written to a file so that another process's times can be set
/// against them: a writer's send times and an observer's arrival times.
enum EchoTimes {
    /// Writes `times` as little-endian 64-bit nanoseconds.
    static func write(_ times: [UInt64], to path: String) throws {
        let data = times.withUnsafeBufferPointer { Data(buffer: $0) }
        try data.write(to: URL(fileURLWithPath: path))
    }

    /// Reads what ``write(_:to:)`` wrote.
    static func read(_ path: String) throws -> [UInt64] {
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        return data.withUnsafeBytes { Array($0.bindMemory(to: UInt64.self)) }
    }

    /// The latency of each write after the first `warmup`: its arrival minus its send.
    /// - Throws: `BenchError` when a write has no arrival, or arrived before it was sent.
    static func latencies(sent: [UInt64], arrived: [UInt64], skipping warmup: Int) throws -> Histogram<UInt64> {
        guard sent.count == arrived.count, sent.count > warmup else {
            throw BenchError("the writer recorded \(sent.count) writes, the observer \(arrived.count) arrivals")
        }
        var histogram = Histogram<UInt64>(highestTrackableValue: 60_000_000_000, numberOfSignificantValueDigits: .three)
        for index in warmup..<sent.count {
            guard arrived[index] >= sent[index], arrived[index] != 0 else {
                throw BenchError("write \(index + 1) arrived at \(arrived[index]), before it was sent at \(sent[index])")
            }
            histogram.record(arrived[index] - sent[index])
        }
        return histogram
    }

    /// The share of the writes after the first `warmup` that `arrived` before `other`: for
    /// the echo at another view, which process the host's copies reached first.
    /// - Throws: `BenchError` when the two hold different numbers of writes.
    static func shareArrivedFirst(_ arrived: [UInt64], before other: [UInt64], skipping warmup: Int) throws -> Double {
        guard arrived.count == other.count, arrived.count > warmup else {
            throw BenchError("the observer recorded \(arrived.count) arrivals, the writer \(other.count) own copies")
        }
        let first = (warmup..<arrived.count).count { arrived[$0] < other[$0] }
        return Double(first) / Double(arrived.count - warmup)
    }
}
