import ArgumentParser

/// The `statebus` command-line tool.
@main
struct StateBusCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "statebus",
        abstract: "SwiftUI's state model across processes, over ZeroMQ.",
        discussion: """
            A host process owns shared model objects; view processes hold replicas that stay \
            in step and write back through two-way bindings.

            Examples:
              statebus smoke                      # show a message crossing two processes
              statebus smoke --help
            """,
        subcommands: [SmokeCommand.self]
    )
}
