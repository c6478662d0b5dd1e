import Foundation
import StateBusTesting

/// Runs blocking work (a wait for a process to exit) on a thread of its own, off the few
/// threads that run every test's async code: on two cores there are two, and two tests that
/// block them at once stall all the others (calls then time out, heartbeats go missing).
func onOwnThread<Value: Sendable>(_ body: @escaping @Sendable () throws -> Value) async throws -> Value {
    try await withCheckedThrowingContinuation { continuation in
        Thread { continuation.resume(with: Result { try body() }) }.start()
    }
}

extension NodeProcess {
    /// ``NodeProcess/waitForExit(timeout:)`` on a thread of its own: a demo or a client
    /// run that takes a minute must not hold one of the two threads every test's async code
    /// (and a served model's actions) runs on.
    func exited(timeout: Duration = .seconds(30)) async throws -> Int32 {
        try await onOwnThread { try self.waitForExit(timeout: timeout) }
    }
}
