import StateBusRuntime

/// What a terminal command printed last, so the several observers that may print the same
/// thing (a value change, a position change, the command's own edit) never print it twice in
/// a row.
final class LastShown<Shown: Equatable & Sendable>: Sendable {
    private let last = Locked<Shown?>(nil)

    /// Calls `print` with `shown` if it differs from what was shown last (or always, with
    /// `force`).
    func showIfChanged(_ shown: Shown, force: Bool = false, print: (Shown) -> Void) {
        // Under the lock, so two observers cannot interleave their check and their print.
        last.withLock { last in
            guard force || shown != last else { return }
            last = shown
            print(shown)
        }
    }
}
