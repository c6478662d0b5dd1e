/// The ids of the replica's latest requests, as the stand-in host read them: a reply is
/// taken only when it carries the right one, so generated replies aim at these (or just
/// miss them).
struct SeenRequests {
    var hello: UInt64 = 0
    var snapshot: UInt64 = 0
    /// The latest writes' request and write ids, newest last (at most 16).
    private(set) var writes: [(requestID: UInt64, writeID: UInt64)] = []

    /// Notes a write request.
    mutating func noteWrite(requestID: UInt64, writeID: UInt64) {
        writes.append((requestID, writeID))
        if writes.count > 16 { writes.removeFirst() }
    }

    /// A request id near the replica's latest ones (the latest hello, snapshot or write, or
    /// one off), for replies that should sometimes be taken.
    func nearRequestID(using random: inout SeededRandom) -> UInt64 {
        let latest = [hello, snapshot] + writes.map(\.requestID)
        let base = latest.randomElement(using: &random)!
        return random.oneIn(4) ? base &+ [1, UInt64.max].randomElement(using: &random)! : base
    }
}
