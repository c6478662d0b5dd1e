import Foundation
import StateBusLaunch

/// The `ip` command (iproute2), for tests that build network namespaces.
enum IPCommand {
    /// Where `ip` is installed, or `nil`.
    static func find() -> URL? {
        ["/usr/sbin/ip", "/sbin/ip", "/usr/bin/ip", "/bin/ip"].map(URL.init(fileURLWithPath:))
            .first(where: { FileManager.default.isExecutableFile(atPath: $0.path) })
    }

    /// Runs `ip` and waits for it.
    /// - Throws: a message with the command and its output when it fails.
    static func run(_ ip: URL, _ arguments: [String]) throws {
        let process = Process()
        process.executableURL = ip
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw LaunchError("ip \(arguments.joined(separator: " ")) failed (\(process.terminationStatus)): \(text)")
        }
    }
}

/// The value of `key=value` in a line of words (a `ready control=… updates=…` line).
func lineField(_ key: String, in line: String) -> String? {
    line.split(separator: " ").first { $0.hasPrefix(key + "=") }.map { String($0.dropFirst(key.count + 1)) }
}
