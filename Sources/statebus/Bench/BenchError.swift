/// A benchmark failure a person can act on: which step, and what was seen.
struct BenchError: Error, CustomStringConvertible {
    /// The message printed for the person running the bench.
    let description: String

    /// - Parameter description: which step failed, and what was seen.
    init(_ description: String) { self.description = description }
}
