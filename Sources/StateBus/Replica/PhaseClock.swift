/// A connection's phase and when it began: the phase's deadline counts from then. Kept
/// together so that no phase is entered without its clock (a view's join, a relay's
/// upstream join).
struct PhaseClock<Phase: Equatable> {
    private(set) var current: Phase
    /// When the phase began, or when ``restart(at:)`` last said it made progress.
    private(set) var since: ContinuousClock.Instant

    init(_ phase: Phase, at now: ContinuousClock.Instant = .now) {
        current = phase
        since = now
    }

    /// Enters `phase` at `now` (also the phase it is in: its clock starts again).
    mutating func enter(_ phase: Phase, at now: ContinuousClock.Instant = .now) {
        current = phase
        since = now
    }

    /// The phase made progress (a part of a large snapshot came): its deadline counts from
    /// `now`.
    mutating func restart(at now: ContinuousClock.Instant = .now) { since = now }

    /// How long the phase has lasted, or since its last progress.
    func elapsed(at now: ContinuousClock.Instant) -> Duration { now - since }
}
