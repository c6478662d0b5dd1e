import ArgumentParser
import Foundation
import StateBus
import StateBusDemo
import StateBusWire
import SwiftProtobuf

/// `statebus replay`: serves a recording as a host, so views join it as usual and see the
/// recorded history again: in real time, faster, step by step, or up to a sequence.
struct ReplayCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "replay",
        abstract: "Serve a recording (statebus record) as a host: views join it and see its history again.",
        discussion: """
            Starts a host serving the recorded object, from the recorded snapshot, and applies \\
            the recorded publications at their recorded pace (--speed 2: twice as fast; \\
            --speed 0: at once), or one per line typed (--step), and stops at a recorded \\
            sequence with --until. The properties are read-only for views: the history is \\
            the recording's. Prints "ready control=… updates=… first=A last=B", then "at \\
            sequence=S" after each batch with --step, and "stopped at sequence=S" once done; \\
            serves until SIGINT or SIGTERM. The host's own sequence counts from 0; the \\
            printed sequences are the recording's.

            Examples:
              statebus replay profile.rec --control ipc:///tmp/replay
              statebus replay profile.rec --speed 0 --until 120
              statebus replay todo.rec --step
            """
    )

    @Argument(help: "The recording.")
    var file: String

    @Option(name: .long, help: "Where to serve (default: the runtime folder's replay.control).")
    var control: String?

    @Option(name: .long, help: "The recorded pace times this: 1 real time, 2 twice as fast, 0 at once.")
    var speed: Double = 1

    @Flag(name: .long, help: "Apply one batch per line read on standard input.")
    var step = false

    @Option(name: .long, help: "Stop after the batch with this recorded sequence.")
    var until: UInt64?

    func validate() throws {
        guard speed >= 0 else { throw ValidationError("--speed must be 0 (at once) or positive, got \(speed)") }
    }

    func run() async throws {
        let replay = try RecordedHistory(path: file)
        let stop = SignalTrap.stopSignals()
        let host = try await StateHost(
            objects: [replay.definition],
            configuration: HostConfiguration(name: "replay", controlEndpoint: control, persistence: .disabled))
        defer { host.stop() }
        emit("ready control=\(host.controlEndpoint) updates=\(host.updatesEndpoint) first=\(replay.firstSequence) last=\(replay.lastSequence)")
        // A stop signal ends the play wherever it waits (for a typed line with --step, for a
        // batch's recorded time otherwise), not only once it has played, so that a stepped
        // replay waiting for its next line stops at SIGTERM instead of being killed.
        let playing = Task { try await play(replay, on: host) }
        let stopper = Task {
            await stop.wait()
            playing.cancel()
        }
        defer { stopper.cancel() }
        let reached = try await playing.value
        emit("stopped at sequence=\(reached)")
        await stop.wait()
    }

    /// Applies the recorded batches at the pace asked for, until the last, `--until`, the
    /// end of standard input (with `--step`) or the task's cancellation.
    /// - Returns: the recorded sequence of the last batch applied.
    private func play(_ replay: RecordedHistory, on host: StateHost) async throws -> UInt64 {
        var lines = step ? DemoNode.standardInputLines().makeAsyncIterator() : nil
        var reached = replay.firstSequence
        let start = ContinuousClock.now
        for entry in replay.steps {
            if let until, entry.sequence > until { break }
            if lines != nil {
                // nil at the end of input, and once cancelled.
                guard await lines?.next() != nil, !Task.isCancelled else { break }
            } else if speed > 0 {
                let due = start + .nanoseconds(Int64(Double(entry.time) / speed))
                if due > .now {
                    do { try await Task.sleep(until: due) } catch { break }  // cancelled: stopped
                }
            }
            do {
                _ = try host.apply(entry.changes, to: replay.object)
            } catch {
                throw RecordingError("the recording's batch at sequence \(entry.sequence) does not apply: \(error)")
            }
            reached = entry.sequence
            if step { emit("at sequence=\(reached)") }
        }
        return reached
    }
}

/// A recording read for replay: the object's definition (read-only, starting from the
/// recorded snapshot) and the batches after it.
struct RecordedHistory {
    struct Step {
        let time: UInt64
        let sequence: UInt64
        let changes: [PropertyChange]
    }

    let object: String
    let definition: ObjectDefinition
    let firstSequence: UInt64
    let lastSequence: UInt64
    let steps: [Step]

    init(path: String) throws {
        let (header, records) = try Recording.read(path: path)
        object = header.object
        var welcome: Statebus_V1_Welcome?
        var snapshot: [Statebus_V1_PropertyState] = []
        var first: UInt64?
        var sequence: UInt64 = 0
        var pendingChunks: [Statebus_V1_PropertyState] = []
        var steps: [Step] = []
        for record in records {
            let bytes = [UInt8](Data(base64Encoded: record.bytes) ?? Data())
            switch record.kind {
            case "welcome":
                welcome = try Statebus_V1_Welcome(serializedBytes: bytes)
            case "chunk":
                let chunk = try Statebus_V1_SnapshotChunk(serializedBytes: bytes)
                pendingChunks += chunk.properties
                guard chunk.last else { continue }
                if first == nil {
                    first = chunk.sequence
                    snapshot = pendingChunks
                } else {
                    // A later snapshot (the recorder fell behind): its values, as one batch.
                    steps.append(
                        Step(
                            time: record.t, sequence: chunk.sequence,
                            changes: pendingChunks.map { PropertyChange($0.name, to: Value(wire: $0.value)) }))
                }
                sequence = chunk.sequence
                pendingChunks = []
            case "publication":
                let publication = try Statebus_V1_Publication(serializedBytes: bytes)
                for batch in publication.updates where batch.object == header.object && batch.sequence > sequence {
                    steps.append(Step(time: record.t, sequence: batch.sequence, changes: batch.changes.map(PropertyChange.init(wire:))))
                    sequence = batch.sequence
                }
            default:
                throw RecordingError("\(path): a record of unknown kind '\(record.kind)'")
            }
        }
        guard let welcome, let schema = welcome.objects.first(where: { $0.name == header.object }), let first else {
            throw RecordingError("\(path) has no welcome and snapshot of \(header.object): it was cut short before recording began")
        }
        let values = Dictionary(snapshot.map { ($0.name, Value(wire: $0.value)) }, uniquingKeysWith: { _, last in last })
        definition = ObjectDefinition(
            header.object,
            properties: schema.properties.map { property in
                PropertyDefinition(property.name, kind: ValueKind(wire: property.kind), default: values[property.name] ?? .null, writable: false)
            })
        firstSequence = first
        lastSequence = sequence
        self.steps = steps
    }
}
