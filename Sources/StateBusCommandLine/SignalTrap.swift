import Dispatch
import Foundation
import StateBusRuntime

/// Turns SIGINT and SIGTERM into an awaitable event, so a node can stop gracefully.
package final class SignalTrap: Sendable {
    /// Everything the trap holds, behind one lock: the signal handlers fire on a global queue
    /// while ``wait()`` runs on any task.
    private struct State {
        /// Whether a stop signal has arrived; stays true.
        var fired = false
        /// The callers of ``wait()`` that arrived before the signal.
        var waiting: [CheckedContinuation<Void, Never>] = []
        /// The dispatch sources, kept so they stay alive. Each one's handler holds the trap,
        /// so trap and sources keep each other alive for the rest of the process: a trap is
        /// made once per process and the signals stay ignored after it anyway.
        var sources: [any DispatchSourceSignal] = []
    }

    private let state = Locked(State())

    private init() {}

    /// Traps SIGINT and SIGTERM from now on.
    package static func stopSignals() -> SignalTrap {
        let trap = SignalTrap()
        // Made inside the lock so they never exist outside the state that owns them (the
        // sources are not Sendable). A signal arriving meanwhile waits for the lock in `fire`.
        trap.state.withLock { state in
            for number in [SIGINT, SIGTERM] {
                // Ignored first, so the default action (ending the process) no longer applies;
                // the dispatch source still sees the signal.
                signal(number, SIG_IGN)
                let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
                source.setEventHandler { trap.fire() }
                source.resume()
                state.sources.append(source)
            }
        }
        return trap
    }

    private func fire() {
        let waiting = state.withLock { state in
            state.fired = true
            defer { state.waiting = [] }
            return state.waiting
        }
        for continuation in waiting { continuation.resume() }
    }

    /// Returns once a stop signal has arrived.
    package func wait() async {
        await withCheckedContinuation { continuation in
            let fired = state.withLock { state in
                if !state.fired { state.waiting.append(continuation) }
                return state.fired
            }
            if fired { continuation.resume() }
        }
    }
}
