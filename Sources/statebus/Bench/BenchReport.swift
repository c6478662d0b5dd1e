import Foundation

/// What `statebus bench` found: figures beside their raw-libzmq baselines, goals met or
/// missed, and the correctness checks that decide whether a figure counts. Printed as a
/// table, or as one JSON document with `--json`.
struct BenchReport: Codable, Sendable {
    /// One line of the table.
    struct Row: Codable, Sendable {
        /// What is measured.
        var measure: String
        /// `rate` (per second), `nanoseconds`, `bytes` or `count`.
        var unit: String
        /// The StateBus figure; `nil` when not available (see `note`).
        var statebus: Double?
        /// The raw libzmq figure in the same run; `nil` when there is no raw equivalent.
        var raw: Double?
        /// The goal's verdict for this figure, if it has a goal: "met", "missed" or "not available".
        var goal: String?
        /// Why a figure is missing, or what else to know.
        var note: String?

        /// StateBus over raw (for latencies above 1 means slower than raw).
        var ratio: Double?
        /// A stable name for the figure (`throughput.int.1`, `echo.p50`, `join.100000`,
        /// `memory.view`), by which the peer's figure is matched and plots find it.
        var key: String?
        /// Qt Remote Objects' figure for the same measure, measured in the same run
        /// (`--peer qtro`); `nil` when not run or not comparable.
        var qtro: Double?
        /// StateBus over QtRO, with the same sense as ``ratio``.
        var qtroRatio: Double?

        init(
            _ measure: String, unit: String, statebus: Double?, raw: Double?, goal: String? = nil, note: String? = nil, key: String? = nil
        ) {
            self.measure = measure
            self.key = key
            self.unit = unit
            self.statebus = statebus
            self.raw = raw
            self.goal = goal
            self.note = note
            if let statebus, let raw, raw > 0 { ratio = statebus / raw }
        }

        /// Records the peer's figure for this measure, and the ratio to it.
        mutating func setQtRO(_ figure: Double) {
            qtro = figure
            if let statebus, figure > 0 { qtroRatio = statebus / figure }
        }
    }

    /// A target the figures are judged against (a bar StateBus is held to, or a goal beyond
    /// it, see ``BenchTarget``, or a goal of the project's performance rules),
    /// with the figure that decides it.
    struct Goal: Codable, Sendable {
        var text: String
        /// "met", "missed" or "not available".
        var status: String
        var figure: String
    }

    /// A correctness check: a figure whose check failed does not count.
    struct Check: Codable, Sendable {
        var name: String
        var passed: Bool
        var detail: String
    }

    var configuration: String
    var build: String
    var date: String
    var machine: String
    var rows: [Row] = []
    var goals: [Goal] = []
    var checks: [Check] = []
    /// What the peer benchmark said of itself (`--peer qtro`): its version and how it ran,
    /// or why it did not run.
    var peer: String?

    /// Whether every correctness check passed.
    var allChecksPassed: Bool { checks.allSatisfy(\.passed) }

    mutating func check(_ name: String, _ passed: Bool, _ detail: String) {
        checks.append(Check(name: name, passed: passed, detail: detail))
    }

    /// Records a goal and returns its verdict.
    @discardableResult
    mutating func goal(_ text: String, met: Bool?, figure: String) -> String {
        let status = met.map { $0 ? "met" : "missed" } ?? "not available"
        goals.append(Goal(text: text, status: status, figure: figure))
        return status
    }

    // MARK: Output

    /// The JSON document.
    func json() throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        return String(decoding: try encoder.encode(self), as: UTF8.self)
    }

    /// The table, the goals and the checks, for people.
    func table() -> String {
        let withPeer = rows.contains { $0.qtro != nil }
        let header = ["measure", "StateBus", "raw libzmq", "ratio"] + (withPeer ? ["QtRO", "vs QtRO"] : []) + ["goal"]
        let lines = rows.map { row -> [String] in
            var cells: [String] = [
                row.measure,
                row.statebus.map { Self.format($0, unit: row.unit) } ?? "not available",
                row.raw.map { Self.format($0, unit: row.unit) } ?? "—",
                row.ratio.map { String(format: "%.2fx", $0) } ?? "—"
            ]
            if withPeer {
                cells.append(row.qtro.map { Self.format($0, unit: row.unit) } ?? "—")
                cells.append(row.qtroRatio.map { String(format: "%.2fx", $0) } ?? "—")
            }
            cells.append(row.goal ?? "")
            return cells
        }
        let widths = header.indices.map { column in ([header] + lines).map { $0[column].count }.max() ?? 0 }
        func render(_ cells: [String]) -> String {
            "| " + cells.enumerated().map { $0.element.padding(toLength: widths[$0.offset], withPad: " ", startingAt: 0) }.joined(separator: " | ")
                + " |"
        }
        var out = ["statebus bench (\(configuration), \(build) build, \(date))", machine, ""]
        out.append(render(header))
        out.append("|" + widths.map { String(repeating: "-", count: $0 + 2) }.joined(separator: "|") + "|")
        out += lines.map(render)
        var notes = rows.compactMap { row in row.note.map { "- \(row.measure): \($0)" } }
        if let peer { notes.append("- QtRO: \(peer)") }
        if !notes.isEmpty { out += ["", "Notes:"] + notes }
        out += ["", "Goals:"] + goals.map { "- [\($0.status)] \($0.text): \($0.figure)" }
        let failed = checks.filter { !$0.passed }
        out +=
            ["", "Correctness checks: \(checks.count - failed.count) of \(checks.count) passed"] + failed.map { "- FAILED \($0.name): \($0.detail)" }
        return out.joined(separator: "\n")
    }

    /// A figure with its unit, readable.
    static func format(_ value: Double, unit: String) -> String {
        switch unit {
        case "rate":
            if value >= 1e6 { return String(format: "%.2f M/s", value / 1e6) }
            if value >= 1e3 { return String(format: "%.1f k/s", value / 1e3) }
            return String(format: "%.0f /s", value)
        case "nanoseconds":
            if value >= 1e6 { return String(format: "%.1f ms", value / 1e6) }
            return String(format: "%.1f µs", value / 1e3)
        case "bytes":
            // Binary units, as RSS is counted (the QtRO peer's "MB" is KiB / 1024 too).
            if value < 1_048_576 { return String(format: "%.1f KiB", value / 1024) }
            return String(format: "%.1f MiB", value / 1_048_576)
        default:
            return String(format: "%.0f", value)
        }
    }
}
