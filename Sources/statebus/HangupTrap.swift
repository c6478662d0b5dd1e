import Dispatch
import Foundation
import StateBus
import StateBusCommandLine
import StateBusRuntime

/// Runs a handler on every SIGHUP, the Unix way to say "read your configuration again".
final class HangupTrap: Sendable {
    /// The dispatch source, kept alive as long as the trap (not Sendable, so behind a lock
    /// that only this class touches).
    private let source = Locked<(any DispatchSourceSignal)?>(nil)

    private init() {}

    /// Starts calling `handler` on each SIGHUP (which then no longer ends the process).
    static func start(_ handler: @escaping @Sendable () -> Void) -> HangupTrap {
        let trap = HangupTrap()
        trap.source.withLock { source in
            signal(SIGHUP, SIG_IGN)
            let made = DispatchSource.makeSignalSource(signal: SIGHUP, queue: .global())
            made.setEventHandler(handler: handler)
            made.resume()
            source = made
        }
        return trap
    }

    /// The trap of a host with keys: each SIGHUP re-reads its authorized keys file and
    /// prints what changed, or why the file was not taken; `nil` for a host without keys.
    static func reloadingKeys(of host: StateHost, when hasKeys: Bool) -> HangupTrap? {
        reloadingKeys(when: hasKeys) { try await host.reloadAuthorizedKeys() }
    }

    /// The trap of a host with keys, reloading them with `reload`.
    static func reloadingKeys(when hasKeys: Bool, _ reload: @escaping @Sendable () async throws -> AuthorizedKeysReload) -> HangupTrap? {
        guard hasKeys else { return nil }
        return start {
            Task {
                do {
                    emit("\(try await reload())")
                } catch {
                    emit("authorized keys not reloaded: \(error)")
                }
            }
        }
    }
}
