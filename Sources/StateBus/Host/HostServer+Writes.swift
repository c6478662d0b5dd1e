import Foundation
import StateBusWire

// A view's write: identity, copies (the ledger), validation and application; the answer goes
// out with the batch's publication (``publishPending()``), or after its group commit.

extension HostServer {
    /// Checks, applies and answers a view's write (already decoded, with no unknown fields).
    func handleWrite(_ write: WireWrite, from requester: Requester) {
        turn.noteWrite()
        // A value where the operation takes none: refused as a malformed write, like unknown
        // fields, rather than ignored.
        for change in write.changes {
            guard let operation = change.operationRefusingItsValue else { continue }
            counters.badMessages.add(1, ordering: .relaxed)
            counters.writesRejected.add(1, ordering: .relaxed)
            let error = StateBusError(
                .badRequest,
                "the change of '\(change.property)' is a \(operation), which takes no value, but it carries \(change.value); leave `value` unset or null",
                object: write.object, property: change.property)
            answer(write: write.writeID, with: .failure(error), to: requester)
            return
        }
        if case let admission = clients.admitsWrite(viewID: write.viewID, from: requester.identity), admission != .admitted {
            counters.writesRejected.add(1, ordering: .relaxed)
            let error =
                admission == .notJoined
                ? StateBusError(
                    .notJoined,
                    "view id '\(write.viewID)' has not said hello on this connection to this host (it restarted, or the connection is new); "
                        + "send a hello first, then the write again",
                    object: write.object)
                : StateBusError(
                    .viewIDInUse, "view id '\(write.viewID)' belongs to another connection; this connection may not write as it",
                    object: write.object)
            answer(write: write.writeID, with: .failure(error), to: requester)
            return
        }
        let origin = write.viewID.isEmpty ? "anonymous" : write.viewID
        // The digest finds a copy and is recorded (and stored, when durable); computed only
        // where it is needed, so that a write published at once (below) is not held up by it.
        var knownDigest: UInt64?
        func digest() -> UInt64 {
            if let knownDigest { return knownDigest }
            let digest = WriteDigest.of(object: write.object, changes: write.changes)
            knownDigest = digest
            return digest
        }
        if !write.viewID.isEmpty, let earlier = ledger.answer(toCopyFrom: write.viewID, writeID: write.writeID, digest: digest()) {
            // A copy of a write already handled (sent again after a reconnect, or to the
            // next host after a crash): answered as the first time, nothing changed.
            counters.duplicateWrites.add(1, ordering: .relaxed)
            turn.hold(
                PendingReply(
                    requester: requester, verdict: earlier.verdict, object: write.object, sequence: 0, durable: earlier.durable, view: write.viewID,
                    writeID: write.writeID, digest: earlier.digest, isCopy: true))
            return
        }
        var durable = false
        var verdict: WriteVerdict = .failure(StateBusError(.other, "the write was not handled", object: write.object))
        defer {
            if !write.viewID.isEmpty {
                ledger.record(view: write.viewID, writeID: write.writeID, answer: .init(verdict: verdict, durable: durable, digest: digest()))
            }
        }
        do {
            let result = try state.apply(write.changes, to: write.object, fromView: origin, writeID: write.writeID)
            counters.writesAccepted.add(1, ordering: .relaxed)
            verdict = .success(result.sequence)
            let persistedProperty = persistence?.firstPersisted(write.object, write.changes.map(\.property))
            durable = persistedProperty != nil
            let route = turn.route(
                appliedWrite: .init(
                    durable: durable, commitIdle: commitPipeline.isIdle,
                    confirmsByEcho: clients.confirmsByEcho(viewID: write.viewID, writeID: write.writeID, from: requester.identity)))
            if case .atOnce(let answerNow, let publishNow) = route {
                // A view that confirms by echo takes the publication as its acceptance, and
                // gets no answer: one message from the host per write instead of two, and
                // every view's copy leaves sooner, with no answer queued ahead of it in
                // libzmq's I/O thread (PROTOCOL.md, "Confirmation by echo"). Any other writer
                // gets the answer now, before the publication is even written (its
                // confirmation is then a plain DEALER-ROUTER round trip).
                if answerNow { answer(write: write.writeID, with: verdict, to: requester) }
                if publishNow {
                    // Ahead of the digest and ledger record (the `defer` above, which still
                    // runs before the next request, so a copy in the same turn is found) and
                    // of the loop's look for more requests (a system call in libzmq), so that
                    // the views' copies do not wait for the host's bookkeeping.
                    publishPending()
                    sched_yield()
                }
                return
            }
            // Answered with its batch's publication: at the end of this loop turn, or, when it
            // waits for durability, once its group commit is done.
            turn.hold(
                PendingReply(
                    requester: requester, verdict: verdict, object: write.object, sequence: result.sequence, durable: durable,
                    persistedProperty: persistedProperty ?? "", view: write.viewID, writeID: write.writeID, digest: digest(), isCopy: false))
        } catch {
            counters.writesRejected.add(1, ordering: .relaxed)
            verdict = .failure(error)
            answer(write: write.writeID, with: verdict, to: requester)
        }
    }

    /// Answers a write now, in the write path's own encoding.
    func answer(write writeID: UInt64, with verdict: WriteVerdict, to requester: Requester) {
        let bytes = WriteCodec.reply(
            protocolVersion: requester.version, requestID: requester.requestID, writeID: writeID, outcome: WriteCodec.Outcome(verdict))
        send(bytes, to: requester.identity)
    }
}
