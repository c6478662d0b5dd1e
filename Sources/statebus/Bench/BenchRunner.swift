import Foundation
import StateBusLaunch
import StateBusRuntime

/// Runs the parts of the benchmark in turn and writes what they find into a ``BenchReport``.
/// A part that fails (a worker that times out, say) is recorded as a failed check with its
/// figures "not available", and the others still run.
struct BenchRunner {
    let plan: BenchPlan
    var report: BenchReport
    /// Whether to print a line to standard error as each measurement starts.
    let progress: Bool
    /// When the run started: each progress line says how far into the run it is, so a slow
    /// part shows.
    let started = ContinuousClock.now
    /// The Qt Remote Objects peer of `--peer qtro`, from ``prepare(_:)`` on.
    var qtroPeer: QtROPeerRun?

    func say(_ text: String) {
        guard progress else { return }
        let seconds = (ContinuousClock.now - started).inSeconds
        FileHandle.standardError.write(Data("… [\(String(format: "%5.1f", seconds)) s] \(text)\n".utf8))
    }

    static func time(_ value: Double) -> String { BenchReport.format(value, unit: "nanoseconds") }

    // MARK: Throughput

    mutating func throughput() async {
        for (kind, views) in plan.throughputRuns {
            let bench = ThroughputBench(kind: kind, views: views, updates: plan.updates)
            let label = "\(kind.label), \(views) view\(views == 1 ? "" : "s")"
            say("throughput \(label): \(plan.updates) updates")
            let (counted, rawCounted) = await measure(
                bench, row: "updates/s at each view (slowest), \(label)", key: "throughput.\(kind.rawValue).\(views)")
            if views > 1 {
                var total = BenchReport.Row(
                    "updates/s, all \(views) views together, \(kind.label)", unit: "rate", statebus: counted?.total, raw: rawCounted?.total)
                if views == 10 {
                    let status = report.goal(
                        "\(kind.label), 10 views together ≥ 0.5x raw to 10 subscribers",
                        met: total.ratio.map { $0 >= 0.5 }, figure: total.ratio.map { String(format: "%.2fx", $0) } ?? "not available")
                    total.goal = "≥0.5x: \(status)"
                }
                report.rows.append(total)
            }
        }
    }

    /// Int updates into a view written in Python (clients/python), beside a pyzmq SUB that
    /// receives the raw stream, both Python processes. Without a Python that has the client,
    /// the row says why; that fails a check only when the Python rows were asked for
    /// (`--only python` or `--python`).
    mutating func python(_ client: Result<PythonClient, PythonClient.Missing>, required: Bool) async {
        let row = "updates/s at a Python view, Int, 1 view (raw: pyzmq SUB)"
        switch client {
        case .failure(let missing):
            if required { report.check("python.available", false, missing.description) }
            report.rows.append(BenchReport.Row(row, unit: "rate", statebus: nil, raw: nil, note: "not available: \(missing)", key: "python.int.1"))
        case .success(let python):
            say("throughput into a Python view: \(plan.pythonUpdates) updates")
            let bench = ThroughputBench(kind: .int, views: 1, updates: plan.pythonUpdates, python: python)
            _ = await measure(bench, row: row, key: "python.int.1")
        }
    }

    /// Runs one throughput figure and records both checks and the row of the slowest view;
    /// returns the outcomes that count (`nil`: failed or lossy). A row the bench judges
    /// (one with a target) runs ``BenchPlan/throughputRounds`` rounds in which StateBus and
    /// raw take turns, and each side's figure is its median round: on two cores each run
    /// draws where the kernel places its threads, and a draw of one side against the
    /// other's opposite draw would decide the bar. Other rows run once.
    private mutating func measure(_ bench: ThroughputBench, row: String, key: String) async -> (ThroughputBench.Outcome?, ThroughputBench.Outcome?) {
        let roundCount = BenchTarget.byKey[key] == nil ? 1 : max(1, plan.throughputRounds)
        let rounds = await AlternatingRounds.run(
            rounds: roundCount, statebus: { try await bench.runStateBus() }, raw: { try await bench.runRaw() },
            problem: { $0.complete ? nil : $0.problems.joined(separator: "; ") })
        let (statebusRounds, rawRounds) = (rounds.statebus.outcomes, rounds.raw.outcomes)
        let (statebusFailure, rawFailure) = (rounds.statebus.failure, rounds.raw.failure)
        let every = roundCount > 1 ? " (\(roundCount) rounds)" : ""
        report.check(
            rounds, name: key, statebus: "every view applied all \(bench.updates) updates in order, final value equal\(every)",
            raw: "every subscriber received all \(bench.updates) messages in order\(every)")
        // A figure with losses does not count.
        let counted = statebusFailure == nil ? ThroughputBench.Outcome.median(of: statebusRounds) : nil
        let rawCounted = rawFailure == nil ? ThroughputBench.Outcome.median(of: rawRounds) : nil
        let resyncs = statebusRounds.reduce(0) { $0 + $1.resyncs }
        let resyncNote = "resyncs: \(resyncs)\(statebusRounds.count > 1 ? " in \(statebusRounds.count) rounds" : "")"
        var notes = [counted == nil ? "not available: the run or its check failed (see the checks); \(resyncNote)" : resyncNote]
        if roundCount > 1, counted != nil, rawCounted != nil {
            func rates(_ outcomes: [ThroughputBench.Outcome]) -> String {
                outcomes.map { String(format: "%.2f", $0.slowest / 1e6) }.joined(separator: ", ")
            }
            notes.append(
                "the median of \(roundCount) rounds, StateBus and raw taking turns; rounds in M/s, StateBus: \(rates(statebusRounds)); raw: \(rates(rawRounds))"
            )
        }
        report.rows.append(
            BenchReport.Row(
                row, unit: "rate", statebus: counted?.slowest, raw: rawCounted?.slowest, note: notes.joined(separator: "; "), key: key))
        return (counted, rawCounted)
    }

    // MARK: Echo

    mutating func echo() async {
        // The bars the bench judges: each path within 1.1x of its raw libzmq equivalent at p50.
        for cpu in [nil, Int32(0)] as [Int32?] {
            for path in [EchoBench.Path.own, .other] {
                await echo(path, pinnedCPU: cpu)
            }
        }
    }

    /// One echo figure, StateBus's and raw libzmq's, measured in rounds that take turns
    /// (``BenchPlan/echoRounds``, ``BenchPlan/pinnedEchoRounds`` in the low-latency
    /// profile): a machine whose speed drifts during the run (a small virtual machine's
    /// does, and raw libzmq's own round trip drifts with it) then slows both alike, and
    /// the ratio holds. Each round starts a new host, which draws the order of its
    /// subscribers afresh; in the low-latency profile that order decides which of two
    /// figures a round of the echo at another view has, for raw libzmq as for StateBus, so
    /// there each side's figure weighs both orders alike (``EchoOrders``), with rounds added
    /// (up to three times as many) until each side has drawn both, and a row for each order.
    private mutating func echo(_ path: EchoBench.Path, pinnedCPU: Int32?) async {
        let pinned = pinnedCPU != nil
        let byOrder = pinned && path == .other
        let roundCount = max(1, pinned ? plan.pinnedEchoRounds : plan.echoRounds)
        let bench = EchoBench(writes: plan.echoWrites, warmup: plan.echoWarmup, pinnedCPU: pinnedCPU)
        let what = path == .own ? "write→own confirmation" : "write→echo at another view"
        let baseline = path == .own ? "DEALER↔ROUTER round trip" : "DEALER→ROUTER→PUB→SUB"
        let profile = pinned ? ", pinned to CPU \(pinnedCPU!)" : ""
        let name = "echo.\(path.rawValue)\(pinned ? ".pinned" : "")"
        say(
            "\(what)\(profile): \(roundCount)\(byOrder ? " to \(3 * roundCount)" : "") rounds of \(bench.writes) writes after \(bench.warmup) warm-up writes, StateBus and raw taking turns"
        )
        let rounds = await AlternatingRounds.run(
            rounds: roundCount, most: byOrder ? 3 * roundCount : nil,
            enough: { EchoOrders($0.statebus.outcomes).hasBoth && EchoOrders($0.raw.outcomes).hasBoth },
            statebus: { try await bench.runStateBus(path) }, raw: { try await bench.runRaw(path) },
            problem: { $0.complete ? nil : $0.problem ?? "incomplete" })
        let (statebusRounds, rawRounds) = (rounds.statebus.outcomes, rounds.raw.outcomes)
        let (statebusFailure, rawFailure) = (rounds.statebus.failure, rounds.raw.failure)
        let ran = statebusRounds.count
        report.check(
            rounds, name: name, statebus: "every write accepted and seen in order with its value; host holds the last (\(ran) rounds)",
            raw: "every message came back in order (\(rawRounds.count) rounds)")
        let orders = (statebus: EchoOrders(statebusRounds), raw: EchoOrders(rawRounds))
        func figure(_ rounds: [EchoBench.Outcome], _ ordered: EchoOrders) -> EchoBench.Outcome? {
            byOrder ? ordered.figure : EchoBench.Outcome.median(of: rounds)
        }
        var statebus = statebusFailure == nil ? figure(statebusRounds, orders.statebus) : nil
        var raw = rawFailure == nil ? figure(rawRounds, orders.raw) : nil
        // By order, a figure stands only beside the other side's.
        if byOrder, statebus == nil || raw == nil { (statebus, raw) = (nil, nil) }
        let count = (bench.writes * ran).formatted()
        let drawn = "\(orders.statebus.drawn(by: "StateBus")), raw in \(orders.raw.writerFirst.count) of \(rawRounds.count)"
        let roundsNote =
            byOrder
            ? "each side's figure the mean of its medians of the rounds in which the host's copy to the watching view went first and of those in which the writer's did (rows below); \(drawn)"
            : ran > 1 ? "the median of \(ran) rounds' figures, StateBus and raw taking turns" : nil
        // With both sides' rounds complete, only the orders can leave a figure out.
        let missing =
            statebusFailure == nil && rawFailure == nil
            ? "not available: in \(ran) rounds a side drew one order of the host's copies only (\(drawn))"
            : "not available: the run or its check failed (see the checks)"
        let spread = rawFailure == nil ? Self.roundFigures(statebusRounds, rawRounds, byOrder: byOrder) : nil
        let p50 = BenchReport.Row(
            "\(what) p50\(profile) (\(count) writes; raw: \(baseline))", unit: "nanoseconds", statebus: statebus?.p50, raw: raw?.p50,
            note: statebus == nil ? missing : [roundsNote, spread].compactMap { $0 }.joined(separator: "; "), key: "\(name).p50")
        report.rows.append(p50)
        report.rows.append(
            BenchReport.Row(
                "\(what) p99\(profile)", unit: "nanoseconds", statebus: statebus?.p99, raw: raw?.p99, note: statebus == nil ? missing : nil,
                key: "\(name).p99"))
        if byOrder, statebusFailure == nil, rawFailure == nil {
            report.rows += Self.orderRows(orders.statebus, orders.raw, measure: "\(what) p50\(profile)", key: name)
        }
        if !pinned {
            report.rows.append(
                BenchReport.Row(
                    "\(what) p99.9", unit: "nanoseconds", statebus: statebus?.p999, raw: raw?.p999,
                    note: bench.writes < 20_000
                        ? "\(ran > 1 ? "the median of \(ran) rounds of \(bench.writes.formatted()) writes" : "\(bench.writes.formatted()) writes"): p99.9 rests on few samples"
                        : roundsNote,
                    key: "\(name).p999"))
        }
    }

    /// The echo at another view's row for each order of the host's copies (``EchoOrders``):
    /// `<key>.first.p50` (the watching view's copy first) and `<key>.second.p50`, each side's
    /// figure the median of its rounds of that order; "not available" for an order a side
    /// did not draw.
    static func orderRows(_ statebus: EchoOrders, _ raw: EchoOrders, measure: String, key: String) -> [BenchReport.Row] {
        let orders: [(String, String, KeyPath<EchoOrders, [EchoBench.Outcome]>)] = [
            ("the watching view's copy sent first", "first", \.watcherFirst), ("the writer's copy sent first", "second", \.writerFirst)
        ]
        return orders.map { order, suffix, rounds in
            let (statebusRounds, rawRounds) = (statebus[keyPath: rounds], raw[keyPath: rounds])
            let (statebusFigure, rawFigure) = (EchoBench.Outcome.median(of: statebusRounds), EchoBench.Outcome.median(of: rawRounds))
            let drawn = statebusFigure != nil && rawFigure != nil
            return BenchReport.Row(
                "\(measure), \(order)", unit: "nanoseconds", statebus: drawn ? statebusFigure?.p50 : nil, raw: drawn ? rawFigure?.p50 : nil,
                note: drawn
                    ? "the median of StateBus's \(statebusRounds.count) and raw's \(rawRounds.count) rounds with this order"
                    : "not available: StateBus drew it in \(statebusRounds.count) rounds, raw in \(rawRounds.count)",
                key: "\(key).\(suffix).p50")
        }
    }

    /// Each round's StateBus/raw ratio at p50, lowest first, and each side's rounds' p50,
    /// fastest first ("each round's ratio: 0.98x, 1.05x; rounds' p50 in µs, StateBus: 41,
    /// 42; raw: 40, 43"): how far apart the rounds of one run are, which tells a missed or
    /// met bar from noise, and a figure with two modes from one with a spread. `nil` with
    /// fewer than two complete pairs of rounds.
    ///
    /// `byOrder` (the pinned echo at another view, ``EchoOrders``): a ratio pairs rounds of
    /// the same order only, fastest with fastest, so that no ratio sets one order against
    /// the other ("each round's ratio within its order: …").
    static func roundFigures(_ statebus: [EchoBench.Outcome], _ raw: [EchoBench.Outcome], byOrder: Bool = false) -> String? {
        func ratios(_ statebus: [EchoBench.Outcome], _ raw: [EchoBench.Outcome]) -> [Double] {
            zip(statebus, raw).compactMap { pair in pair.1.p50 > 0 ? pair.0.p50 / pair.1.p50 : nil }
        }
        func fastestFirst(_ rounds: [EchoBench.Outcome]) -> [EchoBench.Outcome] { rounds.sorted { $0.p50 < $1.p50 } }
        var paired = ratios(statebus, raw)
        if byOrder {
            let (statebusOrders, rawOrders) = (EchoOrders(statebus), EchoOrders(raw))
            paired =
                ratios(fastestFirst(statebusOrders.watcherFirst), fastestFirst(rawOrders.watcherFirst))
                + ratios(fastestFirst(statebusOrders.writerFirst), fastestFirst(rawOrders.writerFirst))
        }
        guard paired.count > 1 else { return nil }
        func microseconds(_ rounds: [EchoBench.Outcome]) -> String {
            rounds.map(\.p50).sorted().map { String(format: "%.0f", $0 / 1000) }.joined(separator: ", ")
        }
        return "each round's ratio\(byOrder ? " within its order" : ""): "
            + paired.sorted().map { String(format: "%.2fx", $0) }.joined(separator: ", ")
            + "; rounds' p50 in µs, StateBus: \(microseconds(statebus)); raw: \(microseconds(raw))"
    }

    // MARK: Join and memory

    /// The late joins: ``BenchPlan/joinRounds`` rounds, each a join at every size (a new host
    /// and view each time); with the QtRO peer, each round also runs the peer's joins, after
    /// StateBus's in the first round, then first and last by turns, so that both figures,
    /// each its joins' median, come from the same minutes of the machine.
    mutating func join() async {
        var rounds: [Int: [JoinBench.Outcome]] = [:]
        var failures: [Int: String] = [:]
        for round in 0..<max(1, plan.joinRounds) {
            let peerFirst = round % 2 == 1
            if peerFirst { await qtroJoinRound(round) }
            for size in plan.joinSizes where failures[size] == nil {
                say("late join of \(size) properties\(plan.joinRounds > 1 ? ", round \(round + 1) of \(plan.joinRounds)" : "")")
                do {
                    rounds[size, default: []].append(try await JoinBench(properties: size, churn: plan.joinChurn).run())
                } catch {
                    failures[size] = "\(error)"
                }
            }
            if !peerFirst { await qtroJoinRound(round) }
        }
        var largest: JoinBench.Outcome?
        for size in plan.joinSizes {
            var row = BenchReport.Row(
                "late join, \(size.formatted()) properties (host changing \(plan.joinChurn)/ms)", unit: "nanoseconds", statebus: nil, raw: nil,
                note: "no raw equivalent measured", key: "join.\(size)")
            let joins = rounds[size] ?? []
            let failed = failures[size] ?? joins.first { !$0.complete }.map { $0.problem ?? "incomplete" }
            report.check(
                "join.\(size)", failed == nil,
                failed ?? "the view held all \(size) properties\(joins.count > 1 ? " in each of \(joins.count) joins" : "")")
            if failed == nil, let median = JoinBench.Outcome.median(of: joins) {
                row.statebus = median.joinNanoseconds
                if joins.count > 1 {
                    let each = joins.map { BenchReport.format($0.joinNanoseconds, unit: "nanoseconds") }.joined(separator: ", ")
                    let turns = qtroJoinsTookTurns ? ", taking turns with Qt Remote Objects' joins" : ""
                    row.note = "the median of \(joins.count) joins, each a new host and view\(turns): \(each)"
                }
                largest = median
            }
            report.rows.append(row)
        }
        guard let memory = largest else {
            report.rows.append(BenchReport.Row("memory", unit: "bytes", statebus: nil, raw: nil, note: "not available: no join completed"))
            return
        }
        let count = memory.properties.formatted()
        let view = BenchReport.Row(
            "view peak RSS holding \(count) properties", unit: "bytes", statebus: Double(memory.viewPeakBytes), raw: nil,
            note: "the view process's RSS before joining: \(BenchReport.format(Double(memory.viewBaselineBytes), unit: "bytes"))"
                + {
                    switch memory.viewLoadsSharedRuntime {
                    case true?:
                        "; the Swift runtime and Foundation loaded as shared libraries (linking them in, --static-swift-stdlib, would save about 4.5 MiB)"
                    case false?: "; the Swift runtime linked in (--static-swift-stdlib)"
                    case nil: "; whether the view loaded the Swift runtime as shared libraries is unknown (its /proc/self/maps could not be read)"
                    }
                }()
                + (memory.viewIsApplicationSized
                    ? ""
                    : "; measured with the statebus tool as the view (statebus-bench-view is not built beside it: build it, as `swift build -c release` does), so the tool's libraries count too"),
            key: "memory.view.\(memory.properties)")
        let host = BenchReport.Row("host peak RSS holding \(count) properties", unit: "bytes", statebus: Double(memory.hostPeakBytes), raw: nil)
        let state = BenchReport.Row("bytes of state held (names + 8-byte values)", unit: "bytes", statebus: Double(memory.stateBytes), raw: nil)
        report.rows += [view, host, state]
    }

    // MARK: With keys

    /// What CURVE costs: Int to one view and write→echo, each measured without and then with
    /// keys, back to back, so the pair shares the machine's state of the moment.
    mutating func keys() async {
        var rates: [Bool: Double] = [:]
        var echoes: [Bool: Double] = [:]
        for keyed in [false, true] {
            let label = keyed ? "with keys" : "without keys"
            say("throughput Int, 1 view, \(label): \(plan.updates) updates")
            do {
                let outcome = try await ThroughputBench(kind: .int, views: 1, updates: plan.updates, keyed: keyed).runStateBus()
                report.check(
                    "keys.throughput.\(keyed)", outcome.complete,
                    outcome.complete ? "the view applied all \(plan.updates) updates in order, \(label)" : outcome.problems.joined(separator: "; "))
                if outcome.complete { rates[keyed] = outcome.slowest }
            } catch {
                report.check("keys.throughput.\(keyed)", false, "\(error)")
            }
            // As many writes as an echo figure's rounds together, in one round.
            let writes = plan.echoWrites * plan.echoRounds
            say("echo \(label): \(writes) writes")
            do {
                let outcome = try await EchoBench(writes: writes, warmup: plan.echoWarmup, keyed: keyed).runStateBus(.own)
                report.check("keys.echo.\(keyed)", outcome.complete, outcome.problem ?? "every write accepted and echoed in order, \(label)")
                if outcome.complete { echoes[keyed] = outcome.p50 }
            } catch {
                report.check("keys.echo.\(keyed)", false, "\(error)")
            }
        }
        func cost(_ figures: [Bool: Double], unit: String, higherIsBetter: Bool) -> String {
            guard let without = figures[false] else { return "without keys: not available" }
            let base = "without keys, same run: \(BenchReport.format(without, unit: unit))"
            guard let with = figures[true], without > 0 else { return base }
            let change = (higherIsBetter ? without / with : with / without) - 1
            return base
                + (change >= 0
                    ? String(format: "; CURVE costs %.0f%%", change * 100) : String(format: "; with keys %.0f%% better: noise", -change * 100))
        }
        report.rows.append(
            BenchReport.Row(
                "updates/s at each view (slowest), Int, 1 view, with keys", unit: "rate", statebus: rates[true], raw: nil,
                note: cost(rates, unit: "rate", higherIsBetter: true)))
        report.rows.append(
            BenchReport.Row(
                "write→own confirmation p50, with keys", unit: "nanoseconds", statebus: echoes[true], raw: nil,
                note: cost(echoes, unit: "nanoseconds", higherIsBetter: false)))
    }

    // MARK: Durable writes

    mutating func durable() async {
        await durableRows(store: .sqlite, keyPrefix: "durable", key: { _ in nil }, measure: "acknowledged durable writes/s", holder: "host") {
            "\($0.formatted()) commits (fsyncs); no raw equivalent"
        }
    }

    /// The rows of durable writes to one store, one write in flight and the plan's window.
    private mutating func durableRows(
        store: DurableBench.DurableStore, keyPrefix: String, key: (Int) -> String?, measure: String, holder: String,
        commits: (Int) -> String
    ) async {
        for (writes, window) in [(plan.durableSequentialWrites, 1), (plan.durableWrites, plan.durableWindow)] {
            say("\(measure): \(writes), \(window) in flight")
            var row = BenchReport.Row("\(measure), \(window) in flight", unit: "rate", statebus: nil, raw: nil, key: key(window))
            do {
                let outcome = try await DurableBench(writes: writes, window: window, store: store).run()
                report.check(
                    "\(keyPrefix).\(window)", outcome.complete, outcome.problem ?? "all \(writes) writes acknowledged; \(holder) holds the last")
                if outcome.complete {
                    row.statebus = outcome.writesPerSecond
                    row.note = "\(writes.formatted()) writes in \(commits(outcome.commits))"
                } else {
                    row.note = "not available: \(outcome.problem ?? "")"
                }
            } catch {
                report.check("\(keyPrefix).\(window)", false, "\(error)")
                row.note = "not available: \(error)"
            }
            report.rows.append(row)
        }
    }

    /// Durable writes committed to etcd by a group's leader, beside the SQLite figures, and
    /// the time from a leader's SIGKILL to every view live on the new one.
    mutating func failover() async {
        guard LocalEtcd.executable != nil else {
            report.rows.append(
                BenchReport.Row(
                    "failover and durable writes to etcd", unit: "count", statebus: nil, raw: nil,
                    note: "not run: etcd is not installed (deploy/setup.sh --etcd installs Debian's etcd-server)"))
            return
        }
        await durableRows(
            store: .etcd, keyPrefix: "failover.durable", key: { "failover.durable.\($0)" }, measure: "acknowledged durable writes/s to etcd",
            holder: "etcd"
        ) { "\($0.formatted()) fenced etcd transactions (one member, no fsync)" }
        say("failover: \(plan.failoverKills) leader kills, \(plan.failoverViews) views")
        var median = BenchReport.Row("leader SIGKILL → every view live on the new leader, median", unit: "nanoseconds", statebus: nil, raw: nil)
        var worst = BenchReport.Row(
            "leader SIGKILL → every view live on the new leader, worst of \(plan.failoverKills)", unit: "nanoseconds", statebus: nil, raw: nil,
            key: "failover.worst")
        do {
            let outcome = try await FailoverBench(kills: plan.failoverKills, views: plan.failoverViews).run()
            report.check(
                "failover", outcome.problem == nil, outcome.problem ?? "\(plan.failoverKills) kills, every view live on the new leader each time")
            let sorted = outcome.takeovers.sorted().map { $0.inNanoseconds }
            if outcome.problem == nil, !sorted.isEmpty {
                median.statebus = sorted[sorted.count / 2]
                worst.statebus = sorted.last
                let lease = FailoverBench.leaseSeconds
                worst.note = "lease \(lease) s, heartbeat \(FailoverBench.heartbeatMs) ms, two hosts, \(plan.failoverViews) views; no raw equivalent"
            } else {
                worst.note = "not available: \(outcome.problem ?? "no kill measured")"
            }
        } catch {
            report.check("failover", false, "\(error)")
            worst.note = "not available: \(error)"
        }
        report.rows.append(median)
        report.rows.append(worst)
    }
}
