import StateBusRuntime
import Testing

/// `withDeadline`, which every wait with a timeout in the package goes through: the first of
/// the work and the deadline decides, and the loser is cancelled rather than awaited to its end.
@Suite("withDeadline: the work or the deadline, whichever comes first")
struct DeadlineTests {
    /// What the losers would take if they were not cancelled: far more than any test may.
    static let never = Duration.seconds(600)

    struct Refusal: Error {}

    @Test("work that finishes first gives its result, and the deadline's sleep does not hold the call")
    func workFirst() async throws {
        let started = ContinuousClock.now
        let result = try await withDeadline(Self.never) { 42 }
        #expect(result == 42)
        #expect(started.duration(to: .now) < .seconds(60), "the call waited for the deadline it beat")
    }

    @Test("a deadline that passes first gives nil, and the work is cancelled")
    func deadlineFirst() async throws {
        let started = ContinuousClock.now
        // Work that only cancellation ends: the sleep stands for a wait on an event that never comes.
        let result = try await withDeadline(.milliseconds(50)) { () -> Int in
            try await Task.sleep(for: Self.never)
            return 1
        }
        #expect(result == nil)
        #expect(started.duration(to: .now) < .seconds(60), "the call waited for the work it gave up on")
    }

    @Test("work that returns nil is told apart from a deadline")
    func workReturnsNil() async throws {
        let result = try await withDeadline(Self.never) { () -> Int? in nil }
        #expect(result == .some(nil))
    }

    @Test("an error the work throws before the deadline reaches the caller")
    func workThrows() async throws {
        await #expect(throws: Refusal.self) {
            _ = try await withDeadline(Self.never) { () -> Int in throw Refusal() }
        }
    }
}
