/// The control endpoints a client may reach its host at, and the one it uses now.
///
/// A high-availability group (`statebus host --ha`) has several hosts, one of which leads;
/// the others are standbys that refuse a hello with `NOT_LEADER`, naming the leader when they
/// know it. A client given them all (`"tcp://a:7000,tcp://b:7000"`) says hello to one at a
/// time: to the leader a standby named, else to the next in the list (PROTOCOL.md, "Standby
/// hosts"). One endpoint behaves as before. It also keeps the standby refusals in a row and
/// when to say hello again after one that named no leader: a view and a relay follow a
/// group's leader by the same rule.
struct ControlEndpoints: Sendable, Equatable {
    /// The endpoints as given, in order.
    let listed: [String]
    /// The endpoint in use: one of `listed`, or a leader a standby named.
    private(set) var current: String
    /// Where in `listed` the next ``advance()`` goes on from.
    private var position = 0
    /// An endpoint left because it fell silent, and until when a standby naming it as the
    /// leader is not believed: etcd keeps a dead leader's key until its lease expires, and
    /// a standby repeats what etcd says.
    private var suspect: (endpoint: String, until: ContinuousClock.Instant)?
    /// Standby refusals since the last welcome.
    private(set) var standbyRefusals = 0
    /// When to say hello again after a standby refused it without naming a leader (an
    /// election under way): `nil` when nothing waits.
    private(set) var helloRetryDue: ContinuousClock.Instant?
    /// Whether a search of the listed hosts for the leader is under way (a view's, after a
    /// write refused by a leader that lost etcd).
    var searchingForLeader = false

    /// Reads a comma-separated list (one endpoint is a list of one).
    /// - Throws: `StateBusError` (`badRequest`) for an empty list or an empty entry.
    init(_ text: String) throws(StateBusError) {
        let entries = text.split(separator: ",", omittingEmptySubsequences: false).map(Self.trimmed)
        guard entries.allSatisfy({ !$0.isEmpty }) else {
            throw StateBusError(
                .badRequest,
                "the control endpoint list '\(text)' has an empty entry; give one endpoint or several separated by commas, "
                    + "such as tcp://10.0.0.1:7000,tcp://10.0.0.2:7000")
        }
        listed = entries
        current = entries[0]
    }

    /// An entry without the spaces around it: what Foundation's `CharacterSet.whitespaces`
    /// trims (CoreFoundation's table: tab, Unicode's space separators and the zero-width space
    /// U+200B), in the standard library's terms, so that a view does not load Foundation's
    /// string code and character tables into its resident memory for this alone (the
    /// Performance article, on the view's memory).
    private static func trimmed(_ entry: Substring) -> String {
        func isSpace(_ scalar: Unicode.Scalar) -> Bool {
            scalar == " " || scalar == "\t"
                || (scalar.value >= 0x80 && (scalar == "\u{200B}" || scalar.properties.generalCategory == .spaceSeparator))
        }
        let scalars = entry.unicodeScalars
        guard let first = scalars.firstIndex(where: { !isSpace($0) }), let last = scalars.lastIndex(where: { !isSpace($0) }) else {
            return ""
        }
        return String(scalars[first...last])
    }

    /// Whether there is more than one endpoint to try.
    var hasAlternatives: Bool { listed.count > 1 }

    /// Moves on to the next listed endpoint (after the last, the first again).
    mutating func advance() {
        position = (position + 1) % listed.count
        current = listed[position]
    }

    /// Leaves the endpoint in use because it fell silent: the next listed one is tried, and
    /// for `duration` a standby that names the silent one as the leader is not followed there.
    mutating func leaveSilent(at now: ContinuousClock.Instant, suspectingFor duration: Duration) {
        guard hasAlternatives else { return }
        suspect = (current, now + duration)
        advance()
    }

    /// Uses the leader a standby named.
    /// - Parameter refusalsInARow: the standby refusals since the last welcome, this one
    ///   included.
    /// - Returns: whether the client should say hello there at once; `false` when the
    ///   standby named no leader (an election is under way), or one that fell silent a
    ///   moment ago: the client then asks the same standby again a little later, and after
    ///   a few refusals the next listed endpoint.
    mutating func follow(leader: String, refusalsInARow: Int, at now: ContinuousClock.Instant) -> Bool {
        guard !leader.isEmpty, !isSuspect(leader, at: now) else {
            if refusalsInARow % 4 == 0 { advanceToUnsuspected(at: now) }
            return false
        }
        if let index = listed.firstIndex(of: leader) { position = index }
        current = leader
        return true
    }

    /// Whether `endpoint` fell silent a moment ago.
    private func isSuspect(_ endpoint: String, at now: ContinuousClock.Instant) -> Bool {
        suspect.map { $0.endpoint == endpoint && now < $0.until } ?? false
    }

    /// Moves on to the next listed endpoint that did not fall silent a moment ago; stays
    /// when every other one did.
    private mutating func advanceToUnsuspected(at now: ContinuousClock.Instant) {
        let start = (current, position)
        for _ in 0..<listed.count {
            advance()
            if !isSuspect(current, at: now) { return }
        }
        (current, position) = start
    }

    /// A standby refused the hello (or a snapshot request: its host lost the lead
    /// meanwhile), naming `leader` (empty when it knows none).
    /// - Returns: whether to say hello at once to ``current``, now the leader it named;
    ///   otherwise ``helloRetryDue`` says when to ask again, after a pause that grows with
    ///   refusals in a row up to 200 ms: an election takes about a lease, and the client
    ///   should not wait much past its end.
    mutating func standbyRefused(naming leader: String, at now: ContinuousClock.Instant) -> Bool {
        standbyRefusals += 1
        helloRetryDue = nil
        if follow(leader: leader, refusalsInARow: standbyRefusals, at: now) { return true }
        helloRetryDue = now + .milliseconds(25) * (1 << min(standbyRefusals - 1, 3))
        return false
    }

    /// Uses the leader a search of the listed hosts found (``ControlProbe``): believed at once.
    mutating func found(leader: String, at now: ContinuousClock.Instant) {
        standbyRefusals = 0
        _ = follow(leader: leader, refusalsInARow: 1, at: now)
    }

    /// Whether the hello's retry after a standby's refusal is due at `now` (it is then
    /// taken: the caller says hello again).
    mutating func takeHelloRetry(at now: ContinuousClock.Instant) -> Bool {
        guard let due = helloRetryDue, now >= due else { return false }
        helloRetryDue = nil
        return true
    }

    /// Forgets a retry that waits: a hello is going out anyway (on a new connection, or on
    /// this one come back after a drop).
    mutating func cancelHelloRetry() { helloRetryDue = nil }

    /// The endpoint in use welcomed the client: it leads, nothing is suspected any more,
    /// and the refusals in a row end.
    mutating func welcomed() {
        suspect = nil
        standbyRefusals = 0
        helloRetryDue = nil
    }

    static func == (lhs: ControlEndpoints, rhs: ControlEndpoints) -> Bool {
        lhs.listed == rhs.listed && lhs.current == rhs.current && lhs.position == rhs.position
    }
}
