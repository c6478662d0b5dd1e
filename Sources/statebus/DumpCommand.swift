import ArgumentParser
import StateBus
import StateBusCommandLine

/// `statebus dump`: prints every property of a running host's object, once.
struct DumpCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "dump",
        abstract: "Print every property of a running host's object.",
        discussion: """
            Examples:
              statebus dump --control ipc:///tmp/demo/control --object SharedData
              statebus dump --object Profile --json
            """
    )
    @OptionGroup var connection: ConnectionOptions
    @OptionGroup var output: OutputOptions

    func run() async throws {
        let replica = try await connection.liveReplica()
        defer { replica.close() }
        StatePrinter.printState(of: replica, json: output.json)
    }
}
