import ArgumentParser
import Foundation
import StateBus
import StateBusCommandLine
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
