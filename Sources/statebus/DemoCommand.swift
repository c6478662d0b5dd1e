import ArgumentParser
import Foundation
import StateBusLaunch

/// `statebus demo`: the two apps of the SwiftUI examples, every node a real process started
/// by the launcher, played through a scripted scenario.
struct DemoCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo",
        abstract: "Play the demo: the shared-text app and the profile app, one process per node.",
        discussion: """
            1. Shared text (seeds/003): a host owns SharedData; three views show and edit it. \
            Every view edits in turn; one view is killed and respawned and catches up.
            2. Profile (seeds/000, 002): a host owns the profile model; a profile view, an \
            editing view bound to $user.username and $user.email (with the error view), and \
            the notification toggle. An invalid email is rejected and rolls back with the \
            error shown; the host is killed and respawned and restores the persisted setting.
            Each node's rendering is shown as it changes; a table of every node's final state \
            ends the run. Exits 0 only if every node converged.

            With --interactive, you are one of the views: the app runs under the launcher and \
            each line you type is your view's edit, which the other views (other processes) \
            render. To mix demo nodes with your own, start them yourself:
              statebus node shared-text --role host --control ipc:///tmp/text
              statebus node shared-text --role view --name mine --control ipc:///tmp/text

            Examples:
              statebus demo
              statebus demo --timeout 60
              statebus demo --interactive
              statebus demo --interactive --app profile
            """
    )

    @Flag(name: .long, help: "Be one of the views yourself: type edits, see every view update.")
    var interactive = false

    @Option(name: .long, help: "The app of an interactive session: shared-text or profile.")
    var app: String = DemoScenario.InteractiveApp.sharedText.rawValue

    @Option(name: .long, help: "Seconds to wait for each step.")
    var timeout: Double = 20

    func validate() throws {
        guard timeout > 0 else { throw ValidationError("--timeout must be a positive number of seconds, got \(timeout)") }
        guard DemoScenario.InteractiveApp(rawValue: app) != nil else {
            throw ValidationError(
                "--app must be one of: \(DemoScenario.InteractiveApp.allCases.map(\.rawValue).joined(separator: ", ")), got '\(app)'")
        }
    }

    func run() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("statebus-demo-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let scenario = DemoScenario(folder: folder, deadline: .milliseconds(Int(timeout * 1000)))
        if interactive {
            guard let app = DemoScenario.InteractiveApp(rawValue: app) else {
                throw ValidationError(
                    "--app must be one of: \(DemoScenario.InteractiveApp.allCases.map(\.rawValue).joined(separator: ", ")), got '\(app)'")
            }
            let status = try await scenario.interactive(app)
            if status != 0 { throw ExitCode(status) }
            return
        }
        let textConverged = try await scenario.sharedText()
        let profileConverged = try await scenario.profile()
        if textConverged && profileConverged {
            emit("\nevery node converged on its host's state")
        } else {
            emit("\nsome nodes did not converge")
            throw ExitCode(1)
        }
    }
}
