import ArgumentParser
import StateBus
import StateBusCommandLine
import StateBusWire

/// `statebus get`: prints one property, or a path into it, of a running host's object.
struct GetCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "get",
        abstract: "Print one property of a running host's object.",
        discussion: """
            Examples:
              statebus get --control ipc:///tmp/demo/control --object SharedData sharedText
              statebus get --object Profile user.email --json
            """
    )
    @OptionGroup var connection: ConnectionOptions
    @OptionGroup var output: OutputOptions
    @Argument(help: "The property, optionally with a path into it (user.email).")
    var property: String

    func run() async throws {
        let replica = try await connection.liveReplica()
        defer { replica.close() }
        let path = try ValuePath(parsing: property)
        guard case .key(let name)? = path.components.first, let whole = replica[name] else {
            throw ValidationError(
                "'\(connection.objectName)' has no property '\(property)'; known: \(replica.values.keys.sorted().joined(separator: ", "))")
        }
        let value = whole[ValuePath(Array(path.components.dropFirst()))] ?? .null
        emit(output.json ? ValueText.json(value) : value.description)
    }
}
