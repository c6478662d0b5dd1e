/// The rounds of one figure of StateBus and raw libzmq, measured taking turns: round 0 runs
/// StateBus first, round 1 raw first, and so on, so that a machine whose speed drifts during
/// the figure slows both sides alike.
struct AlternatingRounds<Outcome: Sendable> {
    /// One side's rounds.
    struct Side {
        /// Every round that ran, the failed one included.
        var outcomes: [Outcome] = []
        /// Why a round failed; no further round of this side runs after one fails.
        var failure: String?
    }

    var statebus = Side()
    var raw = Side()

    /// Runs `rounds` rounds of each side, then more, up to `most`, until `enough` holds.
    /// - Parameters:
    ///   - most: the rounds at most (at least `rounds`); `nil`: `rounds`.
    ///   - enough: whether the rounds so far are enough, asked after `rounds` and after
    ///     each round beyond them; not asked once a side failed.
    ///   - problem: what is wrong with a round that ran (lost updates, wrong values), `nil`
    ///     for a good one.
    static func run(
        rounds: Int, most: Int? = nil, enough: (AlternatingRounds) -> Bool = { _ in true }, statebus: () async throws -> Outcome,
        raw: () async throws -> Outcome, problem: (Outcome) -> String?
    ) async -> AlternatingRounds {
        var result = AlternatingRounds()
        let least = max(1, rounds)
        for round in 0..<max(least, most ?? least) {
            if round >= least, result.statebus.failure != nil || result.raw.failure != nil || enough(result) { break }
            for statebusTurn in round % 2 == 0 ? [true, false] : [false, true] {
                if statebusTurn {
                    await take(statebus, into: &result.statebus, problem: problem)
                } else {
                    await take(raw, into: &result.raw, problem: problem)
                }
            }
        }
        return result
    }

    private static func take(_ run: () async throws -> Outcome, into side: inout Side, problem: (Outcome) -> String?) async {
        guard side.failure == nil else { return }
        do {
            let outcome = try await run()
            side.outcomes.append(outcome)
            side.failure = problem(outcome)
        } catch {
            side.failure = "\(error)"
        }
    }
}

extension BenchReport {
    /// Records one check per side of `rounds`, named `<name>.statebus` and `<name>.raw`:
    /// passed with the given detail, or failed with the reason its rounds stopped.
    mutating func check<Outcome>(_ rounds: AlternatingRounds<Outcome>, name: String, statebus: String, raw: String) {
        check("\(name).statebus", rounds.statebus.failure == nil, rounds.statebus.failure ?? statebus)
        check("\(name).raw", rounds.raw.failure == nil, rounds.raw.failure ?? raw)
    }
}
