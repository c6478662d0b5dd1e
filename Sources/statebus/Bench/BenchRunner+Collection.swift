import Foundation

extension BenchRunner {
    /// Keyed collections (``CollectionBench``): what one changed element costs on the wire
    /// against the whole collection, how fast a view follows such changes, and the late join.
    mutating func collection() async {
        let items = plan.collectionItems
        say("keyed collection: \(items) items, \(plan.collectionUpdates) one-element changes")
        var outcome: CollectionBench.Outcome?
        do {
            let result = try await CollectionBench(items: items, updates: plan.collectionUpdates).run()
            report.check(
                "collection.\(items)", result.problem == nil,
                result.problem ?? "the view joined \(items) items and applied every one-element change; it holds the host's collection")
            outcome = result
        } catch {
            report.check("collection.\(items)", false, "\(error)")
        }
        var modelRate: Double?
        var modelSingle: Double?
        var modelSetter: Double?
        do {
            let result = try await CollectionBench(items: items, updates: plan.collectionUpdates).runModel()
            report.check(
                "collection.model.\(items)", result.problem == nil,
                result.problem ?? "a @SharedModel view followed every one-element change; its IdentifiedArray holds the host's collection")
            modelRate = result.rate
            modelSingle = result.singleNanoseconds
            modelSetter = result.setterNanoseconds
        } catch {
            report.check("collection.model.\(items)", false, "\(error)")
        }
        let missing = outcome == nil ? "not available: the run failed (see checks)" : nil
        report.rows.append(
            BenchReport.Row(
                "keyed collection: late join of \(items.formatted()) items", unit: "nanoseconds", statebus: outcome?.joinNanoseconds, raw: nil,
                note: missing ?? "host and view in one process; Qt Remote Objects' list model: 313-351 ms for 100,000 rows on this machine",
                key: "collection.join.\(items)"))
        report.rows.append(
            BenchReport.Row(
                "keyed collection: bytes published per one-element change, \(items.formatted()) items", unit: "bytes",
                statebus: outcome?.bytesPerUpdate, raw: nil,
                note: missing
                    ?? "the whole collection is \(BenchReport.format(Double(outcome?.collectionBytes ?? 0), unit: "bytes")): what a whole-value write would publish"
            ))
        report.rows.append(
            BenchReport.Row(
                "keyed collection: one-element changes/s at a view, \(items.formatted()) items", unit: "rate", statebus: outcome?.rate, raw: nil,
                note: missing ?? "a Replica's values; no raw equivalent"))
        report.rows.append(
            BenchReport.Row(
                "keyed collection: one-element changes/s at a @SharedModel view, \(items.formatted()) items", unit: "rate", statebus: modelRate,
                raw: nil,
                note: modelRate == nil
                    ? "not available: the run failed (see checks)" : "the view's IdentifiedArray, one element decoded per change"))
        report.rows.append(
            BenchReport.Row(
                "keyed collection: one change until a @SharedModel view holds it, p50, \(items.formatted()) items", unit: "nanoseconds",
                statebus: modelSingle, raw: nil,
                note: modelSingle == nil
                    ? "not available: the run failed (see checks)" : "200 changes one at a time, host and view in one process"))
        report.rows.append(
            BenchReport.Row(
                "keyed collection: a @SharedModel view's own one-element edit, time in the setter, p50, \(items.formatted()) items",
                unit: "nanoseconds", statebus: modelSetter, raw: nil,
                note: modelSetter == nil
                    ? "not available: the run failed (see checks)"
                    : "50 edits; the changed element is found by comparing elements, and only it is encoded"))
        let proportional = outcome.map { $0.bytesPerUpdate * 100 < Double($0.collectionBytes) }
        report.goal(
            "one changed element of a \(items.formatted())-item collection costs bytes in the element's size, not the collection's (< 1%)",
            met: proportional,
            figure: outcome.map { "\(Int($0.bytesPerUpdate)) bytes per change, collection \($0.collectionBytes) bytes" } ?? "not available")
    }
}
