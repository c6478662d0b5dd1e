import ArgumentParser
import StateBus
import StateBusCommandLine
import StateBusWire

/// `statebus set`: writes one property through the host, as a view's binding would, and
/// prints the host's verdict; a rejection exits 1.
struct SetCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "set",
        abstract: "Write a property through the host, as a view would, and show its verdict.",
        discussion: """
            The value is JSON unless --string is given. Exits 1 and prints the host's reason \
            when it rejects the write.

            Examples:
              statebus set --object SharedData sharedText '"hello"'
              statebus set --object SharedData sharedText hello --string
              statebus set --object Profile user.email '"bob@example.com"'
            """
    )
    @OptionGroup var connection: ConnectionOptions
    @OptionGroup var output: OutputOptions
    @Argument(help: "The property, optionally with a path into it (user.email).")
    var property: String
    @Argument(help: "The new value, as JSON.")
    var value: String
    @Flag(name: .long, help: "Send the value as a string without JSON quoting.")
    var string = false

    func run() async throws {
        let newValue = try ValueText.parse(value, asString: string)
        let path = try ValuePath(parsing: property)
        guard case .key(let name)? = path.components.first else { throw ValidationError("'\(property)' does not name a property") }
        let replica = try await connection.liveReplica()
        defer { replica.close() }
        do {
            let sequence = try await replica.write(name, to: newValue, at: ValuePath(Array(path.components.dropFirst()))).accepted()
            emit(output.json ? #"{"accepted":true,"sequence":\#(sequence)}"# : "accepted at sequence \(sequence)")
        } catch let error as StateBusError {
            if output.json {
                emit(
                    #"{"accepted":false,"code":\#(ValueText.json(.string(error.code.rawValue))),"message":\#(ValueText.json(.string(error.message)))}"#
                )
            } else {
                emit("rejected: \(error)")
            }
            throw ExitCode(1)
        }
    }
}
