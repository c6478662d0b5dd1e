import Foundation

extension BenchRunner {
    /// Fan-out (``FanoutBench``): the same views on the host and through relays, and a
    /// quarter of them through the same relays, to show whether the host's CPU per update
    /// grows with the views behind relays.
    mutating func fanout() async {
        let views = plan.fanoutViews
        let relays = plan.fanoutRelays
        let arrangements: [(key: String, label: String, views: Int, relays: Int)] = [
            ("direct", "\(views) views on the host", views, 0),
            ("relayed", "\(views) views through \(relays) relays", views, relays),
            ("relayed-quarter", "\(views / 4) views through \(relays) relays", views / 4, relays)
        ]
        var outcomes: [String: FanoutBench.Outcome] = [:]
        for arrangement in arrangements {
            say("fan-out: \(arrangement.label), \(plan.fanoutUpdates) updates")
            do {
                let outcome = try await FanoutBench(
                    views: arrangement.views, relays: arrangement.relays, loadProcesses: relays, updates: plan.fanoutUpdates, churn: plan.joinChurn,
                    idleWindow: plan.fanoutIdleWindow
                ).run()
                // The run returns once every view was live and then reached the last
                // update's sequence: each converged. A view that fell behind the stream and
                // resynchronised converged too, by the protocol's own repair; how many did is
                // a figure of this machine and configuration (the goal below), not a lost
                // update.
                report.check(
                    "fanout.\(arrangement.key)", true,
                    "all \(arrangement.views) views joined during the churn and reached the last update's sequence; resyncs: \(outcome.joinResyncs) during the join storm, \(outcome.resyncs) by the end of the run"
                )
                report.goal(
                    "no view of \(arrangement.label) resynchronises (a view behind the stream by more than its queue sees a gap)",
                    met: outcome.resyncs.resyncs == 0, figure: "\(outcome.resyncs)")
                outcomes[arrangement.key] = outcome
            } catch {
                report.check("fanout.\(arrangement.key)", false, "\(error)")
            }
            let outcome = outcomes[arrangement.key]
            let missing = outcome == nil ? "not available: the run failed (see checks)" : nil
            report.rows.append(
                BenchReport.Row(
                    "fan-out join storm: \(arrangement.label) join at once, host changing \(plan.joinChurn)/ms: last view live", unit: "nanoseconds",
                    statebus: outcome?.joinNanoseconds, raw: nil, note: missing ?? "no raw equivalent"))
            report.rows.append(
                BenchReport.Row(
                    "fan-out: updates/s at the slowest of \(arrangement.label)", unit: "rate", statebus: outcome?.slowestRate, raw: nil,
                    note: missing ?? "no raw equivalent"))
            report.rows.append(
                BenchReport.Row(
                    "fan-out: host CPU time per update, \(arrangement.label)", unit: "nanoseconds", statebus: outcome?.hostCPUPerUpdate, raw: nil,
                    note: missing ?? "CLOCK_PROCESS_CPUTIME_ID of the host process over the run"))
        }
        let all = outcomes["relayed"]?.hostCPUPerUpdate
        let quarter = outcomes["relayed-quarter"]?.hostCPUPerUpdate
        let direct = outcomes["direct"]?.hostCPUPerUpdate
        let figure: String
        if let all, let quarter, let direct {
            figure =
                "host CPU/update: \(Self.time(quarter)) with \(views / 4) views behind \(relays) relays, \(Self.time(all)) with \(views), "
                + "\(Self.time(direct)) with \(views) on the host"
        } else {
            figure = "not available"
        }
        report.goal(
            "the host's CPU per update does not grow with the views behind relays (within 1.5x from \(views / 4) to \(views))",
            met: all.flatMap { all in quarter.map { all <= 1.5 * $0 } }, figure: figure)
    }
}
