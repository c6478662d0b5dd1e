import StateBusWire

// The write path on the replica's loop: writes go out in order within the window of writes
// in flight, written by the write path's own encoder; answers resolve their receipts.

extension ReplicaClient {
    /// Sends writes made since the last call, in order, as long as fewer than
    /// ``ReplicaConfiguration/maxWritesInFlight`` are unanswered (only when live: before
    /// that, they wait). A write the socket will not take now stays queued and goes on the
    /// next call: after an answer, an expiry or a liveness tick.
    func flushWrites() {
        sendWrites()
        flushCalls()
    }

    private func sendWrites() {
        guard phase == .live else { return }
        let window = configuration.writeWindow
        let unsent = shared.inner.withLock { $0.state.takeUnsent(limit: window - $0.state.inFlight) }
        guard !unsent.isEmpty else { return }
        defer { awaitAnswersBusily() }
        for (index, write) in unsent.enumerated() {
            let id = takeRequestID()
            let bytes = WriteCodec.request(
                WireWrite(
                    protocolVersion: StateBusProtocol.version2, requestID: id, object: object, writeID: write.id, viewID: viewID,
                    changes: write.changes))
            if terms.maxMessageBytes > 0, bytes.count > terms.maxMessageBytes {
                shared.complete(writeID: write.id, with: .failure(tooLarge(bytes.count, what: "write")))
                continue
            }
            guard send(bytes, id: id) != nil else {
                // Not queued: it and every later one stay unsent, so order is kept.
                shared.inner.withLock { inner in
                    for later in unsent[index...] { inner.state.markUnsent(later.id) }
                }
                return
            }
        }
    }

    /// The refusal of a request larger than the host takes (``terms.maxMessageBytes``).
    func tooLarge(_ size: Int, what: String) -> StateBusError {
        StateBusError(
            .tooLarge,
            "the \(what) is \(size) bytes encoded; the host at \(controlEndpoint) takes requests of at most \(terms.maxMessageBytes) bytes "
                + "(HostConfiguration.maxMessageBytes): it was not sent. Split it, or raise the host's limit",
            object: object)
    }

    /// Takes the host's answer to a write.
    func handleWriteReply(writeID: UInt64, verdict: WriteVerdict) {
        switch verdict {
        case .failure(let error) where error.code == .notJoined || error.code == .viewIDInUse || error.code == .notLeader:
            // The host does not hold this connection as ours: ZeroMQ reconnected the socket
            // underneath us (the host restarted, or the connection dropped) and sent what was
            // queued on it; or it no longer leads its high-availability group. Nothing was
            // applied. A new connection and hello (a standby's refusal names the leader), and
            // every unanswered write goes again there, in order (the host's ledger answers a
            // copy of one it applied before); the receipt stays open.
            logger.info("the host at \(controlEndpoint) does not take this connection's writes; saying hello again")
            connect()
            return
        case .failure(let error) where error.code == .persistenceFailed:
            searchForLeader()
        default:
            break
        }
        shared.complete(writeID: writeID, with: verdict)
        // An answer frees a place in the window of writes in flight.
        flushWrites()
        answerTaken()
    }

    /// Fails the writes whose deadline passed without an answer, with `timeout`.
    func expireWrites() {
        let error = StateBusError(
            .timeout,
            "the host did not answer the write within \(configuration.writeTimeout) (ReplicaConfiguration.writeTimeout); "
                + "it may or may not have been applied: the view shows the host's value", object: object)
        let expired = shared.expireWrites(at: .now, with: error)
        if expired > 0 {
            logger.warning("\(expired) writes to \(object) timed out after \(configuration.writeTimeout) without an answer from \(controlEndpoint)")
        }
    }
}
