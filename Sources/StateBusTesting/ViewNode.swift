import Foundation
import StateBus
import StateBusRuntime
import StateBusWire

/// A view in a process of its own, usually `statebus watch --json --edits`: a replica of one
/// object that prints its state at every change and takes edits on its standard input.
///
/// Start one with ``TestSystem/startView(of:at:name:timeout:)``, or run your own view
/// executable as one with ``TestSystem/startViewNode(executable:arguments:objects:control:name:)``.
/// Its ``state`` is what the process printed last; ``set(_:to:timeout:)`` writes through it
/// as a view's binding would and returns the host's verdict. Fault helpers: ``kill()``,
/// ``restart(timeout:)``, ``pause()``, ``resume()``, ``reconnect()``.
public final class ViewNode: StateObservable {
    /// The process.
    public let process: NodeProcess
    /// The object it binds.
    public let object: String
    /// Its node name.
    public let name: String
    /// The host's control endpoint it joined.
    public let controlEndpoint: String

    /// Input lines sent to the current run (its `--edits` numbers lines from 1).
    private let sentLines = Locked(0)

    init(process: NodeProcess, object: String, name: String, controlEndpoint: String) {
        self.process = process
        self.object = object
        self.name = name
        self.controlEndpoint = controlEndpoint
    }

    /// `view NAME`.
    public var observedName: String { "view \(name)" }

    /// The state the current run printed last, `nil` before its first snapshot.
    public var state: ObservedState? { Self.lastState(in: process.output.suffix(from: currentRunStart)) }

    /// The state the current run printed last.
    public func observedState() async -> ObservedState? { state }

    /// The index in ``NodeProcess/output`` where the current run's lines begin.
    private var currentRunStart: Int { runStart.withLock { $0 } }
    private let runStart = Locked(0)

    // MARK: Writing

    /// Writes `value` to `property` through this view, as a binding would, and waits for
    /// the host's verdict.
    /// - Parameters:
    ///   - property: a property, or a path into one (`user.email`).
    ///   - value: the new value.
    ///   - timeout: how long to wait for the verdict.
    /// - Returns: the sequence number the host gave the change.
    /// - Throws: `StateBusError` with the host's code and reason when it rejects the write;
    ///   ``WaitTimeout`` when no verdict comes.
    @discardableResult
    public func set(_ property: String, to value: Value, timeout: Duration = .seconds(120)) async throws -> UInt64 {
        let number = sendLine("\(property) \(Self.json(value))")
        let prefix = "{\"line\":\(number),"
        let line = try await process.waitForLine("the host's verdict on \(property) = \(value)", timeout: timeout) { $0.hasPrefix(prefix) }
        let outcome = try JSONDecoder().decode(EditOutcome.self, from: Data(line.utf8))
        if outcome.accepted == true, let sequence = outcome.sequence { return sequence }
        let code = outcome.code.flatMap(StateBusError.Code.init(rawValue:)) ?? .other
        throw StateBusError(code, outcome.message ?? line, object: object, property: property)
    }

    /// Writes an `Encodable` value (a struct, an enum) through this view.
    /// - Returns: the sequence number the host gave the change.
    /// - Throws: as ``set(_:to:timeout:)``, or the encoder's error.
    @discardableResult
    public func set<T: Encodable>(_ property: String, to value: T, timeout: Duration = .seconds(120)) async throws -> UInt64 {
        try await set(property, to: try ValueEncoder().encode(value), timeout: timeout)
    }

    // MARK: Faults

    /// Drops the view's connection to the host; it goes stale, joins again and resyncs.
    public func reconnect() { _ = sendLine(":reconnect") }

    /// Sends one input line and returns its number in the current run: numbered and sent
    /// under one lock, so concurrent callers match their own outcome lines.
    private func sendLine(_ text: String) -> Int {
        sentLines.withLock { sent in
            sent += 1
            process.send(line: text)
            return sent
        }
    }

    /// Kills the process (SIGKILL).
    public func kill() { process.kill() }

    /// Stops the process (SIGSTOP): it hears nothing until ``resume()``.
    public func pause() { process.pause() }

    /// Continues a paused process (SIGCONT).
    public func resume() { process.resume() }

    /// Starts the process again (after ``kill()``, or kills it first) and waits until it
    /// is live.
    /// - Throws: when it cannot start, or ``WaitTimeout`` when it does not join in time.
    public func restart(timeout: Duration = .seconds(120)) async throws {
        if process.isRunning { process.kill() }
        // The exit report comes once the old run's last lines are in, so none of them can
        // be taken for the new run's.
        _ = await process.exitStatus()
        runStart.withLock { $0 = process.lineCount }
        sentLines.withLock { $0 = 0 }
        try process.start()
        try await waitUntilLive(timeout: timeout)
    }

    /// Waits until the view has joined and is in step with its host.
    /// - Throws: ``WaitTimeout`` with the view's last lines.
    public func waitUntilLive(timeout: Duration = .seconds(120)) async throws {
        try await waitUntil(self, "to be live", timeout: timeout) { $0.isLive }
    }

    // MARK: Output

    /// Reads the last printed state: the newest state line, with a later connection event
    /// (`stale`, say) overriding its liveness.
    static func lastState(in lines: ArraySlice<String>) -> ObservedState? {
        var connection: String?
        for line in lines.reversed() where line.hasPrefix("{") {
            guard let printed = try? JSONDecoder().decode(PrintedState.self, from: Data(line.utf8)) else { continue }
            if let values = printed.values, let epoch = printed.epoch, let sequence = printed.sequence {
                let live = (connection ?? printed.connection) == "live"
                return ObservedState(epoch: epoch, sequence: sequence, values: values, isLive: live)
            }
            if printed.event == "connection", connection == nil { connection = printed.connection }
        }
        return nil
    }

    static func json(_ value: Value) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return (try? encoder.encode(value)).map { String(decoding: $0, as: UTF8.self) } ?? "null"
    }

    /// A state or connection line of `statebus watch --json`.
    private struct PrintedState: Decodable {
        var event: String?
        var connection: String?
        var epoch: UInt64?
        var sequence: UInt64?
        var values: [String: Value]?
    }

    /// An outcome line of `statebus watch --edits --json`.
    private struct EditOutcome: Decodable {
        var accepted: Bool?
        var sequence: UInt64?
        var code: String?
        var message: String?
    }
}
