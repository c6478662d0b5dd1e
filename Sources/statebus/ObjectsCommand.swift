import ArgumentParser
import StateBus
import StateBusWire

/// `statebus objects`: lists the objects a running host serves, with each property's type
/// and flags, from the host's self-description (no replica is joined).
struct ObjectsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "objects",
        abstract: "List the objects a running host serves, with their properties.",
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
            for (name, properties) in description.objects {
                objects[name] = .list(
                    properties.map { property in
                        .map([
                            "name": .string(property.name), "type": .string(property.typeName),
                            "writable": .bool(property.isWritable), "persisted": .bool(property.isPersisted)
                        ])
                    })
            }
            emit(
                ValueText.json(
                    .map(["host": .string(description.name), "epoch": .int(Int64(bitPattern: description.epoch)), "objects": .map(objects)])))
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
            }
        }
    }
}
