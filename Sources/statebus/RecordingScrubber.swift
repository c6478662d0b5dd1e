import Foundation
import StateBus
import StateBusCommandLine
import StateBusInspector

/// The host `statebus inspect --recording FILE` watches: it serves the recording's object,
/// read-only, at any recorded sequence. Moving forward applies the recorded batches; moving
/// back starts a fresh host (a new epoch, so views re-join) and applies them from the
/// snapshot on. Views (the inspector's own replicas among them) follow as they would follow
/// any host.
actor RecordingScrubber {
    private let history: RecordedHistory
    private let controlEndpoint: String
    private var host: StateHost
    /// How many of the recorded batches the host has applied.
    private var applied = 0

    /// Starts the host at the recording's last sequence.
    init(history: RecordedHistory, controlEndpoint: String) async throws {
        self.history = history
        self.controlEndpoint = controlEndpoint
        host = try await Self.makeHost(history, at: controlEndpoint)
        try Self.apply(history.steps[...], to: host, object: history.object)
        applied = history.steps.count
    }

    /// The timeline the inspector's page scrubs: every recorded sequence.
    nonisolated func timeline() -> InspectorTimeline {
        InspectorTimeline(sequences: [history.firstSequence] + history.steps.map(\.sequence)) { [self] sequence in
            try await seek(to: sequence)
        }
    }

    /// Moves the host to recorded sequence `sequence`.
    /// - Returns: the host's epoch and sequence once there.
    func seek(to sequence: UInt64) async throws -> (epoch: UInt64, sequence: UInt64) {
        let target = history.steps.count { $0.sequence <= sequence }
        if target < applied {
            host.stop()
            host = try await Self.makeHost(history, at: controlEndpoint)
            applied = 0
        }
        try Self.apply(history.steps[applied..<target], to: host, object: history.object)
        applied = target
        return (host.epoch, host.sequence(of: history.object) ?? 0)
    }

    /// Stops the host.
    func stop() { host.stop() }

    private static func makeHost(_ history: RecordedHistory, at endpoint: String) async throws -> StateHost {
        // Heartbeats every 100 ms: after a move back, views hear the new epoch at once.
        try await StateHost(
            objects: [history.definition],
            configuration: HostConfiguration(
                name: "recording", controlEndpoint: endpoint, heartbeatInterval: .milliseconds(100), persistence: .disabled))
    }

    private static func apply(_ steps: ArraySlice<RecordedHistory.Step>, to host: StateHost, object: String) throws {
        for step in steps {
            do {
                _ = try host.apply(step.changes, to: object)
            } catch {
                throw RecordingError("the recording's batch at sequence \(step.sequence) does not apply: \(error)")
            }
        }
    }
}
