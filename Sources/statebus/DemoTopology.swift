/// The launch files of the demo's two apps, for the scripted scenario and the interactive
/// session alike: a host and its views, every node `statebus node APP`.
enum DemoTopology {
    /// A view node: its name, and for the profile and to-do apps the screen it shows (and
    /// the item a to-do editor is bound to).
    struct View {
        let name: String
        var screen: String? = nil
        var item: String? = nil
        /// A Python interpreter with the Python client: the view is then the client's
        /// `python -m statebus.demo APP` instead of `statebus node APP`.
        var python: String? = nil
    }

    /// The shared-text app (seed 003): a host owning `SharedData`, and `views`.
    /// - Parameters:
    ///   - name: the launch's name, also the host's endpoint in `folder`.
    ///   - respawnViews: whether the launcher restarts a view that dies.
    static func sharedText(name: String, folder: String, views: [View], respawnViews: Bool) -> String {
        launchFile(
            name: name, object: "SharedData", app: "shared-text", control: "ipc://\(folder)/\(name)",
            hostArguments: [], respawnHost: false, views: views, respawnViews: respawnViews)
    }

    /// The profile app (seeds 000 and 002): a host owning the profile, with its database in
    /// `folder` (so a respawned host restores the persisted setting), and `views`.
    static func profile(name: String, folder: String, views: [View], respawnHost: Bool) -> String {
        launchFile(
            name: name, object: "Profile", app: "profile", control: "ipc://\(folder)/\(name)",
            hostArguments: ["--database", "\(folder)/\(name).sqlite"], respawnHost: respawnHost, views: views, respawnViews: false)
    }

    /// The to-do app: a host owning the list, and `views` (the list, an item editor, the
    /// counter of open items).
    static func todo(name: String, folder: String, views: [View], respawnViews: Bool) -> String {
        launchFile(
            name: name, object: "TodoList", app: "todo", control: "ipc://\(folder)/\(name)",
            hostArguments: ["--database", "\(folder)/\(name).sqlite"], respawnHost: false, views: views, respawnViews: respawnViews)
    }

    /// The shared text served by a high-availability group on etcd: two hosts
    /// (`statebus host`, respawned when killed) and `views`, which list both hosts and follow
    /// the leader.
    static func highAvailability(name: String, folder: String, etcd: String, views: [String]) -> String {
        var lines = [
            "name: \(name)",
            "ha:",
            "  etcd: \(etcd)",
            "  group: \(name)",
            "nodes:"
        ]
        for host in ["host-a", "host-b"] {
            lines += [
                "  - name: \(host)",
                "    role: host",
                "    objects: [SharedData]",
                "    control: ipc://\(folder)/\(name)-\(host)",
                "    executable: statebus",
                "    arguments: [host, --name, \(host), --heartbeat-ms, 200, --ha-lease-seconds, 1, --object, SharedData, --property, \"sharedText:string~=Hello from the group\"]",
                // Back after the other host has taken over (the lease is 1 s), so that it
                // stands by, as a machine that comes back would.
                "    respawn: { policy: on-failure, delay: 3, max: 3 }"
            ]
        }
        for view in views {
            lines += [
                "  - name: \(view)",
                "    role: view",
                "    objects: [SharedData]",
                "    executable: statebus",
                "    arguments: [node, shared-text, --role, view]"
            ]
        }
        return lines.joined(separator: "\n") + "\n"
    }

    private static let respawn = "respawn: { policy: on-failure, delay: 0.2, max: 3 }"

    private static func launchFile(
        name: String, object: String, app: String, control: String, hostArguments: [String],
        respawnHost: Bool, views: [View], respawnViews: Bool
    ) -> String {
        var lines = [
            "name: \(name)",
            "nodes:",
            "  - name: host",
            "    role: host",
            "    objects: [\(object)]",
            "    control: \(control)",
            "    executable: statebus",
            "    arguments: [\((["node", app, "--role", "host"] + hostArguments).joined(separator: ", "))]"
        ]
        if respawnHost { lines.append("    \(respawn)") }
        for view in views {
            let screen = (view.screen.map { ["--screen", $0] } ?? []) + (view.item.map { ["--item", $0] } ?? [])
            let (executable, arguments) =
                view.python.map { ($0, ["-m", "statebus.demo", app]) } ?? ("statebus", ["node", app, "--role", "view"] + screen)
            lines += [
                "  - name: \(view.name)",
                "    role: view",
                "    objects: [\(object)]",
                "    executable: \(executable)",
                "    arguments: [\(arguments.joined(separator: ", "))]"
            ]
            if respawnViews { lines.append("    \(respawn)") }
        }
        return lines.joined(separator: "\n") + "\n"
    }
}
