import Testing

@testable import StateBus

/// `HostTurn`, where the host's loop decides when it answers and publishes, against the rules
/// it stands for, kept by the test as plain facts: a write is answered at once only when it
/// is not durable, no commit runs and no answer is held before it, and then without an answer
/// to a writer that confirms by echo; the turn's first such write publishes at once and later
/// ones wait for the turn's end; held answers keep their order; nothing is published twice;
/// a turn's end publishes what is due, yields after answering at once and polls after writes;
/// the burst timer is armed once until it fires.
@Suite("A host turn: what the loop publishes and answers, and when")
struct HostTurnTests {
    /// What can happen within the host's loop, in any order.
    enum Event: CaseIterable {
        case startTurn, refusedWrite, appliedWrite, heldCopy, publish, endTurn, burst, burstTimerFires
    }

    static func reply(_ writeID: UInt64) -> PendingReply {
        PendingReply(
            requester: Requester(identity: [1]), verdict: .success(writeID), object: "Profile", sequence: writeID, durable: false, view: "v",
            writeID: writeID, digest: 0, isCopy: false)
    }

    @Test("random sequences of loop events against the model of the rules")
    func againstTheRules() {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<2_000 {
            var turn = HostTurn()
            // The model: plain facts, kept by the test itself.
            var held: [UInt64] = []
            var due = false
            var publishedAtOnceThisTurn = false
            var wroteThisTurn = false
            var timerArmed = false
            var nextWriteID: UInt64 = 1
            var published: [UInt64] = []
            for _ in 0..<Int.random(in: 1...40, using: &generator) {
                switch Event.allCases.randomElement(using: &generator)! {
                case .startTurn:
                    turn.start()
                    publishedAtOnceThisTurn = false
                    wroteThisTurn = false
                case .refusedWrite:
                    turn.noteWrite()
                    wroteThisTurn = true
                case .appliedWrite:
                    turn.noteWrite()
                    wroteThisTurn = true
                    let write = HostTurn.AppliedWrite(
                        durable: Bool.random(using: &generator), commitIdle: Bool.random(using: &generator),
                        confirmsByEcho: Bool.random(using: &generator))
                    let route = turn.route(appliedWrite: write)
                    guard !write.durable, write.commitIdle, held.isEmpty else {
                        #expect(route == .held, "a write answered before what waits ahead of it")
                        turn.hold(Self.reply(nextWriteID))
                        held.append(nextWriteID)
                        nextWriteID += 1
                        continue
                    }
                    let publishNow = !publishedAtOnceThisTurn
                    #expect(
                        route == .atOnce(answer: !write.confirmsByEcho, publishNow: publishNow),
                        "answered at once, unless confirmed by echo; published at once only first in its turn")
                    due = true
                    publishedAtOnceThisTurn = true
                    if publishNow {
                        #expect(turn.takePending().isEmpty)
                        due = false
                    }
                case .heldCopy:
                    turn.noteWrite()
                    wroteThisTurn = true
                    turn.hold(Self.reply(nextWriteID))
                    held.append(nextWriteID)
                    nextWriteID += 1
                case .publish:
                    #expect(turn.hasPending == (!held.isEmpty || due))
                    let taken = turn.takePending().map(\.writeID)
                    #expect(taken == held, "held answers go out in the order held")
                    published += taken
                    held = []
                    due = false
                case .endTurn:
                    let ending = turn.end()
                    #expect(ending == HostTurn.Ending(publish: !held.isEmpty || due, yieldCPU: due, pollBusily: wroteThisTurn))
                    if ending.publish {
                        published += turn.takePending().map(\.writeID)
                        held = []
                        due = false
                    }
                case .burst:
                    #expect(turn.publicationSawBurst() == !timerArmed, "the burst timer armed twice, or not at all")
                    timerArmed = true
                case .burstTimerFires:
                    turn.burstTimerFired()
                    timerArmed = false
                }
                #expect(turn.handledWrites == wroteThisTurn)
                #expect(turn.publishDue == due)
                #expect(turn.heldReplies.map(\.writeID) == held)
                #expect(turn.burstTimerArmed == timerArmed)
            }
            #expect(Set(published).count == published.count, "an answer published twice")
        }
    }

    @Test("a lone write that nothing waits for is answered and published at once; a durable one is held")
    func loneWrites() {
        var turn = HostTurn()
        turn.start()
        #expect(turn.route(appliedWrite: .init(durable: false, commitIdle: true, confirmsByEcho: false)) == .atOnce(answer: true, publishNow: true))
        #expect(turn.takePending().isEmpty)
        #expect(turn.route(appliedWrite: .init(durable: false, commitIdle: true, confirmsByEcho: true)) == .atOnce(answer: false, publishNow: false))
        #expect(turn.end() == HostTurn.Ending(publish: true, yieldCPU: true, pollBusily: false))
        _ = turn.takePending()
        turn.start()
        #expect(turn.route(appliedWrite: .init(durable: true, commitIdle: true, confirmsByEcho: false)) == .held)
    }
}
