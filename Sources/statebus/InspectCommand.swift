import ArgumentParser
import Foundation
import StateBusCommandLine

#if canImport(Glibc)
    import Glibc
#endif

/// `statebus inspect`: runs the `statebus-inspect` executable beside this one, with the same
/// arguments. The inspector's web server (Hummingbird, SwiftNIO) lives there, so that
/// building `statebus` (the demo does) compiles no web framework.
struct InspectCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "inspect",
        abstract: inspectorAbstract,
        discussion: """
            Runs statebus-inspect, the executable built beside this one (`swift build` builds \
            both; `swift build --product statebus-inspect` builds it alone), with the same \
            arguments. `statebus inspect --help` shows its options.

            Examples:
              statebus inspect --control ipc:///tmp/demo/control
              statebus inspect --control tcp://127.0.0.1:7000 --http 127.0.0.1:0
              statebus inspect --recording counter.rec      # scrub through a recording (statebus record)
            """
    )

    @Argument(parsing: .captureForPassthrough, help: "The inspector's options (statebus inspect --help shows them).")
    var arguments: [String] = []

    func run() throws {
        let executable = Self.inspectorPath
        guard FileManager.default.fileExists(atPath: executable) else {
            throw InspectorMissing(path: executable)
        }
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        // This runs on a worker thread, which blocks most signals, and a signal mask survives
        // exec: the inspector starts with none blocked, as from a shell.
        var none = sigset_t()
        sigemptyset(&none)
        pthread_sigmask(SIG_SETMASK, &none, nil)
        execv(executable, argv)
        // Only on failure: execv replaced this process otherwise.
        throw InspectorMissing(path: executable, reason: String(cString: strerror(errno)))
    }

    /// `statebus-inspect` in the folder of this executable (symbolic links resolved).
    static var inspectorPath: String {
        let own = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        return URL(fileURLWithPath: own).deletingLastPathComponent().appendingPathComponent("statebus-inspect").path
    }
}

/// `statebus inspect` found no `statebus-inspect` it could run.
struct InspectorMissing: Error, CustomStringConvertible {
    let path: String
    var reason: String? = nil

    var description: String {
        let why = reason.map { "cannot run \(path): \($0)" } ?? "there is no \(path)"
        return
            "statebus inspect runs the statebus-inspect executable beside statebus, and \(why). Build it with `swift build --product statebus-inspect` (plain `swift build` builds both), or install it in the same folder as statebus."
    }
}
