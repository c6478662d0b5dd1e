import PropertyBased
import StateBusWire
import Testing

@testable import StateBus

/// `WriteLedger` against a plain reference: a dictionary of answers per view, trimmed to the
/// newest write ids of a view and to the most recently active views by the ledger's rules
/// (PROTOCOL.md section 8, "Copies": exactly the last 1,024 answers of each of the 10,000
/// most recently active views).
///
/// What a host relies on: a copy of a remembered write gets the first copy's answer (and
/// only a true copy: same view, write id, object and changes), a copy older than the bounds
/// is not answered from the ledger, and memory stays bounded.
/// The bounds are the real ones (1,024 answers a view, 10,000 views), so bursts of writes
/// and of new views push the ledger past them within a few events.
@Suite("WriteLedger against a reference model")
struct WriteLedgerPropertyTests {
    /// One event: `kind` picks what happens, `view` and `count` say to whom and how much.
    struct Step: Sendable, CustomStringConvertible {
        let kind: Int
        let view: Int
        let count: Int

        var description: String { "(\(kind), \(view), \(count))" }
    }

    static let steps = zip(Gen.int(in: 0...5), Gen.int(in: 0...3), Gen.int(in: 1...2_200))
        .map { Step(kind: $0, view: $1, count: $2) }
        .array(of: 1...12)

    @Test("a copy gets its first answer while remembered; the bounds hold")
    func randomEvents() async {
        await propertyCheck(count: 12, input: Self.steps) { steps in
            var ledger = WriteLedger()
            var model = LedgerModel()
            var nextWriteID: [String: UInt64] = [:]
            var strangers = 0
            for (index, step) in steps.enumerated() {
                let view = "view-\(step.view)"
                var probes: [(view: String, writeID: UInt64)] = []
                switch step.kind {
                case 0, 1, 2:
                    // A view's writes, ids growing as a real view's do.
                    for _ in 0..<step.count {
                        let writeID = nextWriteID[view, default: 1]
                        nextWriteID[view] = writeID + 1
                        let answer = Self.answer(view: view, writeID: writeID, accepted: writeID % 3 != 0)
                        ledger.record(view: view, writeID: writeID, answer: answer)
                        model.record(view: view, writeID: writeID, answer: answer)
                    }
                    probes.append((view, nextWriteID[view, default: 1] - 1))
                case 3:
                    // Many views write once each: the views' bound.
                    for _ in 0..<(step.count * 5) {
                        strangers += 1
                        let stranger = "stranger-\(strangers)"
                        let answer = Self.answer(view: stranger, writeID: 1, accepted: true)
                        ledger.record(view: stranger, writeID: 1, answer: answer)
                        model.record(view: stranger, writeID: 1, answer: answer)
                    }
                    probes.append(("stranger-\(strangers)", 1))
                case 4:
                    // A commit failed after the write was accepted: the answer is replaced.
                    let writeID = UInt64(step.count % Int(nextWriteID[view, default: 1]))
                    let verdict: WriteVerdict = .failure(StateBusError(.persistenceFailed, "not durable"))
                    ledger.update(view: view, writeID: writeID, verdict: verdict)
                    model.update(view: view, writeID: writeID, verdict: verdict)
                    probes.append((view, writeID))
                default:
                    // A different write reusing an id (a restarted process): not a copy.
                    let writeID = UInt64(step.count % Int(nextWriteID[view, default: 1]))
                    var write = Self.request(view: view, writeID: writeID)
                    write.changes[0].property = "other"
                    #expect(ledger.answer(to: write) == nil, "step \(index) of \(steps): a different write counted as a copy")
                    write = Self.request(view: view, writeID: writeID)
                    write.object = "Other"
                    #expect(ledger.answer(to: write) == nil, "step \(index) of \(steps): a write to another object counted as a copy")
                }

                // The writes of the four main views, from well past the bound (a copy that
                // old must find nothing) to the newest: a sample after each event, all of
                // them after the last.
                let isLast = index == steps.count - 1
                for (view, next) in nextWriteID {
                    let oldest = next > UInt64(2 * WriteLedger.answersPerView + 2) ? next - UInt64(2 * WriteLedger.answersPerView + 2) : 0
                    for writeID in oldest..<next where isLast || writeID % 7 == 0 || writeID + 3 >= next {
                        probes.append((view, writeID))
                    }
                }
                if strangers > 0 { probes.append(("stranger-\(strangers)", 1)) }
                for probe in probes {
                    let answer = ledger.answer(to: Self.request(view: probe.view, writeID: probe.writeID))
                    let expected = model.answer(view: probe.view, writeID: probe.writeID)
                    guard answer?.verdict == expected?.verdict, answer?.durable == expected?.durable else {
                        Issue.record(
                            """
                            after step \(index) \(step) of \(steps): \(probe.view) write \(probe.writeID) \
                            answered \(String(describing: answer?.verdict)), the model \(String(describing: expected?.verdict))
                            """)
                        return
                    }
                }
                #expect(ledger.count == model.views.values.reduce(0) { $0 + $1.answers.count }, "step \(index) of \(steps)")
                #expect(model.views.count <= WriteLedger.maximumViews)
                #expect(model.views.values.allSatisfy { $0.answers.count <= WriteLedger.answersPerView })
            }
        }
    }

    @Test("the newest answers of the most recently active views are never forgotten")
    func guarantees() {
        var ledger = WriteLedger()
        // Past the per-view bound, then past the views' bound.
        let writes = UInt64(3 * WriteLedger.answersPerView)
        for writeID in 1...writes {
            ledger.record(view: "busy", writeID: writeID, answer: Self.answer(view: "busy", writeID: writeID, accepted: true))
        }
        for index in 0..<(WriteLedger.maximumViews + WriteLedger.maximumViews / 10) {
            ledger.record(view: "v\(index)", writeID: 1, answer: Self.answer(view: "v\(index)", writeID: 1, accepted: true))
        }
        // `busy` is now the least recently active view past the bound: forgotten.
        #expect(ledger.answer(to: Self.request(view: "busy", writeID: writes)) == nil)
        // The last `maximumViews` views are all remembered (one issue, not ten thousand).
        let recent = (WriteLedger.maximumViews / 10)..<(WriteLedger.maximumViews + WriteLedger.maximumViews / 10)
        let forgotten = recent.filter { ledger.answer(to: Self.request(view: "v\($0)", writeID: 1)) == nil }
        #expect(forgotten.isEmpty, "forgot \(forgotten.count) recent views, first v\(forgotten.first ?? -1)")
        // A view's newest answers survive its own trims.
        var single = WriteLedger()
        for writeID in 1...writes {
            single.record(view: "busy", writeID: writeID, answer: Self.answer(view: "busy", writeID: writeID, accepted: true))
        }
        let newest = (writes - UInt64(WriteLedger.answersPerView) + 1)...writes
        let lost = newest.filter { single.answer(to: Self.request(view: "busy", writeID: $0))?.verdict != .success($0 * 10) }
        #expect(lost.isEmpty, "lost \(lost.count) of the newest answers, first \(lost.first ?? 0)")
    }

    @Test("a copy more than 1,024 writes old is not answered from the ledger")
    func exactBound() {
        var ledger = WriteLedger()
        #expect(WriteLedger.answersPerView == 1024)
        for writeID in UInt64(1)...1_500 {
            ledger.record(view: "v", writeID: writeID, answer: Self.answer(view: "v", writeID: writeID, accepted: true))
            let oldest = writeID > 1024 ? writeID - 1023 : 1
            // The view's last 1,024 answers, and not one more, after every write.
            #expect(ledger.count == Int(writeID - oldest + 1))
            if oldest > 1 {
                #expect(ledger.answer(to: Self.request(view: "v", writeID: oldest - 1)) == nil, "write \(oldest - 1) after \(writeID)")
            }
            #expect(ledger.answer(to: Self.request(view: "v", writeID: oldest)) != nil, "write \(oldest) after \(writeID)")
        }
        // A copy 1,500 writes old (the first write) is a new write: applied, not answered.
        #expect(ledger.answer(to: Self.request(view: "v", writeID: 1)) == nil)
        #expect(ledger.answer(to: Self.request(view: "v", writeID: 476)) == nil)
        #expect(ledger.answer(to: Self.request(view: "v", writeID: 477))?.verdict == .success(477 * 10))
    }

    @Test("past the views' bound, the least recently active view is forgotten, one at a time")
    func exactViewBound() {
        var ledger = WriteLedger()
        for index in 0..<WriteLedger.maximumViews {
            ledger.record(view: "v\(index)", writeID: 1, answer: Self.answer(view: "v\(index)", writeID: 1, accepted: true))
        }
        // v0 writes again: v1 becomes the least recently active.
        ledger.record(view: "v0", writeID: 2, answer: Self.answer(view: "v0", writeID: 2, accepted: true))
        ledger.record(view: "new", writeID: 1, answer: Self.answer(view: "new", writeID: 1, accepted: true))
        #expect(ledger.answer(to: Self.request(view: "v1", writeID: 1)) == nil)
        #expect(ledger.answer(to: Self.request(view: "v0", writeID: 1)) != nil)
        #expect(ledger.answer(to: Self.request(view: "v2", writeID: 1)) != nil)
        #expect(ledger.answer(to: Self.request(view: "new", writeID: 1)) != nil)
        #expect(ledger.count == WriteLedger.maximumViews + 1)
    }

    /// A write request as a view sends it: the object `Profile`, one change.
    static func request(view: String, writeID: UInt64) -> Statebus_V1_WriteRequest {
        var write = Statebus_V1_WriteRequest()
        write.viewID = view
        write.writeID = writeID
        write.object = "Profile"
        var change = Statebus_V1_Change()
        change.property = "email"
        write.changes = [change]
        return write
    }

    static func answer(view: String, writeID: UInt64, accepted: Bool) -> WriteLedger.Answer {
        // An accepted write's sequence is ten times its id, so an answer names its write.
        let verdict: WriteVerdict = accepted ? .success(writeID * 10) : .failure(StateBusError(.validationFailed, "refused \(writeID)"))
        let write = request(view: view, writeID: writeID)
        return WriteLedger.Answer(verdict: verdict, durable: !accepted, changes: write.changes.map(PropertyChange.init(wire:)), object: write.object)
    }
}

/// The reference ledger: the same bounds, kept with plain lists: each view's write ids in
/// the order recorded (the tests record them growing), and the views in order of activity.
struct LedgerModel {
    struct View {
        var answers: [UInt64: WriteLedger.Answer] = [:]
        var ids: [UInt64] = []
    }

    var views: [String: View] = [:]
    /// View names, least recently active first, from `activityStart` on.
    var activity: [String] = []
    var activityStart = 0

    func answer(view: String, writeID: UInt64) -> WriteLedger.Answer? {
        views[view]?.answers[writeID]
    }

    mutating func record(view: String, writeID: UInt64, answer: WriteLedger.Answer) {
        let known = views[view] != nil
        if views[view]?.answers[writeID] == nil { views[view, default: View()].ids.append(writeID) }
        views[view, default: View()].answers[writeID] = answer
        // A view keeps only its newest `answersPerView` write ids.
        if let ids = views[view]?.ids, ids.count > WriteLedger.answersPerView {
            views[view]?.answers[ids[0]] = nil
            views[view]?.ids.removeFirst()
        }
        // Only the most recently active `maximumViews` views stay.
        if activity.last != view {
            // Only a view remembered is in the list (a forgotten one left it).
            if known, let index = activity[activityStart...].lastIndex(of: view) { activity.remove(at: index) }
            activity.append(view)
        }
        if views.count > WriteLedger.maximumViews {
            views[activity[activityStart]] = nil
            activityStart += 1
        }
    }

    mutating func update(view: String, writeID: UInt64, verdict: WriteVerdict) {
        views[view]?.answers[writeID]?.verdict = verdict
    }
}

extension WriteLedger {
    /// The answer the ledger gives `write` if it is a copy, found as the host finds it.
    func answer(to write: Statebus_V1_WriteRequest) -> Answer? {
        let changes = write.changes.map(PropertyChange.init(wire:))
        return answer(toCopyFrom: write.viewID, writeID: write.writeID, digest: WriteDigest.of(object: write.object, changes: changes))
    }
}
