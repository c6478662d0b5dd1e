import Testing

@testable import StateBus

/// `HostTurn`, the host loop's record of what a turn has done, against the rules it stands
/// for: a turn's first write answered at once publishes at once and later ones wait for the
/// turn's end; answers held keep their order and stop writes from overtaking them; nothing
/// is published twice; a new turn forgets only what turns are about.
@Suite("A host turn: what the loop publishes and answers, and when")
struct HostTurnTests {
    /// What can happen within the host's loop, in any order.
    enum Event: CaseIterable {
        case startTurn, write, writeAnsweredAtOnce, heldWrite, publish
    }

    static func reply(_ writeID: UInt64) -> PendingReply {
        PendingReply(
            requester: Requester(identity: [1]), verdict: .success(writeID), object: "Profile", sequence: writeID, durable: false, view: "v",
            writeID: writeID, digest: 0, isCopy: false)
    }

    @Test("random sequences of events: published at once only first in a turn, held answers in order, each published once")
    func againstTheRules() {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<2_000 {
            var turn = HostTurn()
            // The model: plain facts, kept by the test itself.
            var held: [UInt64] = []
            var due = false
            var publishedAtOnceThisTurn = false
            var wroteThisTurn = false
            var nextWriteID: UInt64 = 1
            var published: [UInt64] = []
            for _ in 0..<Int.random(in: 1...40, using: &generator) {
                switch Event.allCases.randomElement(using: &generator)! {
                case .startTurn:
                    turn.start()
                    publishedAtOnceThisTurn = false
                    wroteThisTurn = false
                case .write:
                    turn.noteWrite()
                    wroteThisTurn = true
                case .writeAnsweredAtOnce:
                    // The write path answers at once only when nothing is held before it.
                    #expect(turn.mayAnswerAtOnce == held.isEmpty)
                    guard turn.mayAnswerAtOnce else { continue }
                    turn.noteWrite()
                    wroteThisTurn = true
                    let now = turn.answeredAtOnce()
                    #expect(now == !publishedAtOnceThisTurn, "only the turn's first write answered at once publishes at once")
                    due = true
                    if now {
                        publishedAtOnceThisTurn = true
                        #expect(turn.takePending().isEmpty)
                        due = false
                    }
                case .heldWrite:
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
                }
                #expect(turn.handledWrites == wroteThisTurn)
                #expect(turn.publishDue == due)
                #expect(turn.heldReplies.map(\.writeID) == held)
            }
            #expect(Set(published).count == published.count, "an answer published twice")
        }
    }
}
