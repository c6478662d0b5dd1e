import ArgumentParser
import Foundation
import StateBus
import StateBusWire

/// Joins an object's replica and waits until it is live.
func liveReplica(_ connection: ConnectionOptions) async throws -> Replica {
    let replica = try Replica(object: try connection.requireObject(), controlEndpoint: connection.controlEndpoint,
                              configuration: ReplicaConfiguration(nodeName: "statebus-cli"))
    do {
        try await replica.waitUntilLive(timeout: connection.deadline)
    } catch {
        replica.close()
        throw error
    }
    return replica
}

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
        let replica = try await liveReplica(connection)
        defer { replica.close() }
        let path = try ValuePath(parsing: property)
        guard case .key(let name)? = path.components.first, let whole = replica[name] else {
            throw ValidationError("'\(connection.objectName)' has no property '\(property)'; known: \(replica.values.keys.sorted().joined(separator: ", "))")
        }
        let value = whole[ValuePath(Array(path.components.dropFirst()))] ?? .null
        emit(output.json ? ValueText.json(value) : value.description)
    }
}

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
        let replica = try await liveReplica(connection)
        defer { replica.close() }
        do {
            let sequence = try await replica.write(name, to: newValue, at: ValuePath(Array(path.components.dropFirst()))).accepted()
            emit(output.json ? #"{"accepted":true,"sequence":\#(sequence)}"# : "accepted at sequence \(sequence)")
        } catch let error as StateBusError {
            if output.json {
                emit(#"{"accepted":false,"code":\#(ValueText.json(.string(error.code.rawValue))),"message":\#(ValueText.json(.string(error.message)))}"#)
            } else {
                emit("rejected: \(error)")
            }
            throw ExitCode(1)
        }
    }
}

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
        let replica = try await liveReplica(connection)
        defer { replica.close() }
        printState(of: replica, json: output.json)
    }
}

/// Prints a replica's state: one JSON object, or one line per property.
func printState(of replica: Replica, json: Bool) {
    // One consistent read: the position and the values of the same moment.
    let state = replica.consistentState
    if json {
        emit(#"{"connection":"\#(state.connection)","epoch":\#(state.epoch),"object":\#(ValueText.json(.string(replica.object))),"sequence":\#(state.sequence),"values":\#(ValueText.json(state.values))}"#)
    } else {
        emit("\(replica.object) @ sequence \(state.sequence) (\(state.connection))")
        for name in state.values.keys.sorted() { emit("  \(name) = \(state.values[name] ?? .null)") }
    }
}

struct WatchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "watch",
        abstract: "Follow a running host's object: print its state at every change.",
        discussion: """
            Runs until interrupted. With --json, prints one JSON object per line.

            With --edits it is also a view you drive through standard input: each line \
            `PROPERTY JSON` (a path is allowed: `user.email "b@example.org"`) is written \
            through this replica and its outcome printed (with --json: \
            {"event":"write","line":N,...,"accepted":true,"sequence":S}); the line \
            `:reconnect` drops the connection and joins again. StateBusTesting's ViewNode \
            runs this.

            Examples:
              statebus watch --control ipc:///tmp/demo/control --object SharedData
              STATEBUS_CONTROL=tcp://10.0.0.5:7000 statebus watch --object Profile --json
              echo 'user.email "bea@example.org"' | statebus watch --object Profile --edits
            """
    )
    @OptionGroup var connection: ConnectionOptions
    @OptionGroup var output: OutputOptions

    @Flag(name: .long, help: "Read edits from standard input: `PROPERTY JSON` per line, or `:reconnect`.")
    var edits = false

    @Option(name: .long, help: "This view's node name, as the host logs it (default: $STATEBUS_NODE or statebus-watch).")
    var name: String?

    func run() async throws {
        let nodeName = name ?? ProcessInfo.processInfo.environment["STATEBUS_NODE"] ?? "statebus-watch"
        let replica = try Replica(object: try connection.requireObject(), controlEndpoint: connection.controlEndpoint,
                                  configuration: ReplicaConfiguration(nodeName: nodeName))
        let stop = SignalTrap.stopSignals()
        // Subscribe before anything can change, so no transition is missed.
        let changeIterator = replica.changes.makeAsyncIterator()
        let positionIterator = replica.sequenceChanges.makeAsyncIterator()
        let connectionIterator = replica.connectionChanges.makeAsyncIterator()
        let printer = StatePrinter(replica: replica, json: output.json)
        if replica.connectionState == .live { printer.printIfChanged() }
        let input = edits ? Task { [json = output.json] in await WatchEdits.run(on: replica, json: json) } : nil
        // A value change, or a position change alone (the echo of this replica's own write).
        let changes = Task {
            var iterator = changeIterator
            while await iterator.next() != nil { printer.printIfChanged() }
        }
        let positions = Task {
            var iterator = positionIterator
            while await iterator.next() != nil { printer.printIfChanged() }
        }
        let connections = Task {
            var last = ConnectionState.closed
            var iterator = connectionIterator
            while await iterator.next() != nil {
                let now = replica.connectionState
                if now != last {
                    last = now
                    if output.json { emit(#"{"event":"connection","connection":"\#(now)","epoch":\#(replica.epoch)}"#) }
                    else { emit("connection: \(now)") }
                    if now == .live { printer.printIfChanged(force: true) }
                }
                if let error = replica.lastError { FileHandle.standardError.write(Data("error: \(error)\n".utf8)) }
            }
        }
        await stop.wait()
        input?.cancel()
        replica.close()
        changes.cancel()
        positions.cancel()
        connections.cancel()
    }
}

/// Prints a replica's state when it differs from what was printed last, so the value and
/// position observers of `statebus watch` never print the same state twice.
struct StatePrinter: Sendable {
    let replica: Replica
    let json: Bool
    private let shown = LastShown<PrintedPosition>()

    /// A replica's position and values: what two prints must differ in.
    struct PrintedPosition: Equatable, Sendable {
        let epoch: UInt64
        let sequence: UInt64
        let values: [String: Value]
    }

    init(replica: Replica, json: Bool) {
        self.replica = replica
        self.json = json
    }

    /// Prints the state if it changed since the last print (or always, with `force`).
    func printIfChanged(force: Bool = false) {
        let state = replica.consistentState
        shown.showIfChanged(PrintedPosition(epoch: state.epoch, sequence: state.sequence, values: state.values), force: force) { _ in
            printState(of: replica, json: json)
        }
    }
}

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
        let description = try await HostDescription.fetch(controlEndpoint: connection.controlEndpoint, timeout: connection.deadline)
        if output.json {
            var objects: [String: Value] = [:]
            for (name, properties) in description.objects {
                objects[name] = .list(properties.map { property in
                    .map(["name": .string(property.name), "type": .string(property.typeName),
                          "writable": .bool(property.isWritable), "persisted": .bool(property.isPersisted)])
                })
            }
            emit(ValueText.json(.map(["host": .string(description.name), "epoch": .int(Int64(bitPattern: description.epoch)), "objects": .map(objects)])))
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
