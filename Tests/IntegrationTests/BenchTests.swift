import Foundation
import StateBusTesting
import Testing

/// `statebus bench --tiny`: the benchmark's own correctness checks, on real processes.
/// The figures are never asserted: on two busy cores they mean little, and the goals are
/// reported by the command, not enforced by tests.
@Suite("statebus bench checks what it measures")
struct BenchTests {
    /// Runs the tiny configuration and returns its JSON report and exit status.
    func runTinyBench() throws -> (report: [String: Any], status: Int32, output: [String]) {
        let bench = try NodeProcess(executable: try BuiltProducts.executable("statebus"), arguments: ["bench", "--tiny", "--json"], name: "bench")
        defer { bench.terminate() }
        let status = try bench.waitForExit(timeout: .seconds(400))
        let output = bench.output
        // Standard error (a debug build's warning) shares the pipe: the document starts at
        // the first line that opens it.
        let start = try #require(output.firstIndex(of: "{"), "no JSON document in:\n\(output.joined(separator: "\n"))")
        let text = output[start...].joined(separator: "\n")
        let object = try JSONSerialization.jsonObject(with: Data(text.utf8))
        return (try #require(object as? [String: Any]), status, output)
    }

    @Test("every view gets every update in order, every write is acknowledged and echoed, joins are complete")
    func tinyBenchPassesItsChecks() throws {
        let (report, status, output) = try runTinyBench()
        let checks = try #require(report["checks"] as? [[String: Any]])
        let byName = Dictionary(checks.map { ($0["name"] as? String ?? "", $0) }, uniquingKeysWith: { first, _ in first })
        var expected = [
            "echo.statebus", "echo.raw", "join.1000", "durable.1", "durable.16", "fanout.direct", "fanout.relayed", "fanout.relayed-quarter",
            "collection.1000"
        ]
        for kind in ["int", "string", "struct"] {
            for views in [1, 3] {
                expected += ["throughput.\(kind).\(views).statebus", "throughput.\(kind).\(views).raw"]
            }
        }
        for name in expected {
            let check = try #require(byName[name], "check \(name) missing; have \(byName.keys.sorted())")
            #expect(check["passed"] as? Bool == true, "\(name): \(check["detail"] ?? "")")
        }
        #expect(status == 0, "bench exited \(status):\n\(output.suffix(30).joined(separator: "\n"))")
        // A figure is present for every check that passed, and absent figures say why.
        let rows = try #require(report["rows"] as? [[String: Any]])
        #expect(
            rows.contains {
                ($0["measure"] as? String)?.hasPrefix("updates/s at each view (slowest), Int, 1 view") == true && $0["statebus"] is Double
            })
        for row in rows where row["statebus"] == nil {
            #expect((row["note"] as? String)?.isEmpty == false, "row without figure or reason: \(row)")
        }
        let goals = try #require(report["goals"] as? [[String: Any]])
        #expect(goals.allSatisfy { ["met", "missed", "not available"].contains($0["status"] as? String ?? "") })
    }
}
