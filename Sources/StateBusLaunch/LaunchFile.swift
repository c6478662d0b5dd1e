import Foundation
import StateBusRuntime
import Yams

/// A topology of node processes, read from a YAML launch file.
///
/// ```yaml
/// name: shared-text
/// nodes:
///   - name: host
///     role: host
///     objects: [SharedData]
///     executable: statebus          # "statebus" is the running statebus binary itself
///     arguments: [node, shared-text, --role, host]
///   - name: first
///     role: view
///     objects: [SharedData]
///     executable: statebus
///     arguments: [node, shared-text, --role, view]
///     respawn: { policy: on-failure, delay: 0.5, max: 3 }
/// ```
///
/// A node may also be a `relay` (`statebus relay`) of a host or relay in the file (`host:`)
/// or elsewhere (`upstream:`), and a view may join a host or relay elsewhere (`control:`),
/// so a file for a machine that runs only views needs no host node:
///
/// ```yaml
/// name: views-on-b
/// nodes:
///   - name: edge
///     role: relay
///     upstream: tcp://10.0.0.1:7000    # or STATEBUS_UPSTREAM in the launcher's environment
///     control: ipc:///run/app/edge.control
///     executable: statebus
///     arguments: [relay]
///   - name: first
///     role: view
///     host: edge
///     executable: statebus
///     arguments: [watch]
/// ```
public struct LaunchFile: Sendable {
    /// How a node is restarted when it exits.
    public struct Respawn: Sendable, Equatable {
        /// When to restart.
        public enum Policy: String, Sendable, CaseIterable {
            case never
            case onFailure = "on-failure"
            case always
        }
        /// When to restart.
        public var policy: Policy = .never
        /// Seconds to wait before restarting.
        public var delay: Double = 0.5
        /// The most restarts; `nil`: no limit.
        public var maximum: Int? = 5

        /// Creates a policy.
        /// - Parameters:
        ///   - policy: when to restart (default `never`).
        ///   - delay: seconds to wait before restarting (default 0.5).
        ///   - maximum: the most restarts; `nil`: no limit (default 5).
        public init(policy: Policy = .never, delay: Double = 0.5, maximum: Int? = 5) {
            self.policy = policy
            self.delay = delay
            self.maximum = maximum
        }

        /// The policy of a node whose file says nothing, and the base a partial
        /// `respawn: { delay: … }` mapping starts from.
        ///
        /// A host or relay restarts on failure (delay 0.5 s, at most 5 times): every view of
        /// the set depends on it, and a peer it admits can abort it (libzmq 4.3.4's stream-engine
        /// assertion), so a dead host must come back without a person. A view is never
        /// restarted by default: its failure harms only itself, views are often one-shot tools
        /// (`statebus get`, `watch`), and a view that fails at start would otherwise print
        /// its error five times; say `respawn: on-failure` for long-running views.
        /// - Parameter role: the node's role.
        public static func `default`(for role: Node.Role) -> Respawn {
            Respawn(policy: role == .view ? .never : .onFailure)
        }
    }

    /// One node.
    public struct Node: Sendable {
        /// Host, relay or view.
        public enum Role: String, Sendable, CaseIterable {
            /// Serves objects (`statebus host`, or a program with a `StateHost`).
            case host
            /// Relays a host's objects to views of its own (`statebus relay`).
            case relay
            /// Joins a host or relay.
            case view

            /// Whether views can join it: a host or a relay.
            public var serves: Bool { self != .view }
        }
        /// The node's name, unique in the file; prefixes its output lines.
        public var name: String
        /// Host, relay or view.
        public var role: Role
        /// The program to run.
        public var executable: String
        /// Its arguments.
        public var arguments: [String]
        /// Extra environment variables.
        public var environment: [String: String]
        /// The objects a host serves or a view binds (injected as `STATEBUS_OBJECTS`).
        public var objects: [String]
        /// A host's or relay's control endpoint to bind (default: ipc:// in the runtime
        /// folder); for a view, the control endpoint of a host or relay elsewhere that it joins
        /// (instead of `host:`).
        public var control: String?
        /// The host or relay node of this file a view joins, or a relay relays (default: the
        /// only host).
        public var host: String?
        /// A relay's upstream elsewhere: the control endpoint of a host or relay not in this
        /// file (instead of `host:`). Default, when the file has no host: `STATEBUS_UPSTREAM`
        /// from the launcher's environment.
        public var upstream: String? = nil
        /// Restart policy.
        public var respawn: Respawn
        /// The node's CURVE secret key file (`key:`), passed as `STATEBUS_KEY_FILE`; a
        /// relative path is taken from the launch file's folder.
        public var key: String? = nil
        /// A host's authorized keys file (`authorized:`), passed as
        /// `STATEBUS_AUTHORIZED_KEYS_FILE`.
        public var authorized: String? = nil
        /// The host's public key file (`host_key:`), passed to a view as
        /// `STATEBUS_HOST_KEY_FILE`; default for a view: its host node's `key:` with `.pub`
        /// for `.key`.
        public var hostKey: String? = nil
        /// The line in the file where the node starts.
        public var line: Int
    }

    /// The topology's name.
    public var name: String
    /// Its nodes, in file order.
    public var nodes: [Node]
    /// Seconds to wait for a host to answer before views start (`ready_timeout:`, default
    /// ``defaultReadyTimeout``).
    public var readyTimeout: Double

    /// The wait for a host when the file gives no `ready_timeout`: `STATEBUS_TIMEOUT` when it
    /// holds a positive number of seconds (so a busy machine's scripts lengthen every wait
    /// with one variable), else 20 s.
    public static var defaultReadyTimeout: Double {
        guard let text = ProcessInfo.processInfo.environment[EnvironmentVariableName.timeout],
            let seconds = Double(text.trimmingCharacters(in: .whitespaces)), seconds > 0, seconds.isFinite
        else { return 20 }
        return seconds
    }
    /// Seconds between SIGTERM and SIGKILL at shutdown.
    public var gracePeriod: Double
    /// The file's high-availability group (`ha:`), when its hosts form one: every host node
    /// joins the group (`STATEBUS_HA`, `STATEBUS_HA_GROUP` in its environment, which
    /// `statebus host` reads), and a view that names no host joins them all (its
    /// `STATEBUS_CONTROL` lists every host's control endpoint), following the leader.
    public var highAvailability: HighAvailabilityGroup?

    /// A launch file's `ha:` section.
    ///
    /// ```yaml
    /// ha:
    ///   etcd: http://10.0.0.5:2379,http://10.0.0.6:2379
    ///   group: counters
    /// ```
    public struct HighAvailabilityGroup: Sendable, Equatable {
        /// etcd's client URLs, comma-separated.
        public var etcd: String
        /// The group's name.
        public var group: String

        /// Creates a section.
        public init(etcd: String, group: String) {
            self.etcd = etcd
            self.group = group
        }
    }
    /// The file it was read from.
    public var path: String

    /// Reads and checks a launch file; nothing is started.
    /// - Parameter path: the YAML file.
    /// - Throws: ``LaunchFileError`` naming the file, line and field at fault.
    public static func load(path: String) throws -> LaunchFile {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw LaunchFileError(path: path, line: nil, field: nil, problem: "cannot read the file: check the path and permissions")
        }
        return try parse(String(decoding: data, as: UTF8.self), path: path)
    }

    /// Parses and checks launch-file text.
    /// - Throws: ``LaunchFileError`` naming the file, line and field at fault.
    public static func parse(_ text: String, path: String = "<launch file>") throws -> LaunchFile {
        let root: Yams.Node?
        do {
            root = try Yams.compose(yaml: text)
        } catch let error as YamlError {
            throw LaunchFileError(path: path, line: Self.line(of: error), field: nil, problem: "not valid YAML: \(error)")
        }
        let reader = LaunchFileReader(path: path)
        return try reader.read(root)
    }

    private static func line(of error: YamlError) -> Int? {
        switch error {
        case .scanner(_, _, let mark, _), .parser(_, _, let mark, _), .composer(_, _, let mark, _): return mark.line
        case .duplicatedKeysInMapping(_, let context): return context.mark.line
        default: return nil
        }
    }
}

/// A launch file that cannot be used, with where and why.
public struct LaunchFileError: Error, Sendable, CustomStringConvertible, Equatable {
    /// The file.
    public let path: String
    /// The line at fault, when known.
    public let line: Int?
    /// The field at fault, such as `nodes[1].respawn.policy`.
    public let field: String?
    /// What is wrong and what to do.
    public let problem: String

    /// `file:line: field: problem`.
    public var description: String {
        var location = path
        if let line { location += ":\(line)" }
        if let field { return "\(location): \(field): \(problem)" }
        return "\(location): \(problem)"
    }
}
