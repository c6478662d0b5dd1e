import Foundation
import StateBusLaunch
import StateBusRuntime

/// A Python interpreter with the StateBus Python client (`clients/python`) installed: the
/// demo's Python view and the bench's Python rows run on it.
struct PythonClient: Sendable {
    /// The interpreter, as found (a virtual environment's `bin/python` stays a path into
    /// that environment, not the file its link leads to, so the environment applies).
    let interpreter: URL

    /// Why no interpreter could be used: what was tried and what to do.
    struct Missing: Error, CustomStringConvertible {
        let description: String
    }

    /// Finds the interpreter: `option` (`--python`) when given, else `$STATEBUS_PYTHON`,
    /// else `python3` on the `PATH`; then checks, within `timeout`, that it imports the
    /// client's modules the callers run (`statebus.demo`, `statebus._benchworker`).
    /// - Returns: the client, or what was missing.
    static func find(option: String?, timeout: Duration) async -> Result<PythonClient, Missing> {
        let environment = ProcessInfo.processInfo.environment
        // An empty variable is no choice (a script's failed install may leave one behind).
        let (name, source) =
            option.map { ($0, "--python") }
            ?? environment[EnvironmentVariableName.python].flatMap { $0.isEmpty ? nil : ($0, EnvironmentVariableName.python) }
            ?? ("python3", "the default")
        guard let interpreter = resolve(name, path: environment["PATH"] ?? "") else {
            let what = name.contains("/") ? "no executable file '\(name)'" : "no '\(name)' on the PATH"
            return .failure(Missing(description: "\(what) (\(source)): install Python 3, or give --python PATH"))
        }
        let check: NodeProcess
        do {
            check = try NodeProcess(
                executable: interpreter, arguments: ["-c", "import statebus.demo, statebus._benchworker"], name: "python check")
        } catch {
            return .failure(Missing(description: "\(interpreter.path) (\(source)) could not be started: \(error)"))
        }
        let status: Int32
        do {
            status = try await check.exited(timeout: timeout)
        } catch {
            check.terminate(grace: .seconds(1))
            return .failure(Missing(description: "\(interpreter.path) (\(source)) did not answer within \(timeout)"))
        }
        guard status == 0 else {
            let why = check.output.last { !$0.isEmpty } ?? "exit status \(status)"
            return .failure(
                Missing(
                    description:
                        "\(interpreter.path) (\(source)) has no StateBus Python client (\(why)): install it with `\(interpreter.path) -m pip install ./clients/python`, or give --python PATH (deploy/demo.sh and deploy/test.sh make one in .build/python-client)"
                ))
        }
        return .success(PythonClient(interpreter: interpreter))
    }

    /// A name with a slash is a path (relative to the working folder, made absolute: the
    /// launcher reads a relative one against its launch file's folder); a bare name is
    /// looked up on `path`.
    private static func resolve(_ name: String, path: String) -> URL? {
        let candidates =
            name.contains("/")
            ? [URL(fileURLWithPath: name).absoluteURL]
            : path.split(separator: ":").map { URL(fileURLWithPath: String($0)).appendingPathComponent(name) }
        return candidates.first { candidate in
            var isFolder: ObjCBool = false
            return FileManager.default.fileExists(atPath: candidate.path, isDirectory: &isFolder) && !isFolder.boolValue
                && FileManager.default.isExecutableFile(atPath: candidate.path)
        }
    }
}
