/// The port an HTTP server of a StateBus process bound (the metrics endpoint, the
/// inspector): set once from the server's event loop, awaited by whoever announces the URL.
public final class ListeningPort: Sendable {
    private let value = Locked<Int?>(nil)

    /// A port not bound yet.
    public init() {}

    /// Records the bound port.
    public func set(_ port: Int) { value.withLock { $0 = port } }

    /// The bound port, once there is one.
    public var port: Int? { value.withLock { $0 } }

    /// Waits until the server listens, checking every 10 ms (it binds once, within
    /// milliseconds; there is nothing to subscribe to).
    /// - Parameters:
    ///   - timeout: the deadline.
    ///   - what: the server and its address, for the error.
    /// - Returns: the port.
    /// - Throws: ``HTTPListenAddress/Error`` past the deadline, `CancellationError` when cancelled.
    public func wait(upTo timeout: Duration, for what: String) async throws -> Int {
        let deadline = ContinuousClock.now + timeout
        while true {
            if let port { return port }
            guard ContinuousClock.now < deadline else { throw HTTPListenAddress.Error("\(what) did not listen within \(timeout)") }
            try await Task.sleep(for: .milliseconds(10))
        }
    }
}
