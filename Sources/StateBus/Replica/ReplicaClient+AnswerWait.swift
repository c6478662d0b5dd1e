// While the replica waits for the host's answer to a write or a call, its loop polls instead
// of sleeping, for at most `ReplicaConfiguration.busyPollingForAnswers` per request: a
// sleeping thread on an idle CPU takes tens of microseconds to wake, a third of a loopback
// round trip on a small virtual machine.

extension ReplicaClient {
    /// Called after a write or a call went out: the loop polls through the round trip.
    func awaitAnswersBusily() {
        thread.pollBusily(for: configuration.busyPollingForAnswers)
    }

    /// Called after an answer (or the echo of a write) was taken: once no write or call waits
    /// for one, the loop may sleep again (the writer's own update follows on the updates
    /// socket, but every other view waits for that one too, and a CPU kept busy here is one
    /// they cannot use).
    func answerTaken() {
        guard configuration.busyPollingForAnswers > .zero, calls.count == 0, shared.inner.withLock({ $0.state.inFlight == 0 }) else { return }
        thread.stopPollingBusily()
    }
}
