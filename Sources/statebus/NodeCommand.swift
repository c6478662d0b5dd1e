import ArgumentParser
import Foundation
import StateBus
import StateBusDemo
import StateBusRuntime

/// `statebus node`: runs one node of the demo apps, alone or under the launcher.
struct NodeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "node",
        abstract: "Run one demo node: a host owning a model, or a view holding a replica.",
        discussion: """
            Endpoints and names come from flags or from the environment the launcher injects \
            (STATEBUS_CONTROL, STATEBUS_NODE), so a demo node mixes with nodes of your own. \
            A view renders its screen on every change, each line prefixed with [NAME], and \
            applies each line typed on standard input: for shared-text any line sets the text; \
            for profile: username NAME, email ADDRESS, toggle, retry, dismiss.

            Examples:
              statebus node shared-text --role host --control ipc:///tmp/demo/text
              statebus node shared-text --role view --name second --control ipc:///tmp/demo/text
              statebus node profile --role view --screen edit --name editor --control ipc:///tmp/demo/profile
            """
    )

    /// Host or view.
    enum Role: String, ExpressibleByArgument, CaseIterable { case host, view }

    @Argument(help: "The app: \(DemoApp.allCases.map(\.rawValue).joined(separator: " or ")).")
    var app: DemoAppArgument

    @Option(name: .long, help: "host or view.")
    var role: Role = .view

    @Option(name: .long, help: "What a profile view shows: \(ProfileScreen.allCases.map(\.rawValue).joined(separator: ", ")).")
    var screen: ProfileScreenArgument = ProfileScreenArgument(.profile)

    @Option(name: .long, help: "The node's name (default: $STATEBUS_NODE, else the role).")
    var name: String?

    @Option(name: .long, help: "The host's control endpoint (default: $STATEBUS_CONTROL).")
    var control: String?

    @Option(name: .long, help: "The host's database for persisted properties (default: <state folder>/statebus/<app>.sqlite).")
    var database: String?

    @OptionGroup var security: HostSecurityOptions

    func run() async throws {
        var environment = EnvironmentValues.process()
        if let control { environment.controlEndpoint = control }
        if let name {
            environment.nodeName = name
        } else if ProcessInfo.processInfo.environment[EnvironmentVariableName.node] == nil {
            environment.nodeName = role.rawValue
        }
        let stop = SignalTrap.stopSignals()
        switch role {
        case .host:
            // Named after the app, so the default database is <state folder>/statebus/<app>.sqlite.
            var configuration = HostConfiguration(
                name: app.value.rawValue, controlEndpoint: environment.controlEndpoint,
                persistence: database.map(Persistence.file) ?? .automatic
            )
            try security.apply(to: &configuration)
            let host = try await DemoNode.host(app.value, configuration: configuration)
            let hangups = HangupTrap.reloadingKeys(of: host, when: configuration.security != nil)
            defer { withExtendedLifetime(hangups) {} }
            emit("ready control=\(host.controlEndpoint) updates=\(host.updatesEndpoint) epoch=\(host.epoch)")
            await stop.wait()
            host.stop()
        case .view:
            guard environment.controlEndpoint != nil else {
                throw ValidationError("no host endpoint: pass --control ENDPOINT or set STATEBUS_CONTROL")
            }
            let environment = environment
            let app = self.app.value
            let screen = self.screen.value
            let view = Task { @MainActor in
                try await DemoNode.view(app, screen: screen, environment: environment, commands: DemoNode.standardInputLines(), output: emit)
            }
            await stop.wait()
            view.cancel()
        }
    }
}

/// `shared-text` or `profile` on the command line.
struct DemoAppArgument: ExpressibleByArgument {
    let value: DemoApp
    init?(argument: String) {
        guard let app = DemoApp(rawValue: argument) else { return nil }
        value = app
    }
    static var allValueStrings: [String] { DemoApp.allCases.map(\.rawValue) }
}

/// A profile screen on the command line.
struct ProfileScreenArgument: ExpressibleByArgument {
    let value: ProfileScreen
    init(_ value: ProfileScreen) { self.value = value }
    init?(argument: String) {
        guard let screen = ProfileScreen(rawValue: argument) else { return nil }
        value = screen
    }
    var defaultValueDescription: String { value.rawValue }
    static var allValueStrings: [String] { ProfileScreen.allCases.map(\.rawValue) }
}
