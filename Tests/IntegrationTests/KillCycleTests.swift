import Foundation
import StateBus
import StateBusTesting
import Testing

/// The host is killed with SIGKILL again and again while three view processes pipeline
/// durable writes; every cycle checks the file against what the views saw acknowledged.
@Suite("Durable writes across 20 host kills")
struct KillCycleTests {
    static let cycles = 20
    /// Writes each view queues per cycle, without waiting for answers.
    static let burst = 150
    /// Answers each view must hear in a cycle before the kill.
    static let answersBeforeKill = 20

    /// One view process and what it was told.
    final class Writer {
        let property: String
        let process: NodeProcess
        /// Input lines sent so far; line `k` writes the value `k`.
        var linesSent = 0

        init(property: String, process: NodeProcess) {
            self.property = property
            self.process = process
        }

        /// The answers the view printed: the line numbers accepted and refused.
        var answers: (accepted: Set<Int>, refused: Set<Int>) {
            var accepted: Set<Int> = []
            var refused: Set<Int> = []
            for line in process.output where line.contains(#""event":"write""#) {
                guard let number = Self.lineNumber(in: line) else { continue }
                if line.contains(#""accepted":true"#) { accepted.insert(number) } else { refused.insert(number) }
            }
            return (accepted, refused)
        }

        static func lineNumber(in line: String) -> Int? {
            guard let range = line.range(of: #"{"line":"#) else { return nil }
            return Int(line[range.upperBound...].prefix { $0.isNumber })
        }

        /// Queues `count` more writes: line k writes k, so values only grow.
        func send(_ count: Int) {
            for _ in 0..<count {
                linesSent += 1
                process.send(line: "\(property) \(linesSent)")
            }
        }

        /// Waits for the answer to input line `number`, whatever it is.
        func waitForAnswer(to number: Int, _ description: String, timeout: Duration) async throws {
            let prefix = #"{"line":\#(number),"event":"write""#
            try await process.waitForLine(description, timeout: timeout) { $0.hasPrefix(prefix) }
        }
    }

    @Test("20 kill -9 cycles during pipelined durable writes from three views: none lost, none applied twice, none out of order, no view aborts")
    func killCycles() async throws {
        let folder = "/tmp/sbk-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let control = "ipc://\(folder)/control"
        let database = "\(folder)/cycles.sqlite"
        let statebus = try BuiltProducts.executable("statebus")
        let properties = ["a", "b", "c"]
        let host = try NodeProcess(
            executable: statebus,
            arguments: ["host", "--control", control, "--object", "Counter", "--database", database, "--heartbeat-ms", "200"]
                + properties.flatMap { ["--property", "\($0):int~=0"] },
            name: "host")
        defer { host.terminate() }
        try await host.waitForLine("the host ready") { $0.hasPrefix("ready ") }
        let tally = PublicationTally(updatesEndpoint: "\(control).updates", object: "Counter")
        defer { tally.stop() }

        var writers: [Writer] = []
        defer { for writer in writers { writer.process.terminate() } }
        for property in properties {
            let process = try NodeProcess(
                executable: statebus, arguments: ["watch", "--json", "--edits", "--control", control, "--object", "Counter"], name: "view-\(property)"
            )
            writers.append(Writer(property: property, process: process))
            try await process.waitForLine("view \(property) live") { $0.contains(#""connection":"live""#) }
        }

        var lost = 0
        for cycle in 1...Self.cycles {
            for writer in writers {
                let first = writer.linesSent + 1
                writer.send(Self.burst)
                // Progress in this cycle: answers come in the order the writes went.
                try await writer.waitForAnswer(
                    to: first + Self.answersBeforeKill - 1, "an answer in cycle \(cycle) to view \(writer.property)", timeout: .seconds(60))
            }
            host.kill()
            // The file after the kill holds every value a view saw acknowledged.
            let stored = try SQLitePropertyStore(path: database, readOnly: true).loadAll()
            for writer in writers {
                let acknowledged: Int = writer.answers.accepted.max() ?? 0
                var durable = 0
                for row in stored where row.property == writer.property {
                    if case .int(let value) = row.value { durable = Int(value) }
                }
                if durable < acknowledged {
                    lost += acknowledged - durable
                    Issue.record("cycle \(cycle): view \(writer.property) saw \(acknowledged) acknowledged, the file holds \(durable)")
                }
            }
            let mark = host.lineCount
            try host.start()
            try await host.waitForLine("the host ready again (cycle \(cycle))", after: mark) { $0.hasPrefix("ready ") }
        }

        // The last host answers every write still unanswered.
        for writer in writers {
            let answered = writer.answers
            for number in 1...writer.linesSent where !answered.accepted.contains(number) && !answered.refused.contains(number) {
                try await writer.waitForAnswer(to: number, "the answer to write \(number) of view \(writer.property)", timeout: .seconds(120))
            }
        }
        let final = try SQLitePropertyStore(path: database, readOnly: true).loadAll()
        let aborts = writers.filter { !$0.process.isRunning }.count
        let acknowledged = writers.map(\.answers.accepted.count).reduce(0, +)
        let refused = writers.map(\.answers.refused.count).reduce(0, +)
        let duplicates = tally.duplicates
        print(
            "kill cycles: \(Self.cycles) cycles, \(writers.map(\.linesSent).reduce(0, +)) durable writes, \(acknowledged) acknowledged, \(refused) refused, \(lost) lost, \(duplicates.count) applied twice, \(tally.regressions.count) published out of order, \(aborts) view aborts (\(tally.published) writes seen published)"
        )
        let someDuplicates = duplicates.keys.sorted().prefix(5).joined(separator: ", ")
        let regressions = tally.regressions
        let someRegressions = regressions.prefix(5).joined(separator: "; ")
        #expect(regressions.count == 0, "a view's writes were published out of order, \(regressions.count) times, such as \(someRegressions)")
        #expect(duplicates.count == 0, "\(duplicates.count) writes published twice, such as \(someDuplicates)")
        #expect(aborts == 0)
        #expect(
            refused == 0, "durable writes refused: \(writers.flatMap { $0.process.output.filter { $0.contains(#""accepted":false"#) } }.prefix(3))")
        #expect(lost == 0)
        for writer in writers {
            let last: Value = .int(Int64(writer.linesSent))
            let value: Value? = final.first(where: { $0.property == writer.property })?.value
            #expect(value == last, "view \(writer.property): the file holds \(String(describing: value)), last write \(writer.linesSent)")
        }
    }
}
