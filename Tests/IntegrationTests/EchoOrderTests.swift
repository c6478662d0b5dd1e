import Foundation
import Testing

@testable import statebus

/// The pieces of `statebus bench`'s echo at another view that the tiny bench cannot steer:
/// which view a round's copies reached first, how the two orders make one figure, the
/// rounds added until both orders were drawn, and the named pipe of the lockstep.
@Suite("the bench's echo at another view, order by order")
struct EchoOrderTests {
    static func round(_ p50: Double, watcherFirst: Bool?) -> EchoBench.Outcome {
        EchoBench.Outcome(p50: p50, p99: p50 * 2, p999: p50 * 3, count: 10, complete: true, observerFirst: watcherFirst)
    }

    @Test("a round's order is the share of its writes after the warm-up that reached the watching view first")
    func shareOfWritesFirst() throws {
        // The first two are warm-up; of the four after, the watching view was first in
        // three (a tie is not first).
        let arrived: [UInt64] = [1, 1, 10, 20, 30, 40]
        let ownCopies: [UInt64] = [9, 9, 11, 21, 31, 40]
        #expect(try EchoTimes.shareArrivedFirst(arrived, before: ownCopies, skipping: 2) == 0.75)
        #expect(try EchoTimes.shareArrivedFirst(ownCopies, before: arrived, skipping: 2) == 0)
        #expect(throws: BenchError.self) { try EchoTimes.shareArrivedFirst(arrived, before: [1, 2], skipping: 0) }
    }

    @Test("the judged figure is the mean of the two orders' medians, whatever the number of rounds of each")
    func figureWeighsBothOrdersAlike() throws {
        let rounds = [
            Self.round(40, watcherFirst: true), Self.round(100, watcherFirst: false), Self.round(42, watcherFirst: true),
            Self.round(41, watcherFirst: true), Self.round(44, watcherFirst: true)
        ]
        let orders = EchoOrders(rounds)
        #expect(orders.watcherFirst.map(\.p50) == [40, 42, 41, 44] && orders.writerFirst.map(\.p50) == [100])
        #expect(orders.hasBoth)
        let figure = try #require(orders.figure)
        // Watcher first: the mean of the middle two (41 and 42); writer first: 100.
        #expect(figure.p50 == (41.5 + 100) / 2 && figure.p99 == (83 + 200) / 2 && figure.count == 50)
        #expect(orders.drawn(by: "StateBus") == "StateBus drew the writer's copy first in 1 of 5 rounds")
        // One order only, or a round without one (the own confirmation): no figure.
        #expect(EchoOrders(Array(rounds.prefix(1)) + [Self.round(50, watcherFirst: nil)]).figure == nil)
    }

    @Test("each order's row compares rounds of that order only, and an order a side did not draw has no figure")
    func orderRows() {
        let statebus = EchoOrders([Self.round(41, watcherFirst: true), Self.round(66, watcherFirst: false)])
        let raw = EchoOrders([Self.round(40, watcherFirst: true), Self.round(39, watcherFirst: true)])
        let rows = BenchRunner.orderRows(statebus, raw, measure: "echo", key: "echo.other.pinned")
        #expect(rows.map(\.key) == ["echo.other.pinned.first.p50", "echo.other.pinned.second.p50"])
        #expect(rows[0].statebus == 41 && rows[0].raw == 39.5)
        #expect(rows[1].statebus == nil && rows[1].raw == nil && rows[1].note == "not available: StateBus drew it in 1 rounds, raw in 0")
        // The note's ratios pair rounds of one order: 41 against 39 and 40, never 66 against either.
        let note = BenchRunner.roundFigures(
            [Self.round(41, watcherFirst: true), Self.round(66, watcherFirst: false), Self.round(42, watcherFirst: true)],
            [Self.round(40, watcherFirst: true), Self.round(55, watcherFirst: false), Self.round(41, watcherFirst: true)], byOrder: true)
        #expect(note?.hasPrefix("each round's ratio within its order: 1.02x, 1.02x, 1.20x;") == true, "\(note ?? "nil")")
    }

    @Test("rounds are added, up to the most, until enough; none after a side fails")
    func roundsUntilEnough() async {
        var ran = 0
        let enoughAtFive = await AlternatingRounds<Int>.run(
            rounds: 3, most: 9, enough: { $0.statebus.outcomes.count >= 5 },
            statebus: {
                ran += 1
                return ran
            }, raw: { 0 }, problem: { _ in nil })
        #expect(enoughAtFive.statebus.outcomes == [1, 2, 3, 4, 5] && enoughAtFive.raw.outcomes.count == 5)
        let never = await AlternatingRounds<Int>.run(
            rounds: 2, most: 6, enough: { _ in false }, statebus: { 1 }, raw: { 0 }, problem: { _ in nil })
        #expect(never.statebus.outcomes.count == 6)
        let failing = await AlternatingRounds<Int>.run(
            rounds: 2, most: 6, enough: { _ in false }, statebus: { 1 }, raw: { 0 }, problem: { $0 == 0 ? "lost" : nil })
        #expect(failing.raw.failure == "lost" && failing.statebus.outcomes.count == 2)
    }

    @Test("the lockstep's pipe carries each report to the writer, and a missing one ends the wait at its deadline")
    func observerReports() throws {
        let folder = NSTemporaryDirectory() + "echo-reports-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = folder + "/reports"
        try ObserverReports.create(at: path)
        let writer = try ObserverReports(opening: path)
        let observer = try ObserverReports(opening: path)
        try observer.report(0)
        try observer.report(3)
        // A later report answers an earlier value: values the observer took together.
        try writer.wait(for: 2, timeout: .seconds(5))
        #expect(try writer.nextReport(before: .now + .milliseconds(50)) == nil)
        let started = ContinuousClock.now
        #expect(throws: BenchError.self) { try writer.wait(for: 4, timeout: .milliseconds(200)) }
        #expect(ContinuousClock.now - started >= .milliseconds(200))
    }
}
