import StateBusWire

extension Replica {
    /// Calls an action of the object (a method marked ``Action()`` on the host's model): it
    /// runs on the host, and this returns its result once this replica holds every change
    /// the action made to the object.
    ///
    /// Models call their actions with plain method calls (`try await model.clearCompleted()`);
    /// this is the untyped form under them, for tools.
    ///
    /// The call goes after every write this replica made before it. It waits to be sent while
    /// the replica is not live, up to the deadline.
    /// - Parameters:
    ///   - action: the action's name (see ``HostDescription/actions``).
    ///   - arguments: one value per parameter, in order.
    ///   - timeout: the deadline for the whole call (default
    ///     ``ReplicaConfiguration/callTimeout``).
    /// - Returns: the action's result (`.null` for an action that returns nothing).
    /// - Throws: `StateBusError`: `unknownAction` (no such action, or the wrong number of
    ///   arguments), `typeMismatch` (an argument does not decode as its parameter's type),
    ///   `actionFailed` (the action threw; its message says what), `forbidden` (the key may
    ///   not write the object), `overloaded` (too many calls here or on the host; it did not
    ///   run), `interrupted` (the connection was replaced mid-call: it may have run),
    ///   `timeout`, `closed`.
    public func call(_ action: String, arguments: [Value] = [], timeout: Duration? = nil) async throws(StateBusError) -> Value {
        let timeout = timeout ?? configuration.callTimeout
        let deadline = ContinuousClock.now + timeout
        let id = shared.nextCallID.wrappingAdd(1, ordering: .relaxed).oldValue
        let request = FollowerRequest.Call(object: object, action: action, arguments: arguments, callID: id)
        let waiter = CallWaiter()
        let call = PendingCalls.Call(id: id, request: request, waiter: waiter, deadline: deadline)
        let promise = self.promise
        let closed = StateBusError(.closed, "the replica is closed", object: object)
        // When the loop stops before the call is queued there (the replica closing), the
        // waiter hears it: nothing else would answer or expire the call.
        let queued = loop.execute(
            { _ in
                if let engine = promise.value { engine.value.enqueue(call) } else { waiter.complete(.failure(closed)) }
            },
            ifStopped: { waiter.complete(.failure(closed)) })
        guard queued else { throw closed }
        let (result, sequence) = try await waiter.outcome().get()
        // The answer can come before the publication of the action's last change: wait for
        // it, so the caller sees what the action did.
        let left = deadline - .now
        do {
            try await waitFor(timeout: max(left, .milliseconds(1)), "the changes of '\(action)' (sequence \(sequence))") { replica in
                if replica.connectionState == .closed { throw StateBusError(.closed, "the replica is closed", object: replica.object) }
                return replica.sequence >= sequence
            }
        } catch let error as StateBusError {
            throw error
        } catch {
            throw StateBusError(.other, "\(error)", object: object)
        }
        return result
    }
}
