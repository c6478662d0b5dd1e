import ArgumentParser
import Foundation
import StateBusCommandLine
import StateBusLaunch

/// `statebus demo`: the two apps of the SwiftUI examples, every node a real process started
/// by the launcher, played through a scripted scenario.
struct DemoCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo",
        abstract: "Play the demo: the shared-text, profile and to-do apps, one process per node.",
        discussion: """
            1. Shared text (seeds/003): a host owns SharedData; three views show and edit it, \
            and a fourth written in Python (clients/python) when a Python with the client is \
            found (--python, else $STATEBUS_PYTHON, else python3; the demo says why when it is \
            not). Every view edits in turn; one view is killed and respawned and catches up.
            2. Profile (seeds/000, 002): a host owns the profile model; a profile view, an \
            editing view bound to $user.username and $user.email (with the error view), and \
            the notification toggle. An invalid email is rejected and rolls back with the \
            error shown; the host is killed and respawned and restores the persisted setting.
            3. To-do list: a host owns a keyed collection of items; a list view, an editor \
            bound to one item, and a counter of open items. Views add, edit, complete, move \
            and remove items at once (element operations, all kept); a view calls the host \
            action clearCompleted(); a view is killed and respawned.
            4. High availability: etcd (a single member, when installed) and two hosts of one \
            group serve the shared text; three views list both. The leader is killed \
            (SIGKILL), the other takes over, the views follow it, the killed one is respawned \
            and stands by; a table shows who led when.
            Each node's rendering is shown as it changes; a table of every node's final state \
            ends the run. Exits 0 only if every node converged.

            With --interactive, you are one of the views: the app runs under the launcher and \
            each line you type is your view's edit, which the other views (other processes) \
            render. To mix demo nodes with your own, start them yourself:
              statebus node shared-text --role host --control ipc:///tmp/text
              statebus node shared-text --role view --name mine --control ipc:///tmp/text

            Examples:
              statebus demo
              statebus demo --timeout 120                  # a slow machine: 120 s for each step
              statebus demo --interactive
              statebus demo --app todo
              statebus demo --app ha                       # etcd, two hosts, a killed leader
              statebus demo --python .build/python-client/bin/python   # the Python view's interpreter
              statebus demo --interactive --app profile
              statebus demo --interactive --app todo
            """
    )

    @Flag(name: .long, help: "Be one of the views yourself: type edits, see every view update.")
    var interactive = false

    @Option(
        name: .long, help: "Play only this app (shared-text, profile, todo or ha); with --interactive, the app of the session (default shared-text).")
    var app: String?

    @Option(name: .long, help: "Seconds to wait for each step (default: $STATEBUS_TIMEOUT, else 60).")
    var timeout: Double?

    @Option(
        name: .long,
        help: "The Python interpreter of the shared text's Python view, with clients/python installed (default: $STATEBUS_PYTHON, else python3).")
    var python: String?

    /// The wait for each step when neither `--timeout` nor `STATEBUS_TIMEOUT` gives one:
    /// long enough for a first render on a loaded 2-core machine (a step takes well under a
    /// second on an idle one; the wait only bounds a step that never comes).
    static let defaultTimeout: Double = 60

    private var stepWait: RequestedWait { RequestedWait(option: timeout, default: Self.defaultTimeout) }

    func validate() throws {
        try stepWait.validate()
        if let app, DemoScenario.InteractiveApp(rawValue: app) == nil {
            throw ValidationError(
                "--app must be one of: \(DemoScenario.InteractiveApp.allCases.map(\.rawValue).joined(separator: ", ")), got '\(app)'")
        }
        if interactive, app == DemoScenario.InteractiveApp.ha.rawValue {
            throw ValidationError("the ha app has no interactive session: play it with statebus demo --app ha, or pick shared-text, profile or todo")
        }
    }

    func run() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("statebus-demo-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        var scenario = DemoScenario(folder: folder, deadline: stepWait.duration)
        let chosen = app.flatMap(DemoScenario.InteractiveApp.init(rawValue:))
        if !interactive, (chosen ?? .sharedText) == .sharedText {
            let found = await PythonClient.find(option: python, timeout: stepWait.duration)
            // An interpreter asked for by name must work; the default one may be missing.
            if python != nil, case .failure(let missing) = found { throw missing }
            scenario.python = found
        }
        if interactive {
            let status = try await scenario.interactive(chosen ?? .sharedText)
            if status != 0 { throw ExitCode(status) }
            return
        }
        var converged = true
        for played in chosen.map({ [$0] }) ?? DemoScenario.InteractiveApp.allCases {
            switch played {
            case .sharedText: converged = try await scenario.sharedText() && converged
            case .profile: converged = try await scenario.profile() && converged
            case .todo: converged = try await scenario.todo() && converged
            case .ha: converged = try await scenario.highAvailability() && converged
            }
        }
        if converged {
            emit("\nevery node converged on its host's state")
        } else {
            emit("\nsome nodes did not converge")
            throw ExitCode(1)
        }
    }
}
