import ArgumentParser
import StateBus
import StateBusCommandLine
import StateBusWire

/// `statebus objects`: lists the objects a running host serves, with each property's type
/// and flags and each action's signature, from the host's self-description (no replica is
/// joined).
struct ObjectsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "objects",
        abstract: "List the objects a running host serves, with their properties and actions.",
        discussion: """
            Examples:
              statebus objects --control ipc:///tmp/demo/control
              statebus objects --control tcp://127.0.0.1:7000 --json
            """
    )
    @OptionGroup var connection: ConnectionOptions
    @OptionGroup var output: OutputOptions

    func run() async throws {
        let description = try await HostDescription.fetch(
            controlEndpoint: connection.controlEndpoint, timeout: connection.deadline, security: try connection.security())
        if output.json {
            var objects: [String: Value] = [:]
            var actions: [String: Value] = [:]
            for (name, properties) in description.objects {
                objects[name] = .list(
                    properties.map { property in
                        .map([
                            "name": .string(property.name), "type": .string(property.typeName),
                            "writable": .bool(property.isWritable), "persisted": .bool(property.isPersisted)
                        ])
                    })
            }
            for (name, list) in description.actions {
                actions[name] = .list(
                    list.map { action in
                        .map([
                            "name": .string(action.name), "signature": .string(action.signature), "result": .string(action.resultTypeName),
                            "parameters": .list(action.parameters.map { .map(["label": .string($0.label), "type": .string($0.typeName)]) })
                        ])
                    })
            }
            emit(
                ValueText.json(
                    .map([
                        "host": .string(description.name), "epoch": .int(Int64(bitPattern: description.epoch)), "objects": .map(objects),
                        "actions": .map(actions)
                    ])))
        } else {
            emit("host \(description.name), epoch \(description.epoch), updates at \(description.updatesEndpoint)")
            for name in description.objects.keys.sorted() {
                emit(name)
                for property in description.objects[name] ?? [] {
                    var flags: [String] = []
                    if !property.isWritable { flags.append("read-only") }
                    if property.isPersisted { flags.append("persisted") }
                    emit("  \(property.name): \(property.typeName)\(flags.isEmpty ? "" : " (\(flags.joined(separator: ", ")))")")
                }
                for action in description.actions[name] ?? [] {
                    emit("  action \(action.signature)")
                }
            }
        }
    }
}
