import ArgumentParser
import Foundation
import StateBus
import StateBusLaunch
import StateBusWire
import Synchronization

/// Small tools every benchmark shares: a clock that means the same in every process, memory
/// figures from `/proc`, the payloads, and the line protocol between the bench and its
/// worker processes.
enum BenchClock {
    /// `CLOCK_MONOTONIC` in nanoseconds: one clock for the whole machine, so a time taken in
    /// the bench process and one taken in a worker can be subtracted.
    static func now() -> UInt64 {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return UInt64(spec.tv_sec) * 1_000_000_000 + UInt64(spec.tv_nsec)
    }
}

/// Resident memory of a process, from `/proc/<pid>/status`.
struct MemoryUsage: Sendable, Codable, Hashable {
    /// Peak resident set (`VmHWM`), in bytes.
    var peakBytes: Int
    /// Current resident set (`VmRSS`), in bytes.
    var residentBytes: Int

    /// Reads the figures of a process (`self` by default).
    /// - Returns: `nil` when `/proc` has no such process or lacks the fields.
    static func read(pid: String = "self") -> MemoryUsage? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return nil }
        func field(_ name: String) -> Int? {
            guard let line = text.split(separator: "\n").first(where: { $0.hasPrefix(name + ":") }) else { return nil }
            let digits = line.split(separator: " ").compactMap { Int($0) }.first
            return digits.map { $0 * 1024 }  // the kernel reports kB
        }
        guard let peak = field("VmHWM"), let resident = field("VmRSS") else { return nil }
        return MemoryUsage(peakBytes: peak, residentBytes: resident)
    }
}

/// The kinds of value the throughput benchmark sends.
enum PayloadKind: String, CaseIterable, Sendable, Codable, ExpressibleByArgument {
    /// A 64-bit integer.
    case int
    /// A 256-byte string.
    case string
    /// A small struct: `{id: Int, name: String, done: Bool}`.
    case `struct`

    /// The property's declared kind on the host.
    var valueKind: ValueKind {
        switch self {
        case .int: .int
        case .string: .string
        case .struct: .map
        }
    }

    /// A name for tables.
    var label: String {
        switch self {
        case .int: "Int"
        case .string: "String(256 B)"
        case .struct: "struct"
        }
    }

    /// The `index`-th value sent (1-based); every one differs from the one before, so the
    /// final value tells which update was applied last.
    func value(_ index: Int) -> Value {
        switch self {
        case .int: return .int(Int64(index))
        case .string:
            // Made from a prepared buffer, as the raw baseline reuses its payload: building
            // the string a character at a time would charge StateBus for the bench's own work.
            var bytes = Self.filler
            var number = index
            var position = bytes.count - 1
            repeat {
                bytes[position] = UInt8(ascii: "0") + UInt8(number % 10)
                number /= 10
                position -= 1
            } while number > 0
            return .string(String(decoding: bytes, as: UTF8.self))
        case .struct:
            return .map(["id": .int(Int64(index)), "name": .string("item"), "done": .bool(index % 2 == 0)])
        }
    }

    /// 256 bytes of `x`, the string payload before its number is written into its end.
    private static let filler = [UInt8](repeating: UInt8(ascii: "x"), count: 256)

    /// The value's own bytes, which the raw baseline sends after its 8-byte sequence number:
    /// 8 for an Int, 256 for the string, 16 for the struct (an Int, a 4-byte string and a
    /// Bool, rounded up). StateBus's messages carry more (topic, object, epoch, sequence,
    /// property name): that overhead is part of what the ratio measures.
    var valueBytes: Int {
        switch self {
        case .int: 8
        case .string: 256
        case .struct: 16
        }
    }
}

/// One line a worker prints: `bench <event> key=value key=value …` (values have no spaces).
struct WorkerLine: Sendable {
    let event: String
    let fields: [String: String]

    /// Parses a line, or `nil` when it is not a worker line (logs, warnings).
    init?(_ line: String) {
        let words = line.split(separator: " ")
        guard words.count >= 2, words[0] == "bench" else { return nil }
        event = String(words[1])
        var fields: [String: String] = [:]
        for word in words.dropFirst(2) {
            guard let equals = word.firstIndex(of: "=") else { continue }
            fields[String(word[..<equals])] = String(word[word.index(after: equals)...])
        }
        self.fields = fields
    }

    /// Formats a worker line and writes it to standard output at once (the bench waits for it).
    static func emit(_ event: String, _ fields: KeyValuePairs<String, any CustomStringConvertible>) {
        let text = (["bench", event] + fields.map { "\($0.key)=\($0.value)" }).joined(separator: " ")
        statebus.emit(text)
    }

    func int(_ key: String) -> Int? { fields[key].flatMap { Int($0) } }
    func uint(_ key: String) -> UInt64? { fields[key].flatMap { UInt64($0) } }
    func bool(_ key: String) -> Bool { fields[key] == "true" }
}

/// A benchmark failure a person can act on: which step, and what was seen.
struct BenchError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// Starts worker processes (this same executable, hidden `bench-worker` subcommand) and
/// ends them all, whatever happens.
final class WorkerGroup: Sendable {
    private let processes = Mutex<[NodeProcess]>([])

    /// This executable, found through `/proc/self/exe`.
    static var executable: URL { URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath() }

    /// Starts one worker.
    /// - Parameters:
    ///   - role: the worker's role (a `bench-worker` argument).
    ///   - arguments: its options.
    ///   - name: a name for errors.
    func start(_ role: String, _ arguments: [String], name: String) throws -> NodeProcess {
        let process = try NodeProcess(executable: Self.executable, arguments: ["bench-worker", role] + arguments, name: name)
        processes.withLock { $0.append(process) }
        return process
    }

    /// Waits for a worker's next `bench <event>` line.
    /// - Throws: `WaitTimeout` with the worker's last lines, or `BenchError` when the worker
    ///   reported a failure instead.
    static func line(_ event: String, from process: NodeProcess, timeout: Duration) async throws -> WorkerLine {
        let text = try await process.waitForLine("'bench \(event)'", timeout: timeout) { line in
            guard let parsed = WorkerLine(line) else { return false }
            return parsed.event == event || parsed.event == "failed"
        }
        guard let line = WorkerLine(text), line.event == event else {
            throw BenchError("\(process.name) failed: \(text)\n" + process.output.suffix(10).joined(separator: "\n"))
        }
        return line
    }

    /// Ends every worker started so far (SIGTERM, then SIGKILL after a grace period).
    func terminateAll() {
        let all = processes.withLock { all in
            defer { all.removeAll() }
            return all
        }
        for process in all { process.terminate(grace: .seconds(2)) }
    }
}

/// A fresh folder for ipc endpoints and databases, removed by ``remove()``.
struct ScratchFolder {
    let path: String

    init() throws {
        path = NSTemporaryDirectory() + "statebus-bench-\(getpid())-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    /// An `ipc://` endpoint in the folder.
    func endpoint(_ name: String) -> String { "ipc://\(path)/\(name)" }

    func remove() { try? FileManager.default.removeItem(atPath: path) }
}
