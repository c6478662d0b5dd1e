import Yams

/// Turns a composed YAML tree into a ``LaunchFile``, checking every field and naming the
/// line of anything wrong.
struct LaunchFileReader {
    let path: String

    private func fail(_ node: Yams.Node?, _ field: String, _ problem: String) -> LaunchFileError {
        LaunchFileError(path: path, line: node?.mark?.line, field: field, problem: problem)
    }

    private func mapping(_ node: Yams.Node?, _ field: String, allowed: Set<String>) throws -> [(String, Yams.Node)] {
        guard let node, case .mapping(let mapping) = node else {
            throw fail(node, field, "expected a mapping of keys to values")
        }
        var pairs: [(String, Yams.Node)] = []
        for (key, value) in mapping {
            guard let name = key.string else { throw fail(key, field, "keys must be text") }
            guard allowed.contains(name) else {
                throw fail(
                    key, field.isEmpty ? name : "\(field).\(name)", "unknown field; expected one of \(allowed.sorted().joined(separator: ", "))")
            }
            pairs.append((name, value))
        }
        return pairs
    }

    private func string(_ node: Yams.Node, _ field: String) throws -> String {
        guard case .scalar(let scalar) = node else { throw fail(node, field, "expected text") }
        return scalar.string
    }

    private func strings(_ node: Yams.Node, _ field: String) throws -> [String] {
        switch node {
        case .sequence(let sequence): return try sequence.enumerated().map { try string($1, "\(field)[\($0)]") }
        case .scalar(let scalar): return [scalar.string]
        default: throw fail(node, field, "expected a list of text")
        }
    }

    private func number(_ node: Yams.Node, _ field: String) throws -> Double {
        guard let value = node.float ?? node.int.map(Double.init), value >= 0 else {
            throw fail(node, field, "expected a number of seconds, 0 or more")
        }
        return value
    }

    /// Reads `ha: { etcd: URLS, group: NAME }`.
    private func highAvailability(_ node: Yams.Node) throws -> LaunchFile.HighAvailabilityGroup {
        var etcd: String?
        var group: String?
        for (key, value) in try mapping(node, "ha", allowed: ["etcd", "group"]) {
            if key == "etcd" { etcd = try string(value, "ha.etcd") } else { group = try string(value, "ha.group") }
        }
        guard let etcd, !etcd.isEmpty else { throw fail(node, "ha.etcd", "expected etcd's client URLs, such as http://10.0.0.5:2379") }
        guard let group, !group.isEmpty else { throw fail(node, "ha.group", "expected the group's name") }
        return LaunchFile.HighAvailabilityGroup(etcd: etcd, group: group)
    }

    func read(_ root: Yams.Node?) throws -> LaunchFile {
        var file = LaunchFile(name: "launch", nodes: [], readyTimeout: LaunchFile.defaultReadyTimeout, gracePeriod: 5, path: path)
        var nodesNode: Yams.Node?
        for (key, value) in try mapping(root, "", allowed: ["name", "nodes", "ready_timeout", "grace_period", "ha"]) {
            switch key {
            case "name": file.name = try string(value, "name")
            case "ha": file.highAvailability = try highAvailability(value)
            case "ready_timeout": file.readyTimeout = try number(value, "ready_timeout")
            case "grace_period": file.gracePeriod = try number(value, "grace_period")
            default: nodesNode = value
            }
        }
        guard let nodesNode, case .sequence(let sequence) = nodesNode, !sequence.isEmpty else {
            throw fail(nodesNode ?? root, "nodes", "expected a non-empty list of nodes")
        }
        for (index, item) in sequence.enumerated() {
            file.nodes.append(try node(item, field: "nodes[\(index)]"))
        }
        try check(file, sequence: Array(sequence))
        return file
    }

    private func node(_ item: Yams.Node, field: String) throws -> LaunchFile.Node {
        let allowed: Set<String> = [
            "name", "role", "executable", "arguments", "environment", "objects", "control", "host", "upstream", "respawn", "key", "authorized",
            "host_key"
        ]
        var node = LaunchFile.Node(
            name: "", role: .view, executable: "", arguments: [], environment: [:], objects: [],
            control: nil, host: nil, respawn: LaunchFile.Respawn(), line: item.mark?.line ?? 0)
        var sawRole = false
        // Read after the loop: the default it starts from depends on the role, which may
        // come later in the mapping.
        var respawnNode: (Yams.Node, String)?
        for (key, value) in try mapping(item, field, allowed: allowed) {
            let here = "\(field).\(key)"
            switch key {
            case "name": node.name = try string(value, here)
            case "role":
                guard let role = LaunchFile.Node.Role(rawValue: try string(value, here)) else {
                    throw fail(value, here, "expected host, relay or view")
                }
                node.role = role
                sawRole = true
            case "executable": node.executable = try string(value, here)
            case "arguments": node.arguments = try strings(value, here)
            case "objects": node.objects = try strings(value, here)
            case "control": node.control = try string(value, here)
            case "host": node.host = try string(value, here)
            case "upstream": node.upstream = try string(value, here)
            case "key": node.key = try file(value, here)
            case "authorized": node.authorized = try file(value, here)
            case "host_key": node.hostKey = try file(value, here)
            case "environment":
                for (name, variable) in try mapping(value, here, allowed: Set(value.mapping?.keys.compactMap(\.string) ?? [])) {
                    node.environment[name] = try string(variable, "\(here).\(name)")
                }
            default: respawnNode = (value, here)
            }
        }
        node.respawn = try respawnNode.map { try respawn($0.0, $0.1, role: node.role) } ?? .default(for: node.role)
        guard !node.name.isEmpty else { throw fail(item, "\(field).name", "every node needs a name") }
        guard sawRole else { throw fail(item, "\(field).role", "every node needs a role: host, relay or view") }
        guard !node.executable.isEmpty else { throw fail(item, "\(field).executable", "every node needs an executable") }
        return node
    }

    /// A file path, taken from the launch file's folder when relative.
    private func file(_ value: Yams.Node, _ field: String) throws -> String {
        let path = try string(value, field)
        guard !path.hasPrefix("/") else { return path }
        guard let slash = self.path.lastIndex(of: "/") else { return path }
        return String(self.path[...slash]) + path
    }

    private func respawn(_ value: Yams.Node, _ field: String, role: LaunchFile.Node.Role) throws -> LaunchFile.Respawn {
        var respawn = LaunchFile.Respawn.default(for: role)
        if case .scalar(let scalar) = value {
            guard let policy = LaunchFile.Respawn.Policy(rawValue: scalar.string) else {
                throw fail(value, field, "expected never, on-failure or always")
            }
            respawn.policy = policy
            return respawn
        }
        for (key, item) in try mapping(value, field, allowed: ["policy", "delay", "max"]) {
            switch key {
            case "policy":
                guard let policy = LaunchFile.Respawn.Policy(rawValue: try string(item, "\(field).policy")) else {
                    throw fail(item, "\(field).policy", "expected never, on-failure or always")
                }
                respawn.policy = policy
            case "delay": respawn.delay = try number(item, "\(field).delay")
            default:
                guard let maximum = item.int, maximum >= 0 else { throw fail(item, "\(field).max", "expected a whole number, 0 or more") }
                respawn.maximum = maximum
            }
        }
        return respawn
    }

    private func check(_ file: LaunchFile, sequence: [Yams.Node]) throws {
        var names = Set<String>()
        for (index, node) in file.nodes.enumerated() where !names.insert(node.name).inserted {
            throw fail(sequence[index], "nodes[\(index)].name", "the name '\(node.name)' is used twice; node names must be unique")
        }
        let hosts = file.nodes.filter { $0.role == .host }.map(\.name)
        let servers = file.nodes.filter(\.role.serves).map(\.name)
        for (index, node) in file.nodes.enumerated() {
            let here = "nodes[\(index)]"
            switch node.role {
            case .host:
                if node.upstream != nil { throw fail(sequence[index], "\(here).upstream", "a host has no upstream; did you mean role: relay?") }
            case .relay:
                if let host = node.host {
                    guard node.upstream == nil else {
                        throw fail(
                            sequence[index], "\(here).upstream",
                            "give either host: (a node of this file) or upstream: (an endpoint elsewhere), not both")
                    }
                    // Started in file order, each after its upstream answers.
                    let earlier = file.nodes[..<index].filter(\.role.serves).map(\.name)
                    guard earlier.contains(host) else {
                        throw fail(
                            sequence[index], "\(here).host",
                            "no host or relay named '\(host)' before this relay; its upstream must come earlier in the file (earlier: \(earlier.joined(separator: ", ")))"
                        )
                    }
                } else if node.upstream == nil, hosts.count > 1 {
                    throw fail(
                        sequence[index], "\(here).host", "say which host this relay relays (the file has \(hosts.count) hosts), or give upstream:")
                }
            case .view:
                if let host = node.host {
                    guard node.control == nil else {
                        throw fail(
                            sequence[index], "\(here).control",
                            "give either host: (a node of this file) or control: (an endpoint elsewhere), not both")
                    }
                    guard servers.contains(host) else {
                        throw fail(
                            sequence[index], "\(here).host",
                            "no host or relay node named '\(host)'; hosts and relays: \(servers.joined(separator: ", "))")
                    }
                } else if node.control == nil, servers.count > 1, file.highAvailability == nil || file.nodes.contains(where: { $0.role == .relay }) {
                    throw fail(
                        sequence[index], "\(here).host", "say which host or relay this view joins (the file has \(servers.count)), or give control:")
                }
            }
        }
    }
}
