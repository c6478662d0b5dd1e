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
              statebus demo                       # a host and three views, each a process
              statebus launch deploy/shared-text.yaml
              statebus host --object SharedData --property sharedText:string=hello
              statebus watch --control ipc:///run/user/1000/statebus/statebus.control --object SharedData
              statebus set --object SharedData sharedText '"hi"'
              statebus smoke                      # show a message crossing two processes
            """,
        subcommands: [
            DemoCommand.self, LaunchCommand.self, NodeCommand.self, HostCommand.self, RelayCommand.self, ViewCommand.self, LoadCommand.self,
            GetCommand.self, SetCommand.self, CallCommand.self, RecordCommand.self, ReplayCommand.self,
            WatchCommand.self, DumpCommand.self,
            ObjectsCommand.self, ViewsCommand.self, InspectCommand.self, PersistedCommand.self, KeygenCommand.self, SmokeCommand.self,
            BenchCommand.self,
            BenchWorkerCommand.self
        ]
    )
}
