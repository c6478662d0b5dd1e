import Foundation
import Logging
import StateBus
import StateBusEtcd
import StateBusTesting
import StateBusWire
import Testing

/// The leader of a two-host group is killed with SIGKILL again and again while three view
/// processes, given both hosts, pipeline durable writes; every cycle checks etcd against
/// what the views saw acknowledged.
@Suite("High availability: durable writes across 20 leader kills")
struct HighAvailabilityKillTests {
    static let cycles = 20

    @Test("20 leader kills during pipelined durable writes from three views: none lost, none applied twice, none out of order")
    func leaderKills() async throws {
        try await withTestSystem { system in
            let etcd = try await system.startEtcd()
            let properties = ["a", "b", "c"]
            let statebus = try BuiltProducts.executable("statebus")
            let names = ["one", "two"]
            let controls = names.map { system.endpoint("\($0).control") }
            var hosts: [NodeProcess] = []
            for (name, control) in zip(names, controls) {
                let host = try system.startProcess(
                    executable: statebus,
                    arguments: [
                        "host", "--name", name, "--control", control, "--heartbeat-ms", "200", "--ha", etcd.endpoint, "--ha-group", "kills",
                        "--ha-lease-seconds", "2", "--object", "Counter"
                    ] + properties.flatMap { ["--property", "\($0):int~=0"] }, name: name)
                _ = try await host.waitForLine("host \(name)'s role") { $0.hasPrefix("role ") }
                hosts.append(host)
            }
            let tally = PublicationTally(updatesEndpoints: controls.map { "\($0).updates" }, object: "Counter")
            defer { tally.stop() }
            let etcdClient = try EtcdClient(endpoints: [etcd.endpoint], requestTimeout: .seconds(5), logger: Logger(label: "test.etcd"))
            defer { Task { await etcdClient.shutdown() } }

            var writers: [KillCycleTests.Writer] = []
            for property in properties {
                let process = try system.startProcess(
                    executable: statebus,
                    arguments: ["watch", "--json", "--edits", "--control", controls.joined(separator: ","), "--object", "Counter"],
                    name: "view-\(property)")
                writers.append(KillCycleTests.Writer(property: property, process: process))
                try await process.waitForLine("view \(property) live") { $0.contains(#""connection":"live""#) }
            }

            var lost = 0
            var takeovers: [Duration] = []
            for cycle in 1...Self.cycles {
                for writer in writers {
                    let first = writer.linesSent + 1
                    writer.send(150)
                    try await writer.waitForAnswer(to: first + 19, "an answer in cycle \(cycle) to view \(writer.property)", timeout: .seconds(60))
                }
                guard let leader = hosts.firstIndex(where: { $0.output.last(where: { $0.hasPrefix("role ") })?.hasPrefix("role leader") == true })
                else {
                    Issue.record("cycle \(cycle): no host says it leads: \(hosts.map { $0.output.suffix(3) })")
                    return
                }
                let standby = hosts[1 - leader]
                let mark = standby.lineCount
                let killed = ContinuousClock.now
                hosts[leader].kill()
                // etcd holds every value a view saw acknowledged.
                let stored = try await etcdClient.range(prefix: "/statebus/kills/data/Counter/").keyValues
                for writer in writers {
                    let acknowledged = writer.answers.accepted.max() ?? 0
                    let row = stored.first { $0.keyString.hasSuffix("/\(writer.property)") }
                    let durable =
                        row.flatMap { try? Value(serializedBytes: $0.value.dropFirst(8)) }.flatMap { value -> Int? in
                            if case .int(let number) = value { Int(number) } else { nil }
                        } ?? 0
                    if durable < acknowledged {
                        lost += acknowledged - durable
                        Issue.record("cycle \(cycle): view \(writer.property) saw \(acknowledged) acknowledged, etcd holds \(durable)")
                    }
                }
                _ = try await standby.waitForLine("the standby to lead (cycle \(cycle))", after: mark, timeout: .seconds(60)) {
                    $0.hasPrefix("role leader")
                }
                takeovers.append(ContinuousClock.now - killed)
                let restartMark = hosts[leader].lineCount
                try hosts[leader].start()
                _ = try await hosts[leader].waitForLine(
                    "the killed host back as a standby (cycle \(cycle))", after: restartMark, timeout: .seconds(60)
                ) {
                    $0.hasPrefix("role standby leader=")
                }
            }

            // The last leader answers every write still unanswered.
            for writer in writers {
                let answered = writer.answers
                for number in 1...writer.linesSent where !answered.accepted.contains(number) && !answered.refused.contains(number) {
                    try await writer.waitForAnswer(to: number, "the answer to write \(number) of view \(writer.property)", timeout: .seconds(120))
                }
            }
            let final = try await etcdClient.range(prefix: "/statebus/kills/data/Counter/").keyValues
            // The stored answers live under a lease: those of views long gone leave by themselves.
            let answers = try await etcdClient.range(prefix: "/statebus/kills/answers/").keyValues
            #expect(!answers.isEmpty && answers.allSatisfy { $0.lease != 0 }, "\(answers.filter { $0.lease == 0 }.prefix(3))")
            let acknowledged = writers.map(\.answers.accepted.count).reduce(0, +)
            let refused = writers.map(\.answers.refused.count).reduce(0, +)
            let duplicates = tally.duplicates
            let sorted = takeovers.sorted()
            print(
                "leader kills: \(Self.cycles) cycles, \(writers.map(\.linesSent).reduce(0, +)) durable writes, \(acknowledged) acknowledged, "
                    + "\(refused) refused, \(lost) lost, \(duplicates.count) applied twice, \(tally.regressions.count) out of order; "
                    + "kill to new leader: median \(sorted[sorted.count / 2]), worst \(sorted.last ?? .zero)")
            #expect(tally.regressions.isEmpty, "published out of order: \(tally.regressions.prefix(5))")
            #expect(duplicates.isEmpty, "applied twice: \(duplicates.keys.sorted().prefix(5))")
            #expect(writers.allSatisfy { $0.process.isRunning })
            #expect(refused == 0, "refused: \(writers.flatMap { $0.process.output.filter { $0.contains(#""accepted":false"#) } }.prefix(3))")
            #expect(lost == 0)
            for writer in writers {
                let row = final.first { $0.keyString.hasSuffix("/\(writer.property)") }
                let value = row.flatMap { try? Value(serializedBytes: $0.value.dropFirst(8)) }
                #expect(
                    value == .int(Int64(writer.linesSent)),
                    "view \(writer.property): etcd holds \(String(describing: value)), last write \(writer.linesSent)")
            }
        }
    }
}
