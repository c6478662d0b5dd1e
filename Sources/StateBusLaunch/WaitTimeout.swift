/// A wait that ran out of time: what was awaited, for how long, and what was seen last.
public struct WaitTimeout: Error, CustomStringConvertible, Sendable {
    /// What was awaited.
    public let what: String
    /// The deadline.
    public let timeout: Duration
    /// The last state or output seen.
    public let lastSeen: String

    /// Creates a timeout report.
    /// - Parameters:
    ///   - what: what was awaited.
    ///   - timeout: the deadline that passed.
    ///   - lastSeen: the last state or output seen, to show why.
    public init(what: String, timeout: Duration, lastSeen: String) {
        self.what = what
        self.timeout = timeout
        self.lastSeen = lastSeen
    }

    /// A readable report.
    public var description: String {
        "timed out after \(timeout) waiting for \(what)\nlast seen:\n\(lastSeen)"
    }
}
