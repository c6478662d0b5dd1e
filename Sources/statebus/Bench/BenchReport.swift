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

        init(_ measure: String, unit: String, statebus: Double?, raw: Double?, goal: String? = nil, note: String? = nil) {
            self.measure = measure
            self.unit = unit
            self.statebus = statebus
            self.raw = raw
            self.goal = goal
            self.note = note
            if let statebus, let raw, raw > 0 { ratio = statebus / raw }
        }
    }

    /// A goal from the project's performance rules, with the figure that decides it.
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
        let header = ["measure", "StateBus", "raw libzmq", "ratio", "goal"]
        let lines = rows.map { row in
            [
                row.measure,
                row.statebus.map { Self.format($0, unit: row.unit) } ?? "not available",
                row.raw.map { Self.format($0, unit: row.unit) } ?? "—",
                row.ratio.map { String(format: "%.2fx", $0) } ?? "—",
                row.goal ?? ""
            ]
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
        let notes = rows.compactMap { row in row.note.map { "- \(row.measure): \($0)" } }
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
            if value < 1_048_576 { return String(format: "%.1f KB", value / 1024) }
            return String(format: "%.1f MB", value / 1_048_576)
        default:
            return String(format: "%.0f", value)
        }
    }
}
