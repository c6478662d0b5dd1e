import ArgumentParser
import StateBus
import StateBusCommandLine
import StateBusRuntime
import StateBusWire

/// `statebus views`: lists the views (and relays) connected to a running host or relay, from
/// its answer to a views request (no replica is joined).
struct ViewsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "views",
        abstract: "List the views and relays connected to a running host or relay.",
        discussion: """
            A view counts from its hello until it says goodbye or stays silent for the host's
            view-id lease (views ping when idle). Views joined through a relay are listed by the
            relay: ask it with its own control endpoint.

            Examples:
              statebus views --control ipc:///tmp/demo/control
              statebus views --control tcp://127.0.0.1:7000 --json
              statebus views --control tcp://10.0.0.5:7000 --key me.key --host-key host.pub
            """
    )
    @OptionGroup var connection: ConnectionOptions
    @OptionGroup var output: OutputOptions

    func run() async throws {
        let list = try await ConnectedView.list(
            controlEndpoint: connection.controlEndpoint, timeout: connection.deadline, security: try connection.security())
        if output.json {
            emit(
                ValueText.json(
                    .map([
                        "views": .list(
                            list.views.map { view in
                                .map([
                                    "viewID": .string(view.viewID), "node": .string(view.nodeName), "relay": .bool(view.isRelay),
                                    "connectedSeconds": .double(view.connectedFor.inSeconds), "silentSeconds": .double(view.silentFor.inSeconds),
                                    "key": .string(view.keyName)
                                ])
                            }),
                        "omitted": .int(Int64(list.omitted))
                    ])))
            return
        }
        emit("\(list.views.count + list.omitted) connected")
        for view in list.views {
            var details = ["connected \(Self.format(view.connectedFor))"]
            if !view.nodeName.isEmpty { details.insert("node \(view.nodeName)", at: 0) }
            if view.isRelay { details.insert("relay", at: 0) }
            if !view.keyName.isEmpty { details.append("key \(view.keyName)") }
            if view.silentFor >= .seconds(3) { details.append("silent \(Self.format(view.silentFor))") }
            emit("  \(view.viewID) (\(details.joined(separator: ", ")))")
        }
        if list.omitted > 0 { emit("  ... and \(list.omitted) more, not listed") }
    }

    /// "4.2 s", "3 min 20 s": how long, for people.
    static func format(_ duration: Duration) -> String {
        let seconds = duration.inSeconds
        if seconds < 60 { return "\((seconds * 10).rounded() / 10) s" }
        let whole = Int(seconds)
        if whole < 3_600 { return "\(whole / 60) min \(whole % 60) s" }
        return "\(whole / 3_600) h \(whole % 3_600 / 60) min"
    }
}
