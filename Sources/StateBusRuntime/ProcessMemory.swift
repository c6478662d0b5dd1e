import Foundation

/// The resident memory of a process, from `/proc/<pid>/status` (Linux).
public struct ProcessMemory: Sendable, Codable, Hashable {
    /// Peak resident set (`VmHWM`), in bytes.
    public var peakBytes: Int
    /// Current resident set (`VmRSS`), in bytes.
    public var residentBytes: Int

    /// Reads the figures of a process (`self` by default).
    /// - Returns: `nil` when `/proc` has no such process or lacks the fields.
    public static func read(pid: String = "self") -> ProcessMemory? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return nil }
        func field(_ name: String) -> Int? {
            guard let line = text.split(separator: "\n").first(where: { $0.hasPrefix(name + ":") }) else { return nil }
            let digits = line.split(separator: " ").compactMap { Int($0) }.first
            return digits.map { $0 * 1024 }  // the kernel reports kB
        }
        guard let peak = field("VmHWM"), let resident = field("VmRSS") else { return nil }
        return ProcessMemory(peakBytes: peak, residentBytes: resident)
    }

    /// Whether this process loaded the Swift runtime as a shared library (`libswiftCore.so`),
    /// rather than having it linked in (`swift build --static-swift-stdlib`): a process that
    /// loads the shared libraries, Foundation's among them, holds a few MiB more.
    /// - Returns: `nil` when `/proc/self/maps` cannot be read.
    public static var loadsSharedSwiftRuntime: Bool? {
        // Read to the end: `String(contentsOfFile:)` stops after the first read of a /proc file.
        guard let file = FileHandle(forReadingAtPath: "/proc/self/maps"), let data = try? file.readToEnd() else { return nil }
        try? file.close()
        return String(decoding: data, as: UTF8.self).contains("/libswiftCore.so")
    }
}
