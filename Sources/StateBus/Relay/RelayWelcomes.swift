import StateBusWire

/// The welcome a relay got from its upstream, and the one it gives its views from it.
struct RelayWelcomes {
    /// The upstream's last welcome; `nil` until it came. Kept across the relay's re-joins:
    /// its schema hash and session token go in the next hello.
    var upstream: Statebus_V1_Welcome?
    /// The welcome the relay gives its views (the upstream's, with the relay's endpoint),
    /// encoded once per upstream welcome; `nil` while the relay joins its upstream.
    var views: HostWelcome?
}
