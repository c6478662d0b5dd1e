import Foundation

/// Checking and parsing etcd client URLs.
public enum EtcdEndpoints {
    /// Checks one etcd client URL and returns it in the form the client uses: `scheme://host:port`.
    ///
    /// - Parameter endpoint: a URL such as `http://127.0.0.1:2379` or `https://[::1]:2379`; a
    ///   trailing `/` is allowed, a path, query, user or password is not.
    /// - Returns: the URL without a trailing `/`.
    /// - Throws: ``EtcdError`` of kind `badEndpoint` saying what is wrong with it.
    public static func validate(_ endpoint: String) throws(EtcdError) -> String {
        let trimmed = endpoint.trimmingCharacters(in: .whitespaces)
        func bad(_ why: String) -> EtcdError {
            EtcdError(.badEndpoint, endpoints: [endpoint], message: "Invalid etcd endpoint \"\(endpoint)\": \(why)")
        }
        guard let components = URLComponents(string: trimmed) else { throw bad("not a URL") }
        guard let scheme = components.scheme?.lowercased(), scheme == "http" || scheme == "https" else {
            throw bad("the scheme must be http or https")
        }
        guard let host = components.host, !host.isEmpty else { throw bad("no host") }
        guard let port = components.port else { throw bad("no port (etcd's client port is usually 2379)") }
        guard (1...65535).contains(port) else { throw bad("port \(port) is out of range") }
        guard components.path.isEmpty || components.path == "/" else { throw bad("a path is not allowed; the client adds /v3/...") }
        guard components.query == nil, components.fragment == nil else { throw bad("a query or fragment is not allowed") }
        guard components.user == nil, components.password == nil else { throw bad("a user or password is not allowed") }
        let hostPart = host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host
        return "\(scheme)://\(hostPart):\(port)"
    }

    /// Parses a comma-separated list of etcd client URLs, as a command-line option gives it.
    ///
    /// - Parameter list: for example `"http://10.0.0.1:2379,http://10.0.0.2:2379"`; spaces
    ///   around the commas are ignored.
    /// - Returns: the validated URLs, in order, without duplicates.
    /// - Throws: ``EtcdError`` of kind `badEndpoint` for an empty list or a bad URL.
    public static func parse(_ list: String) throws(EtcdError) -> [String] {
        guard !list.trimmingCharacters(in: .whitespaces).isEmpty else {
            throw EtcdError(.badEndpoint, endpoints: [], message: "No etcd endpoint given")
        }
        var endpoints: [String] = []
        for part in list.split(separator: ",", omittingEmptySubsequences: false) {
            let endpoint = try validate(String(part))
            if !endpoints.contains(endpoint) { endpoints.append(endpoint) }
        }
        return endpoints
    }
}
