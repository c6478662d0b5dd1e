import CoreMetrics
import Synchronization

extension Timer {
    /// Records the time since `start`.
    func recordInterval(since start: ContinuousClock.Instant) {
        let elapsed = ContinuousClock.now - start
        recordNanoseconds(elapsed.components.seconds * 1_000_000_000 + elapsed.components.attoseconds / 1_000_000_000)
    }
}

/// A count kept twice: in an atomic, which ``StateHost/statistics`` and friends read, and in
/// a swift-metrics `Counter`, which the application's metrics backend exports (Prometheus
/// with `statebus … --metrics`; nothing, at the cost of one call, when none is bootstrapped).
///
/// Its `add(_:ordering:)` and `load(ordering:)` have the shape of `Atomic<Int>`'s, so the
/// engines count as before; every access is relaxed (a count orders nothing else), whatever
/// `ordering` says. The `Counter` is made with the object: bootstrap the backend
/// (`MetricsSystem.bootstrap`) before creating hosts, relays and replicas.
final class MetricCounter: Sendable {
    private let value = Atomic<Int>(0)
    private let counter: Counter

    /// - Parameters:
    ///   - label: the metric's name (`statebus_host_requests_total`).
    ///   - dimensions: its labels (`[("outcome", "accepted")]`); keep their values few.
    init(_ label: String, _ dimensions: [(String, String)] = []) {
        counter = Counter(label: label, dimensions: dimensions)
    }

    /// Adds `amount` to both counts. - Returns: the atomic's values before and after.
    @discardableResult
    func add(_ amount: Int, ordering: AtomicUpdateOrdering) -> (oldValue: Int, newValue: Int) {
        if amount > 0 { counter.increment(by: amount) }
        return value.add(amount, ordering: .relaxed)
    }

    /// Takes `amount` back from the atomic count (a write accepted, then refused because its
    /// commit failed). The metric stays: a Prometheus counter never goes down, so the same
    /// event is counted again under its final outcome.
    func subtract(_ amount: Int, ordering: AtomicUpdateOrdering) {
        value.subtract(amount, ordering: .relaxed)
    }

    /// Sets the count to a total kept elsewhere (the database's commits); the metric grows
    /// by the difference.
    func store(_ total: Int, ordering: AtomicUpdateOrdering) {
        let previous = value.exchange(total, ordering: .relaxed)
        if total > previous { counter.increment(by: total - previous) }
    }

    /// The count.
    func load(ordering: AtomicLoadOrdering) -> Int { value.load(ordering: .relaxed) }
}
