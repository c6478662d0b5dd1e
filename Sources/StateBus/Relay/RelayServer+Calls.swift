import StateBusWire

// Action calls through a relay: forwarded upstream on the relay's connection under the
// view's own view id, like writes, and the answer passed back. A call in flight when the
// relay joins its upstream again is answered `interrupted` (it may or may not have run), not
// sent again: an action is not idempotent.

extension RelayServer {
    /// Forwards a view's call upstream, or answers at once with why it cannot go.
    func forward(_ call: ViewRequest.CallRequest, from requester: Requester) {
        var refusal = admission(of: call.viewID, to: call.object, from: requester.identity, for: "call")
        if refusal == nil, forwarded.count >= configuration.maxForwardedWrites {
            refusal = StateBusError(
                .overloaded,
                "this relay has \(forwarded.count) writes and calls on their way upstream (RelayConfiguration.maxForwardedWrites); the call did not go: try again later",
                object: call.object)
        }
        if refusal == nil {
            if phase != .hello, let upstreamRequestID = sendUpstream(.forwardedCall(call)) {
                forwarded[upstreamRequestID] = ForwardedWrite(
                    requester: requester, viewID: call.viewID, writeID: 0,
                    deadline: .now + configuration.forwardedWriteTimeout, callID: call.callID)
                counters.forwardedCalls.add(1, ordering: .relaxed)
                return
            }
            refusal = StateBusError(
                .notJoined, "this relay cannot reach its upstream now; say hello again and send the call again (it did not run)", object: call.object)
            clients.unbind(viewID: call.viewID)
        }
        guard let refusal else { return }
        counters.badMessages.add(1, ordering: .relaxed)
        answerCall(call.callID, error: refusal, to: requester)
    }

    /// Answers a view's call with an error.
    func answerCall(_ callID: UInt64, error: StateBusError, to requester: Requester) {
        send(.call(callID: callID, outcome: .failure(error)), to: requester)
    }
}
