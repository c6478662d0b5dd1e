import Foundation
import StateBus
import Synchronization

/// A host in a process of its own (`statebus host`, or your own host executable).
///
/// Its state is read through an observer ``Replica`` in the test process, so a test can wait
/// on it and compare views with it like an in-process host. Fault helpers: ``kill()``,
/// ``restart(timeout:)``, ``pause()``, ``resume()``.
public final class HostNode: StateObservable {
    /// The process.
    public let process: NodeProcess
    /// The control endpoint it binds.
    public let controlEndpoint: String
    /// The object it serves that ``observedState()`` reports.
    public let object: String
    /// The replica that observes the host for the test.
    public let observer: Replica

    init(process: NodeProcess, controlEndpoint: String, object: String, observer: Replica) {
        self.process = process
        self.controlEndpoint = controlEndpoint
        self.object = object
        self.observer = observer
    }

    /// `host NAME`.
    public var observedName: String { "host \(process.name)" }

    /// The host's state as its observer replica holds it: live only while the observer is in
    /// step, so a killed or paused host is not live.
    public func observedState() async -> ObservedState? { await observer.observedState() }

    /// The epoch of the current run, from what the host answers.
    public var epoch: UInt64 { observer.epoch }

    /// Kills the process (SIGKILL): no goodbye, no clean shut-down.
    public func kill() { process.kill() }

    /// Stops the process (SIGSTOP): it neither answers nor sends heartbeats until ``resume()``.
    public func pause() { process.pause() }

    /// Continues a paused process (SIGCONT).
    public func resume() { process.resume() }

    /// Starts the host again (killing it first if it runs) and waits until it answers and
    /// the observer has joined its new epoch.
    /// - Throws: when it cannot start, or ``WaitTimeout`` when it does not answer in time.
    public func restart(timeout: Duration = .seconds(120)) async throws {
        let previous = observer.epoch
        if process.isRunning { process.kill() }
        _ = await process.exitStatus()
        try process.start()
        try await waitUntilReady(previousEpoch: previous, timeout: timeout)
    }

    /// Waits until the host answers and the observer is live on an epoch other than
    /// `previousEpoch`.
    func waitUntilReady(previousEpoch: UInt64?, timeout: Duration) async throws {
        let observer = self.observer
        let process = self.process
        try await waitUntil(
            "\(observedName) to answer on \(controlEndpoint)", timeout: timeout,
            lastSeen: {
                "observer: \(observer.connectionState), epoch \(observer.epoch)\nlast lines:\n" + process.output.suffix(10).joined(separator: "\n")
            }
        ) {
            guard observer.connectionState == .live else { return false }
            return previousEpoch.map { observer.epoch != $0 } ?? true
        }
    }
}
