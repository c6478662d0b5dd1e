/// The figures `statebus bench` judges, and what each must reach: the bars StateBus is held
/// to and the goals beyond them, by the rows' keys. A target on a ratio is judged against
/// raw libzmq measured in the same run, the only comparison that means something on a noisy
/// machine; a target against Qt Remote Objects against its figure from the same run
/// (`--peer qtro`); an absolute target (a join's time, the view's memory) has neither.
struct BenchTarget: Sendable {
    /// A threshold a row's figure is held to.
    enum Threshold: Sendable {
        /// StateBus over raw at least this (throughput).
        case ratioAtLeast(Double)
        /// StateBus over raw at most this (latency).
        case ratioAtMost(Double)
        /// The StateBus figure itself at most this, in the row's unit.
        case atMost(Double)
        /// The StateBus figure itself at least this, in the row's unit.
        case atLeast(Double)
        /// StateBus over Qt Remote Objects at most 1 (the same sense as the raw ratio): as
        /// fast or as small as QtRO in the same run; not available without `--peer qtro`.
        case qtroOrBetter

        /// Whether the row meets the threshold; `nil` when the figure it needs is missing.
        func isMet(by row: BenchReport.Row) -> Bool? {
            switch self {
            case .ratioAtLeast(let bound): row.ratio.map { $0 >= bound }
            case .ratioAtMost(let bound): row.ratio.map { $0 <= bound }
            case .atMost(let bound): row.statebus.map { $0 <= bound }
            case .atLeast(let bound): row.statebus.map { $0 >= bound }
            case .qtroOrBetter: row.qtroRatio.map { $0 <= 1 }
            }
        }

        /// The threshold for the table's goal column: `≥0.35x`, `≤100.0 ms`.
        func label(unit: String) -> String {
            switch self {
            case .ratioAtLeast(let bound): "≥\(Self.ratio(bound))"
            case .ratioAtMost(let bound): "≤\(Self.ratio(bound))"
            case .atMost(let bound): "≤\(BenchReport.format(bound, unit: unit))"
            case .atLeast(let bound): "≥\(BenchReport.format(bound, unit: unit))"
            case .qtroOrBetter: "≤ QtRO's"
            }
        }

        /// The figure the threshold judges, for the list of goals: `0.37x`, `61.0 ms`.
        func figure(of row: BenchReport.Row) -> String {
            switch self {
            case .ratioAtLeast, .ratioAtMost:
                guard let ratio = row.ratio else { return "not available" }
                return Self.ratio(ratio) + (row.statebus.map { " (\(BenchReport.format($0, unit: row.unit)))" } ?? "")
            case .atMost, .atLeast:
                return row.statebus.map { BenchReport.format($0, unit: row.unit) } ?? "not available"
            case .qtroOrBetter:
                guard let ratio = row.qtroRatio, let statebus = row.statebus, let qtro = row.qtro else {
                    return "not available (QtRO's figure needs --peer qtro)"
                }
                return
                    "\(BenchReport.format(statebus, unit: row.unit)) against QtRO's \(BenchReport.format(qtro, unit: row.unit)) (\(Self.ratio(ratio)))"
            }
        }

        private static func ratio(_ value: Double) -> String { String(format: "%.2fx", value) }
    }

    /// What the target is about, for the list of goals.
    let what: String
    /// What the figure must reach (the bar the bench judges); `nil` for a goal without a bar.
    let bar: Threshold?
    /// The goal beyond the bar.
    let beyond: Threshold?

    /// The targets by row key. The Int and string throughput, the late join of 100,000
    /// properties and failover keep the bars and goals they had; struct throughput, every
    /// echo row, the late join of 10,000 properties and the view's memory have those of
    /// latency and the first minutes (issue 36).
    static let byKey: [String: BenchTarget] = [
        "throughput.int.1": BenchTarget(what: "Int updates/s at 1 view", bar: .ratioAtLeast(0.35), beyond: .ratioAtLeast(0.5)),
        "throughput.int.3": BenchTarget(what: "Int updates/s at each of 3 views", bar: .ratioAtLeast(0.35), beyond: .ratioAtLeast(0.5)),
        "throughput.struct.1": BenchTarget(what: "struct (3 fields) updates/s at 1 view", bar: .ratioAtLeast(0.3), beyond: .ratioAtLeast(0.5)),
        "throughput.string.1": BenchTarget(what: "String(256 B) updates/s at 1 view", bar: nil, beyond: .ratioAtLeast(0.5)),
        "echo.own.p50": BenchTarget(
            what: "write→own confirmation p50 against raw DEALER↔ROUTER", bar: .ratioAtMost(1.1), beyond: .ratioAtMost(1.0)),
        "echo.own.p99": BenchTarget(
            what: "write→own confirmation p99 against raw DEALER↔ROUTER", bar: .ratioAtMost(1.5), beyond: .ratioAtMost(1.0)),
        "echo.other.p50": BenchTarget(
            what: "write→echo at another view p50 against raw DEALER→ROUTER→PUB→SUB", bar: .ratioAtMost(1.1), beyond: .ratioAtMost(1.0)),
        "echo.own.pinned.p50": BenchTarget(
            what: "write→own confirmation p50, low-latency profile, against raw pinned", bar: .ratioAtMost(1.2), beyond: .ratioAtMost(1.05)),
        "echo.other.pinned.p50": BenchTarget(
            what: "write→echo at another view p50, low-latency profile, against raw pinned", bar: .ratioAtMost(1.2),
            beyond: .ratioAtMost(1.05)),
        "join.10000": BenchTarget(what: "late join of 10,000 properties", bar: .qtroOrBetter, beyond: .atMost(10e6)),
        // The goal beyond is Qt Remote Objects' own figure when that bar was set: 57 ms.
        "join.100000": BenchTarget(what: "late join of 100,000 properties", bar: .atMost(100e6), beyond: .atMost(57e6)),
        "memory.view.100000": BenchTarget(
            what: "view peak RSS holding 100,000 properties", bar: .qtroOrBetter, beyond: .atMost(24 * 1_048_576)),
        "failover.worst": BenchTarget(what: "leader SIGKILL → every view live on the new leader, worst", bar: .atMost(3e9), beyond: .atMost(1e9)),
        "failover.durable.10000": BenchTarget(what: "durable writes/s to etcd, 10,000 in flight", bar: .atLeast(10_000), beyond: nil)
    ]
}

extension BenchReport {
    /// Judges every row that has a target: writes the verdicts into the row's goal column
    /// and the list of goals. Rows without their figure are judged "not available".
    mutating func judgeTargets() {
        for index in rows.indices {
            guard let key = rows[index].key, let target = BenchTarget.byKey[key] else { continue }
            let row = rows[index]
            var cells: [String] = []
            if let bar = target.bar {
                let status = goal("bar: \(target.what) \(bar.label(unit: row.unit))", met: bar.isMet(by: row), figure: bar.figure(of: row))
                cells.append("bar \(bar.label(unit: row.unit)): \(status)")
            }
            if let beyond = target.beyond {
                let status = goal(
                    "goal: \(target.what) \(beyond.label(unit: row.unit))", met: beyond.isMet(by: row), figure: beyond.figure(of: row))
                cells.append("goal \(beyond.label(unit: row.unit)): \(status)")
            }
            rows[index].goal = cells.joined(separator: "; ")
        }
    }
}
