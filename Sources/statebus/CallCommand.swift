import ArgumentParser
import StateBus
import StateBusCommandLine
import StateBusWire

/// `statebus call`: calls an action of an object (a method marked `@Action` on the host's
/// model), as a view's `try await model.action(…)` would, and prints its result.
struct CallCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "call",
        abstract: "Call an action of an object on its host, as a view would, and print the result.",
        discussion: """
            The arguments are a JSON array, one element per parameter in order (`statebus \
            objects` shows each action's parameters); leave it out for an action without \
            parameters. The action runs on the host; the result is printed as JSON once this \
            view holds every change the action made. Exits 1 with the host's reason when the \
            call is refused or the action throws.

            Examples:
              statebus call --control ipc:///tmp/demo/profile --object Profile loadUser
              statebus call --object Profile rename '["bob"]'
              statebus call --object TodoList clearCompleted --json
            """
    )
    @OptionGroup var connection: ConnectionOptions
    @OptionGroup var output: OutputOptions
    @Argument(help: "The action's name.")
    var action: String
    @Argument(help: "The arguments: a JSON array, one element per parameter (default: none).")
    var arguments: String = "[]"
    @Option(name: .long, help: "Seconds the call may take, until this view holds the action's changes.")
    var callTimeout: Double = 30

    func validate() throws {
        guard callTimeout > 0 else { throw ValidationError("--call-timeout must be positive") }
    }

    func run() async throws {
        guard case .list(let values) = try ValueText.parse(arguments, asString: false) else {
            throw ValidationError(
                "the arguments must be a JSON array, one element per parameter: '\(arguments)' is not (for one string argument: '[\"text\"]')")
        }
        let replica = try await connection.liveReplica()
        defer { replica.close() }
        do {
            let result = try await replica.call(action, arguments: values, timeout: .milliseconds(Int(callTimeout * 1000)))
            emit(output.json ? #"{"ok":true,"result":\#(ValueText.json(result))}"# : ValueText.json(result))
        } catch {
            if output.json {
                emit(#"{"ok":false,"code":\#(ValueText.json(.string(error.code.rawValue))),"message":\#(ValueText.json(.string(error.message)))}"#)
            } else {
                emit("refused: \(error)")
            }
            throw ExitCode(1)
        }
    }
}
