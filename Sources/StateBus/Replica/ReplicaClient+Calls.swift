import StateBusWire

// Action calls on the replica's engine: sent in call order once the replica is live and
// every write made before them is sent, answered by the host's `CallReply`, failed with
// `timeout` at their deadline.
//
// A call sent on a connection that is replaced before its answer came may have run: it
// fails `interrupted` (an action is not idempotent, so it is never sent twice), unless the
// host refused that connection (`notJoined`: nothing on it ran), and then it goes again.

extension ReplicaClient {
    /// Takes a call from ``Replica/call(_:arguments:timeout:)``.
    func enqueue(_ call: PendingCalls.Call) {
        guard !closed else {
            call.waiter.complete(.failure(StateBusError(.closed, "the replica is closed", object: object)))
            return
        }
        guard calls.count < configuration.maxCallsInFlight else {
            call.waiter.complete(
                .failure(
                    StateBusError(
                        .overloaded,
                        "\(calls.count) calls are waiting or running (ReplicaConfiguration.maxCallsInFlight); '\(call.request.action)' was not sent",
                        object: object)))
            return
        }
        calls.add(call)
        flushCalls()
    }

    /// Sends the calls not sent yet, in order, when live and no earlier write waits.
    func flushCalls() {
        guard phase == .live, calls.count > 0 else { return }
        guard !shared.inner.withLock({ $0.state.hasUnsentWrites }) else { return }
        for call in calls.unsent {
            var request = call.request
            request.viewID = viewID
            // Encoded once, for the size check and the send.
            guard dealer != nil, let (bytes, id) = encode(.call(request)) else { return }
            if terms.maxMessageBytes > 0, bytes.count > terms.maxMessageBytes {
                calls.remove(call.id)?.waiter.complete(.failure(tooLarge(bytes.count, what: "call of '\(call.request.action)'")))
                continue
            }
            // Not taken now (the socket's queue is full): it and later ones go next time.
            guard send(bytes, id: id) != nil else { return }
            calls.markSent(call.id)
            awaitAnswersBusily()
        }
    }

    /// Takes the host's answer to a call.
    func handleCallReply(callID: UInt64, outcome: CallOutcome) {
        if case .failure(let error) = outcome, error.code == .notJoined || error.code == .viewIDInUse {
            // The host does not hold this connection as ours, so this call did not run: a new
            // connection and hello, and it goes again.
            logger.info("the host at \(controlEndpoint) does not know this connection (\(error.code)); saying hello again")
            calls.refusedUnjoined(callID)
            connect()
            return
        }
        guard let call = calls.remove(callID) else { return }  // late: it timed out
        call.waiter.complete(outcome)
        answerTaken()
    }

    /// Called as a connection is replaced: calls sent on it either go again (the host refused
    /// them as not joined, so they did not run) or fail `interrupted` (they may have run).
    func settleSentCalls() {
        for call in calls.takeSent() {
            call.waiter.complete(
                .failure(
                    StateBusError(
                        .interrupted,
                        "the connection to \(controlEndpoint) was replaced (the host restarted or went silent) before '\(call.request.action)' was answered: it may or may not have run; read the state before calling again",
                        object: object)))
        }
    }

    func expireCalls() {
        guard calls.count > 0 else { return }
        for call in calls.takeExpired(at: .now) {
            call.waiter.complete(
                .failure(
                    StateBusError(
                        .timeout,
                        call.sent
                            ? "the host did not answer '\(call.request.action)' in time: it may or may not have run"
                            : "'\(call.request.action)' was not sent in time: the replica was not live (it did not run)",
                        object: object)))
        }
    }

    func failAllCalls(_ error: StateBusError) {
        for call in calls.takeAll() { call.waiter.complete(.failure(error)) }
    }
}
