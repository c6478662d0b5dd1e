/// Where an HTTP server of a StateBus process listens (the metrics endpoint, the
/// inspector): `HOST:PORT`.
public struct HTTPListenAddress: Sendable, Hashable, CustomStringConvertible {
    /// A name or address to bind (`127.0.0.1`, `0.0.0.0`, `localhost`).
    public var host: String
    /// The port; 0 picks a free one.
    public var port: Int

    /// An address that is not `HOST:PORT`.
    public struct Error: Swift.Error, CustomStringConvertible {
        /// What is wrong and what to write instead.
        public let description: String
        /// An error saying `description`.
        public init(_ description: String) { self.description = description }
    }

    /// Reads `HOST:PORT` (an IPv6 host in brackets: `[::1]:9464`).
    /// - Throws: ``Error`` naming what is wrong.
    public init(parsing text: String) throws(Error) {
        guard let colon = text.lastIndex(of: ":"), colon != text.startIndex else {
            throw Error("'\(text)' is not HOST:PORT: write, for example, 127.0.0.1:9464 (or 127.0.0.1:0 for a free port)")
        }
        var host = String(text[..<colon])
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        guard let port = Int(text[text.index(after: colon)...]), (0...65_535).contains(port) else {
            throw Error("'\(text)': the port must be a number from 0 to 65535 (0 picks a free one)")
        }
        self.host = host
        self.port = port
    }

    /// `HOST:PORT`.
    public var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }
}
