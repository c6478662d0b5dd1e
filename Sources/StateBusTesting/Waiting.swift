import StateBusRuntime
import StateBusWire

// Waits with deadlines, in place of sleeps. Each wait checks its condition at once, then
// every few milliseconds until it holds or the deadline passes; a timeout names what was
// awaited and shows the last state seen, so a failing test says why. The nodes a test
// waits on live in several processes and kinds (hosts, replicas, process views), so the
// waits poll them rather than subscribe to each kind's change stream; a poll costs
// microseconds, and the condition decides, never a fixed delay.

/// How often a wait checks its condition.
let pollInterval = Duration.milliseconds(5)

/// Waits until `condition` holds.
/// - Parameters:
///   - what: what is awaited, for the timeout error.
///   - timeout: the deadline (generous by default: CI machines are busy).
///   - lastSeen: describes the state when the wait times out.
///   - condition: checked now and then every few milliseconds; a thrown error ends the wait.
/// - Throws: ``WaitTimeout`` naming `what` with `lastSeen`; `CancellationError` when the
///   task is cancelled; whatever `condition` throws.
public func waitUntil(
    _ what: String, timeout: Duration = .seconds(120),
    lastSeen: @Sendable () async -> String = { "" },
    _ condition: @Sendable () async throws -> Bool
) async throws {
    let deadline = ContinuousClock.now + timeout
    while true {
        if try await condition() { return }
        guard ContinuousClock.now < deadline else {
            throw WaitTimeout(what: what, timeout: timeout, lastSeen: await lastSeen())
        }
        try await Task.sleep(for: pollInterval)
    }
}

/// Waits until a node's state satisfies `predicate`.
/// - Parameters:
///   - node: a host object, replica, view node or host node.
///   - what: what is awaited, for the timeout error.
///   - timeout: the deadline.
///   - predicate: the test of the node's state.
/// - Returns: the state that satisfied it.
/// - Throws: ``WaitTimeout`` with the node's last state.
@discardableResult
public func waitUntil(
    _ node: some StateObservable, _ what: String, timeout: Duration = .seconds(120),
    where predicate: @escaping @Sendable (ObservedState) -> Bool
) async throws -> ObservedState {
    let found = Found()
    try await waitUntil("\(node.observedName): \(what)", timeout: timeout, lastSeen: { await describe(node) }) {
        guard let state = await node.observedState(), predicate(state) else { return false }
        found.state.withLock { $0 = state }
        return true
    }
    return try found.state.withLock { state in
        guard let state else { throw WaitTimeout(what: "\(node.observedName): \(what)", timeout: timeout, lastSeen: "") }
        return state
    }
}

/// Waits until a node is live and shows `value` for `property` (a path such as
/// `user.email` reaches into nested values).
/// - Returns: the state that showed it.
/// - Throws: ``WaitTimeout`` with the node's last state; ``ValuePathError`` for a bad path.
@discardableResult
public func waitUntil(
    _ node: some StateObservable, _ property: String, equals value: Value, timeout: Duration = .seconds(120)
) async throws -> ObservedState {
    let path = try ValuePath(parsing: property)
    return try await waitUntil(node, "\(property) == \(value)", timeout: timeout) { state in
        state.isLive && Value.map(state.values)[path].map { sameValue($0, value) } == true
    }
}

/// Waits until every node holds exactly the state of `truth` (usually the host): the same
/// epoch, sequence and values, and live. Changes made while it waits are waited for too:
/// it ends when all agree at one moment.
/// - Parameters:
///   - truth: the reference, usually ``StateHost/observed(_:)`` or a ``HostNode``.
///   - nodes: the replicas or view nodes that must agree with it.
///   - timeout: the deadline.
/// - Throws: ``WaitTimeout`` listing, for each node that still differs, what differs.
public func waitUntilConverged(
    _ truth: some StateObservable, _ nodes: [any StateObservable], timeout: Duration = .seconds(120)
) async throws {
    let names = ([truth.observedName] + nodes.map(\.observedName)).joined(separator: ", ")
    try await waitUntil("\(names) to converge", timeout: timeout, lastSeen: { await mismatches(truth, nodes) }) {
        let expected = await truth.observedState()
        for node in nodes where !StateMismatch.agree(expected, await node.observedState()) { return false }
        return expected != nil
    }
}

/// Checks, now, that every node holds the state of `truth`.
/// - Throws: the first ``StateMismatch``, with a field-by-field diff.
public func expectSameState(_ truth: some StateObservable, _ nodes: [any StateObservable]) async throws {
    let expected = await truth.observedState()
    for node in nodes {
        let actual = await node.observedState()
        if !StateMismatch.agree(expected, actual) {
            throw StateMismatch(expectedName: truth.observedName, actualName: node.observedName, expected: expected, actual: actual)
        }
    }
}

private func describe(_ node: some StateObservable) async -> String {
    "\(node.observedName): \(await node.observedState().map(\.description) ?? "no state yet")"
}

private func mismatches(_ truth: some StateObservable, _ nodes: [any StateObservable]) async -> String {
    let expected = await truth.observedState()
    var lines = [await describe(truth)]
    for node in nodes {
        let actual = await node.observedState()
        if !StateMismatch.agree(expected, actual) {
            lines.append(
                StateMismatch(expectedName: truth.observedName, actualName: node.observedName, expected: expected, actual: actual).description)
        } else {
            lines.append("\(node.observedName): in step")
        }
    }
    return lines.joined(separator: "\n")
}

/// Carries a wait's result out of its `@Sendable` condition.
private final class Found: Sendable {
    let state = Locked<ObservedState?>(nil)
}
