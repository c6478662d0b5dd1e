import Foundation
import StateBusLaunch

/// The `ip` command (iproute2), for tests that build network namespaces.
enum IPCommand {
    /// Where `ip` is installed, or `nil`.
    static func find() -> URL? {
        ["/usr/sbin/ip", "/sbin/ip", "/usr/bin/ip", "/bin/ip"].map(URL.init(fileURLWithPath:))
            .first(where: { FileManager.default.isExecutableFile(atPath: $0.path) })
    }

    /// Runs `ip` to its end (up to 30 s). Synchronous: the namespaces are also removed in a
    /// `defer`, which cannot suspend.
    /// - Throws: a message with the command and its output when it fails.
    static func run(_ ip: URL, _ arguments: [String]) throws {
        let process = try NodeProcess(executable: ip, arguments: arguments, name: "ip")
        defer { process.terminate() }
        let status = try process.waitForExit(timeout: .seconds(30))
        guard status == 0 else {
            throw LaunchError("ip \(arguments.joined(separator: " ")) failed (\(status)): \(process.output.joined(separator: "\n"))")
        }
    }
}

/// The value of `key=value` in a line of words (a `ready control=… updates=…` line).
func lineField(_ key: String, in line: String) -> String? {
    line.split(separator: " ").first { $0.hasPrefix(key + "=") }.map { String($0.dropFirst(key.count + 1)) }
}
