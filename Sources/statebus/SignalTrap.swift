import Dispatch
import Foundation
import Synchronization

/// Turns SIGINT and SIGTERM into an awaitable event, so a node can stop gracefully.
final class SignalTrap: Sendable {
    private let state = Mutex<(fired: Bool, waiting: [CheckedContinuation<Void, Never>])>((false, []))
    /// Kept so the sources stay alive; only written once, before the trap is shared.
    nonisolated(unsafe) private var sources: [any DispatchSourceSignal] = []

    /// Traps SIGINT and SIGTERM from now on.
    static func stopSignals() -> SignalTrap {
        let trap = SignalTrap()
        var sources: [any DispatchSourceSignal] = []
        for number in [SIGINT, SIGTERM] {
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { trap.fire() }
            source.resume()
            sources.append(source)
        }
        trap.sources = sources
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
    func wait() async {
        await withCheckedContinuation { continuation in
            let fired = state.withLock { state in
                if !state.fired { state.waiting.append(continuation) }
                return state.fired
            }
            if fired { continuation.resume() }
        }
    }
}
