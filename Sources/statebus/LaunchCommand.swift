import ArgumentParser
import Foundation
import StateBusCommandLine
import StateBusLaunch

/// `statebus launch FILE.yaml`: starts a topology of node processes.
struct LaunchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "launch",
        abstract: "Start the node processes of a launch file and supervise them.",
        discussion: """
            Hosts start first; each view starts once its host answers on its control endpoint. \
            Every node gets STATEBUS_NODE, STATEBUS_ROLE, STATEBUS_OBJECTS and STATEBUS_CONTROL in \
            its environment; its lines are printed prefixed with its name. SIGINT or SIGTERM stops \
            the views, then the hosts (SIGKILL after the grace period). Exits 1 if a node failed.

            Recovery: a host restarts on failure by default (respawn: on-failure, delay 0.5 s, \
            max 5); a view only if its respawn says so. A host that dies for good (exits failed \
            with no restart left, or with respawn: never) stops the whole set: the launcher \
            prints which host died and why, stops every node and exits 1, so that a supervisor \
            (systemd Restart=on-failure, see deploy/statebus-host@.service) restarts the set.

            Examples:
              statebus launch deploy/shared-text.yaml
              statebus launch deploy/profile.yaml --check     # validate only, start nothing
            """
    )

    @Argument(help: "The launch file (YAML).")
    var file: String

    @Flag(name: .long, help: "Check the file and print the plan without starting anything.")
    var check = false

    func run() async throws {
        let launchFile: LaunchFile
        do {
            launchFile = try LaunchFile.load(path: file)
        } catch let error as LaunchFileError {
            throw ValidationError(error.description)
        }
        let launcher = Launcher(file: launchFile, readiness: hostAnswers, output: { emit($0) })
        if check {
            for node in launchFile.nodes {
                let endpoint = node.role == .host ? " at \(launcher.controlEndpoint(of: node))" : ""
                emit(
                    "\(node.role.rawValue) \(node.name)\(endpoint): \(node.executable) \(node.arguments.joined(separator: " ")) [respawn \(node.respawn.policy.rawValue)]"
                )
            }
            return
        }
        let stop = SignalTrap.stopSignals()
        // SIGHUP makes a host with keys re-read its authorized keys file; the launcher passes
        // it on to the host nodes that have a `key:` (a host without keys would end on it).
        let hangups = HangupTrap.start { [launchFile, launcher] in
            for node in launchFile.nodes where node.role == .host && node.key != nil {
                guard let process = launcher.process(named: node.name) else { continue }
                process.signal(SIGHUP)
                emit("launch: passed SIGHUP to \(node.name) (pid \(process.pid)): it re-reads its authorized keys")
            }
        }
        defer { withExtendedLifetime(hangups) {} }
        let status: Int32
        do {
            status = try await launcher.run(until: { await stop.wait() })
        } catch let error as LaunchError {
            emit("launch: \(error)")
            throw ExitCode(1)
        }
        if status != 0 { throw ExitCode(status) }
    }
}
