/// A launch that could not start or keep running.
public struct LaunchError: Error, Sendable, CustomStringConvertible {
    /// What went wrong and what to do.
    public let description: String
    /// Creates an error.
    public init(_ description: String) { self.description = description }
}
