import ArgumentParser
import Foundation

/// Where a host is and which object to bind: by flag, or from the environment the
/// launcher injects (`STATEBUS_CONTROL`, `STATEBUS_OBJECT`).
struct ConnectionOptions: ParsableArguments {
    @Option(name: .long, help: "The host's control endpoint (default: $STATEBUS_CONTROL).")
    var control: String?

    @Option(name: .long, help: "The object to bind (default: $STATEBUS_OBJECT, else the first of $STATEBUS_OBJECTS).")
    var object: String?

    @Option(name: .long, help: "Seconds to wait for the host.")
    var timeout: Double = 10

    var controlEndpoint: String {
        control ?? ProcessInfo.processInfo.environment["STATEBUS_CONTROL"] ?? ""
    }

    var objectName: String { object ?? Self.injectedObject ?? "" }

    /// The object named by the environment: `$STATEBUS_OBJECT`, else the first of
    /// `$STATEBUS_OBJECTS` (comma-separated, as the launcher injects).
    static var injectedObject: String? {
        let environment = ProcessInfo.processInfo.environment
        return environment["STATEBUS_OBJECT"] ?? environment["STATEBUS_OBJECTS"]?.split(separator: ",").first.map(String.init)
    }

    var deadline: Duration { .milliseconds(Int(timeout * 1000)) }

    func validate() throws {
        guard !controlEndpoint.isEmpty else {
            throw ValidationError("no host endpoint: pass --control ENDPOINT (for example ipc:///run/user/1000/statebus/demo.control) or set STATEBUS_CONTROL")
        }
        guard timeout > 0 else { throw ValidationError("--timeout must be a positive number of seconds, got \(timeout)") }
    }

    func requireObject() throws -> String {
        guard !objectName.isEmpty else {
            throw ValidationError("no object: pass --object NAME or set STATEBUS_OBJECT (`statebus objects --control …` lists them)")
        }
        return objectName
    }
}

/// Output options shared by the introspection commands.
struct OutputOptions: ParsableArguments {
    @Flag(name: .long, help: "Print JSON for scripts instead of text for people.")
    var json = false
}

/// Writes a line straight to standard output (file descriptor 1, unbuffered), so a pipe (a
/// launcher, a test) sees it at once. Not `print` + `fflush(nil)`: flushing every stream
/// takes stdin's lock, which a `readLine()` blocked on a terminal holds: a deadlock.
func emit(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}
