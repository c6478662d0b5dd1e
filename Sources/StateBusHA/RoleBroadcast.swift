import CoreMetrics
import StateBusRuntime

/// A host's role, told to everyone who listens: the current one at once, then each change.
final class RoleBroadcast: Sendable {
    private struct State {
        var current = HighAvailabilityRole.starting
        var listeners: [Int: AsyncStream<HighAvailabilityRole>.Continuation] = [:]
        var nextID = 0
        var finished = false
    }

    private let state = Locked(State())

    /// The role now.
    var current: HighAvailabilityRole { state.withLock { $0.current } }

    /// The role now, then every change, until ``finish(with:)``.
    func changes() -> AsyncStream<HighAvailabilityRole> {
        let (stream, continuation) = AsyncStream<HighAvailabilityRole>.makeStream(bufferingPolicy: .bufferingNewest(16))
        let finished = state.withLock { state -> Bool in
            continuation.yield(state.current)
            guard !state.finished else { return true }
            let id = state.nextID
            state.nextID += 1
            state.listeners[id] = continuation
            continuation.onTermination = { [weak self] _ in self?.state.withLock { _ = $0.listeners.removeValue(forKey: id) } }
            return false
        }
        if finished { continuation.finish() }
        return stream
    }

    /// 1 while the host leads its group, 0 otherwise (`statebus_ha_leader`, on `/metrics`).
    private let leaderGauge: Gauge

    init(group: String) {
        leaderGauge = Gauge(label: "statebus_ha_leader", dimensions: [("group", group)])
        leaderGauge.record(0)
    }

    /// Tells every listener of a new role.
    func publish(_ role: HighAvailabilityRole) {
        if case .leader = role { leaderGauge.record(1) } else { leaderGauge.record(0) }
        state.withLock { state in
            guard !state.finished, state.current != role else { return }
            state.current = role
            for listener in state.listeners.values { listener.yield(role) }
        }
    }

    /// Tells the last role and ends every listener's sequence.
    func finish(with role: HighAvailabilityRole) {
        leaderGauge.record(0)
        let listeners = state.withLock { state in
            state.current = role
            state.finished = true
            defer { state.listeners = [:] }
            return Array(state.listeners.values)
        }
        for listener in listeners {
            listener.yield(role)
            listener.finish()
        }
    }
}
