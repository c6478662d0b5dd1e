extension Duration {
    /// The duration in seconds, as a `Double` (for printing, rates and options given in
    /// seconds).
    public var inSeconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) / 1e18
    }

    /// The duration in nanoseconds, as a `Double` (the unit of the bench's time figures).
    public var inNanoseconds: Double { inSeconds * 1e9 }
}
