/// One side's rounds of the echo at another view in the low-latency profile, by the order in
/// which the host's two copies of each write reached the views.
///
/// On one CPU the view whose copy the host's libzmq sends second waits for the other's turn
/// on the CPU: the watching view's figure has two modes, one per order. The order is that of
/// two pipe addresses in the host's XPUB, drawn anew with each round's host, for raw libzmq
/// as for StateBus. A median of rounds then says more about how many rounds drew each order
/// than about either side, so the figure the bench judges gives each order the same weight:
/// each percentile is the mean of the two orders' medians. Rounds of one order compare with
/// rounds of the same order only.
struct EchoOrders {
    /// The rounds in which the watching view took most writes before the writer had its own
    /// copy: the host sent the watching view's copy first.
    let watcherFirst: [EchoBench.Outcome]
    /// The rounds in which the writer's copy went first and the watching view waited.
    let writerFirst: [EchoBench.Outcome]

    /// Sorts `rounds` by their order; a round without one (never an echo at another view)
    /// is left out.
    init(_ rounds: [EchoBench.Outcome]) {
        watcherFirst = rounds.filter { $0.observerFirst == true }
        writerFirst = rounds.filter { $0.observerFirst == false }
    }

    /// Whether both orders were drawn.
    var hasBoth: Bool { !watcherFirst.isEmpty && !writerFirst.isEmpty }

    /// The figure with both orders weighed alike: each percentile the mean of the two
    /// orders' medians (``EchoBench/Outcome/median(of:)``); `nil` unless both were drawn.
    var figure: EchoBench.Outcome? {
        guard let first = EchoBench.Outcome.median(of: watcherFirst), let second = EchoBench.Outcome.median(of: writerFirst) else {
            return nil
        }
        return EchoBench.Outcome(
            p50: (first.p50 + second.p50) / 2, p99: (first.p99 + second.p99) / 2, p999: (first.p999 + second.p999) / 2,
            count: first.count + second.count, complete: first.complete && second.complete, problem: first.problem ?? second.problem)
    }

    /// "StateBus drew the writer's copy first in 3 of 9 rounds".
    func drawn(by side: String) -> String {
        "\(side) drew the writer's copy first in \(writerFirst.count) of \(writerFirst.count + watcherFirst.count) rounds"
    }
}
