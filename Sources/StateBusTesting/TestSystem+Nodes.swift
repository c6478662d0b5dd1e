import Foundation
import StateBus

extension TestSystem {
    // MARK: Hosts

    /// Starts a host in this process, on an `ipc://` endpoint in the system's folder, with
    /// its database (for persisted properties) there too.
    /// - Parameters:
    ///   - objects: the objects it serves (a `@SharedModel` type's static `objectDefinition`,
    ///     or `ObjectDefinition`s made by hand).
    ///   - name: the host's name; also names its endpoint and database file.
    ///   - heartbeat: the idle heartbeat interval (short, so views notice a lost host fast).
    /// - Returns: the host, stopped at shut-down.
    /// - Throws: what `StateHost.init` throws.
    public func startHost(_ objects: [ObjectDefinition], name: String = "host", heartbeat: Duration = .milliseconds(200)) async throws -> StateHost {
        let host = try await StateHost(
            objects: objects,
            configuration: HostConfiguration(
                name: name, controlEndpoint: endpoint("\(name).control"), heartbeatInterval: heartbeat,
                persistence: .file(path("\(name).sqlite"))
            ))
        return try adopt(host)
    }

    /// Starts `statebus host` as a child process serving one object declared on the command
    /// line, and waits until it answers.
    /// - Parameters:
    ///   - object: the object's name.
    ///   - properties: its properties in `statebus host` syntax: `count:int=0`,
    ///     `label:string!=fixed` (read-only for views), `enabled:bool~=true` (persisted).
    ///   - name: the node's name; also names its endpoint and database file, which survive
    ///     ``HostNode/restart(timeout:)``.
    ///   - timeout: how long it may take to answer.
    /// - Returns: the host node, ended at shut-down.
    /// - Throws: ``BuiltProducts/MissingProduct`` when `statebus` is not built;
    ///   ``WaitTimeout`` with its last lines when it does not answer.
    public func startHostProcess(object: String, properties: [String], name: String = "host", timeout: Duration = .seconds(120)) async throws
        -> HostNode
    {
        let control = endpoint("\(name).control")
        var arguments = [
            "host", "--name", name, "--control", control, "--object", object,
            "--heartbeat-ms", "200", "--database", path("\(name).sqlite")
        ]
        for property in properties { arguments += ["--property", property] }
        return try await startHostNode(
            executable: try statebusExecutable(), arguments: arguments, object: object,
            control: control, name: name, timeout: timeout)
    }

    /// Starts your own host executable as a child process, with the environment the launcher
    /// gives a host node (`STATEBUS_NODE`, `STATEBUS_ROLE=host`, `STATEBUS_OBJECTS`,
    /// `STATEBUS_CONTROL`: the endpoint to bind), and waits until it answers there.
    /// - Parameters:
    ///   - executable: the host program.
    ///   - arguments: its arguments.
    ///   - object: the object that ``HostNode/observedState()`` reports.
    ///   - control: the endpoint it binds (default: an `ipc://` path in the folder).
    ///   - name: the node's name.
    ///   - timeout: how long it may take to answer.
    /// - Returns: the host node, ended at shut-down.
    /// - Throws: when it cannot start, or ``WaitTimeout`` when it does not answer.
    public func startHostNode(
        executable: URL, arguments: [String] = [], object: String, control: String? = nil,
        name: String = "host", timeout: Duration = .seconds(120)
    ) async throws -> HostNode {
        let control = control ?? endpoint("\(name).control")
        let process = try startProcess(
            executable: executable, arguments: arguments,
            environment: nodeEnvironment(name: name, role: .host, objects: [object], control: control), name: name)
        let observer = try adopt(
            try Replica(
                object: object, controlEndpoint: control,
                configuration: ReplicaConfiguration(nodeName: "test-observer")))
        let node = HostNode(process: process, controlEndpoint: control, object: object, observer: observer)
        try await node.waitUntilReady(previousEpoch: nil, timeout: timeout)
        return node
    }

    // MARK: Views

    /// Starts a view process (`statebus watch --json --edits`) bound to one object, and
    /// waits until it is live.
    /// - Parameters:
    ///   - object: the object to bind.
    ///   - control: the host's control endpoint (``StateHost/controlEndpoint``,
    ///     ``HostNode/controlEndpoint``).
    ///   - name: the node's name, as the host logs it.
    ///   - timeout: how long it may take to join.
    /// - Returns: the view node, ended at shut-down.
    /// - Throws: ``BuiltProducts/MissingProduct`` when `statebus` is not built;
    ///   ``WaitTimeout`` with its last lines when it does not join.
    public func startView(of object: String, at control: String, name: String, timeout: Duration = .seconds(120)) async throws -> ViewNode {
        let process = try startProcess(
            executable: try statebusExecutable(),
            arguments: ["watch", "--json", "--edits", "--control", control, "--object", object, "--name", name],
            environment: nodeEnvironment(name: name, role: .view, objects: [object], control: control), name: name)
        let view = ViewNode(process: process, object: object, name: name, controlEndpoint: control)
        try await view.waitUntilLive(timeout: timeout)
        return view
    }

    /// Starts your own view executable as a child process, with the environment the launcher
    /// gives a view node (`STATEBUS_NODE`, `STATEBUS_ROLE=view`, `STATEBUS_OBJECTS`,
    /// `STATEBUS_CONTROL`: its host's endpoint).
    ///
    /// It returns at once, without waiting for readiness: only the executable knows what it
    /// prints when ready. The fault helpers of the ``ViewNode`` (``ViewNode/kill()``,
    /// ``ViewNode/pause()``, ``ViewNode/resume()``) work on any executable. Its
    /// ``ViewNode/state``, ``ViewNode/set(_:to:timeout:)``, ``ViewNode/waitUntilLive(timeout:)``
    /// and ``ViewNode/restart(timeout:)`` read and write the lines of
    /// `statebus watch --json --edits`, so they need an executable that speaks them; for any
    /// other, wait on its lines with ``ViewNode/process``'s
    /// ``NodeProcess/waitForLine(_:after:timeout:where:)``.
    /// - Parameters:
    ///   - executable: the view program.
    ///   - arguments: its arguments.
    ///   - objects: the objects it binds; the first is the view node's ``ViewNode/object``.
    ///   - control: its host's control endpoint.
    ///   - name: the node's name.
    /// - Returns: the view node, ended at shut-down.
    /// - Throws: when it cannot start, or the system is shut down.
    public func startViewNode(executable: URL, arguments: [String] = [], objects: [String], control: String, name: String) throws -> ViewNode {
        let process = try startProcess(
            executable: executable, arguments: arguments,
            environment: nodeEnvironment(name: name, role: .view, objects: objects, control: control), name: name)
        return ViewNode(process: process, object: objects.first ?? "", name: name, controlEndpoint: control)
    }

    /// A replica in this process, live when returned.
    /// - Parameters:
    ///   - object: the object to bind.
    ///   - control: the host's control endpoint.
    ///   - timeout: how long it may take to join.
    /// - Returns: the replica, closed at shut-down.
    /// - Throws: `StateBusError` (`unknownObject`, `timeout`) when it does not join.
    public func replica(of object: String, at control: String, timeout: Duration = .seconds(120)) async throws -> Replica {
        let replica = try adopt(try Replica(object: object, controlEndpoint: control))
        try await replica.waitUntilLive(timeout: timeout)
        return replica
    }

    /// The variables the launcher injects into a node's environment.
    func nodeEnvironment(name: String, role: LaunchFile.Node.Role, objects: [String], control: String) -> [String: String] {
        NodeEnvironment.variables(name: name, role: role, objects: objects, control: control)
    }
}
