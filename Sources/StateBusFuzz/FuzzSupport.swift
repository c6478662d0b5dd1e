import Foundation
import StateBusWire

/// A failed invariant: what was expected, what happened.
struct Finding: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// Keeps the inputs sent since the last passed check in a file, written before each input
/// is sent: when the process dies, the input that killed it is in there (with the few
/// before it that the host may still have been handling).
final class InputLog {
    let path: String
    private let handle: FileHandle
    private(set) var count = 0

    init(path: String) throws {
        self.path = path
        _ = FileManager.default.createFile(atPath: path, contents: nil)
        guard let handle = FileHandle(forWritingAtPath: path) else { throw Finding("cannot write the input log \(path)") }
        self.handle = handle
    }

    func record(_ input: FuzzInput) {
        var buffer: [UInt8] = []
        input.encode(into: &buffer)
        handle.write(Data(buffer))
        count += 1
    }

    /// Forgets the inputs before a passed check.
    func reset() {
        try? handle.truncate(atOffset: 0)
        count = 0
    }

    /// Copies what is logged to `file`.
    func save(to file: String) {
        try? handle.synchronize()
        try? FileManager.default.removeItem(atPath: file)
        try? FileManager.default.copyItem(atPath: path, toPath: file)
    }
}

enum FuzzSupport {
    /// Equality of values where NaN equals NaN (bit for bit): a host and a replica holding
    /// the same NaN agree, though `==` says otherwise.
    static func same(_ a: Value?, _ b: Value?) -> Bool {
        switch (a, b) {
        case (nil, nil): return true
        case (.double(let x)?, .double(let y)?): return x.bitPattern == y.bitPattern || x == y
        case (.list(let xs)?, .list(let ys)?): return xs.count == ys.count && zip(xs, ys).allSatisfy { same($0, $1) }
        case (.map(let xs)?, .map(let ys)?): return xs.count == ys.count && xs.allSatisfy { same($0.value, ys[$0.key]) }
        default: return a == b
        }
    }

    static func same(_ a: [String: Value], _ b: [String: Value]) -> Bool {
        a.count == b.count && a.allSatisfy { same($0.value, b[$0.key]) }
    }

    /// The names of the properties whose values differ, for a finding's message.
    static func differences(_ a: [String: Value], _ b: [String: Value]) -> String {
        Set(a.keys).union(b.keys).sorted().filter { !same(a[$0], b[$0]) }.map { key in
            "\(key): \(a[key].map { String(String(describing: $0).prefix(120)) } ?? "absent") vs \(b[key].map { String(String(describing: $0).prefix(120)) } ?? "absent")"
        }.joined(separator: "; ")
    }

    /// Resident memory of a process in MiB, from `/proc/PID/status` (`VmRSS`).
    static func residentMiB(pid: Int32 = getpid()) -> Double {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
            let kilobytes = Double(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "")
        else { return 0 }
        return kilobytes / 1024
    }

    /// A private temporary folder (0700), as a host's ipc sockets need.
    static func temporaryFolder(_ prefix: String) throws -> String {
        var template = Array("/tmp/\(prefix)-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw Finding("mkdtemp failed: errno \(errno)") }
        return String(cString: made)
    }
}
