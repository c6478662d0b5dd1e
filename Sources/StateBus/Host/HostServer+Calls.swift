import StateBusWire

// Action calls: a view asks the host to run a method of an object (`@Action`). The loop
// checks the call, starts the action in a task (it runs on the model's actor, the main
// actor, never on the loop), and answers when the action returns, with the object's
// sequence at that moment: once the view has applied it, it holds every change the action
// made.

extension HostServer {
    /// Checks a call and starts its action, or answers at once with why it does not run.
    func handleCall(_ call: ViewRequest.CallRequest, from requester: Requester) {
        if let refusal = refusal(of: call, from: requester.identity) {
            counters.callsRefused.add(1, ordering: .relaxed)
            answerCall(call.callID, with: .failure(refusal), to: requester)
            return
        }
        guard let handler = actions.handler(for: call.object) else {
            counters.callsRefused.add(1, ordering: .relaxed)
            let error = StateBusError(
                .unknownAction, "'\(call.object)' is not served from a model on this host, so none of its actions can run here", object: call.object)
            answerCall(call.callID, with: .failure(error), to: requester)
            return
        }
        runningCalls += 1
        counters.callsStarted.add(1, ordering: .relaxed)
        let arguments = call.arguments
        let (object, action, callID) = (call.object, call.action, call.callID)
        let server = onLoop
        let state = self.state
        Task {
            let outcome: Result<Value, StateBusError>
            do {
                outcome = .success(try await handler(action, arguments))
            } catch let error as StateBusError {
                outcome = .failure(StateBusError(error.code, error.message, object: error.object ?? object, property: error.property))
            } catch {
                outcome = .failure(StateBusError(.actionFailed, "\(object).\(action) threw: \(error)", object: object))
            }
            // Read after the action returned: every change it made to the object is in.
            let sequence = state.withStore(object) { $0.sequence } ?? 0
            _ = server.loop.execute { _ in
                server.value.object?.finishCall(callID, outcome: outcome.map { (result: $0, sequence: sequence) }, to: requester)
            }
        }
    }

    /// Why a call cannot run, or `nil` when it can.
    private func refusal(of call: ViewRequest.CallRequest, from identity: [UInt8]) -> StateBusError? {
        // Unknown fields mean a client built for another schema: refuse rather than guess.
        if call.carriesUnknownFields {
            return StateBusError(.badRequest, "the call has fields this host does not know; check the protocol version", object: call.object)
        }
        switch clients.admitsWrite(viewID: call.viewID, from: identity) {
        case .admitted: break
        case .notJoined:
            return StateBusError(
                .notJoined,
                "view id '\(call.viewID)' has not said hello on this connection to this host; send a hello first, then the call again",
                object: call.object)
        case .heldByAnother:
            return StateBusError(
                .viewIDInUse, "view id '\(call.viewID)' belongs to another connection; this connection may not call as it", object: call.object)
        }
        guard let definition = definitions[call.object] else {
            return StateBusError(.unknownObject, "this host serves no object '\(call.object)'", object: call.object)
        }
        guard let action = definition.action(named: call.action) else {
            let known = definition.actions.map(\.signature)
            return StateBusError(
                .unknownAction,
                "'\(call.object)' has no action '\(call.action)'; "
                    + (known.isEmpty ? "it has none" : "it has: \(known.joined(separator: ", "))"),
                object: call.object)
        }
        guard call.argumentCount == action.parameters.count else {
            return StateBusError(
                .unknownAction,
                "\(call.object).\(action.signature) takes \(action.parameters.count) argument(s), the call has \(call.argumentCount)",
                object: call.object)
        }
        guard runningCalls < configuration.maxRunningCalls else {
            return StateBusError(
                .overloaded,
                "\(runningCalls) calls are running on this host (HostConfiguration.maxRunningCalls); '\(call.action)' did not run: try again later",
                object: call.object)
        }
        return nil
    }

    /// Answers a call whose action returned (or threw).
    private func finishCall(_ callID: UInt64, outcome: CallOutcome, to requester: Requester) {
        runningCalls -= 1
        var result = outcome
        if case .success(let (value, _)) = outcome, case let size = value.encodedSize,
            size > configuration.maxMessageBytes
        {
            result = .failure(
                StateBusError(
                    .tooLarge,
                    "the action's result has \(size) bytes; views accept at most \(configuration.maxMessageBytes) (HostConfiguration.maxMessageBytes). Its changes stay applied"
                ))
        }
        switch result {
        case .success: counters.callsSucceeded.add(1, ordering: .relaxed)
        case .failure: counters.callsFailed.add(1, ordering: .relaxed)
        }
        answerCall(callID, with: result, to: requester)
    }

    /// Sends a call's answer (queued behind the client's earlier replies when need be).
    func answerCall(_ callID: UInt64, with outcome: CallOutcome, to requester: Requester) {
        send(.call(callID: callID, outcome: outcome), to: requester)
    }
}
