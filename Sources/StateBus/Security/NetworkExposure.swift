/// Whether an endpoint a host binds can be reached from other machines: the secure-by-
/// default rule. A host refuses to bind such an endpoint without CURVE keys unless told
/// ``HostConfiguration/allowsInsecureNetwork`` (`--insecure`).
enum NetworkExposure {
    /// `true` for `ipc://` and `inproc://`, and for `tcp://` on a loopback address
    /// (`127.0.0.0/8`, `::1`, `localhost`, the `lo` interface); `false` for every other
    /// address, the wildcards (`*`, `0.0.0.0`, `::`), interface names and other transports.
    static func isLocal(_ endpoint: String) -> Bool {
        if endpoint.hasPrefix("ipc://") || endpoint.hasPrefix("inproc://") { return true }
        guard endpoint.hasPrefix("tcp://") else { return false }
        var address = endpoint.dropFirst("tcp://".count)
        // A bind's address is HOST:PORT; the host may be a bracketed IPv6 address.
        if let colon = address.lastIndex(of: ":") { address = address[..<colon] }
        if address.hasPrefix("["), address.hasSuffix("]") { address = address.dropFirst().dropLast() }
        if address == "localhost" || address == "lo" || address == "::1" { return true }
        let octets = address.split(separator: ".", omittingEmptySubsequences: false)
        return octets.count == 4 && octets[0] == "127" && octets.allSatisfy { UInt8($0) != nil }
    }
}
