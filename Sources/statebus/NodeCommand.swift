import ArgumentParser
import Foundation
import StateBus
import StateBusCommandLine
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
            for profile: username NAME, email ADDRESS, toggle, retry, dismiss, rename NAME (a \
            host action); for todo: add TITLE, title ID TEXT, done ID, undo ID, move ID \
            POSITION, remove ID, new TITLE and clear (host actions).

            Examples:
              statebus node shared-text --role host --control ipc:///tmp/demo/text
              statebus node shared-text --role view --name second --control ipc:///tmp/demo/text
              statebus node profile --role view --screen edit --name editor --control ipc:///tmp/demo/profile
              statebus node todo --role view --screen editor --item t2 --control ipc:///tmp/demo/todo
            """
    )

    /// Host or view.
    enum Role: String, ExpressibleByArgument, CaseIterable { case host, view }

    @Argument(help: "The app: \(DemoApp.allCases.map(\.rawValue).joined(separator: " or ")).")
    var app: DemoAppArgument

    @Option(name: .long, help: "host or view.")
    var role: Role = .view

    @Option(
        name: .long,
        help:
            "What a view shows: for profile \(ProfileScreen.allCases.map(\.rawValue).joined(separator: ", ")) (default profile); for todo \(TodoScreen.allCases.map(\.rawValue).joined(separator: ", ")) (default list)."
    )
    var screen: String?

    @Option(name: .long, help: "The item a todo editor is bound to (default t1).")
    var item: String = "t1"

    @Option(name: .long, help: "The node's name (default: $STATEBUS_NODE, else the role).")
    var name: String?

    @Option(name: .long, help: "The host's control endpoint (default: $STATEBUS_CONTROL).")
    var control: String?

    @Option(name: .long, help: "The host's database for persisted properties (default: <state folder>/statebus/<app>.sqlite).")
    var database: String?

    @OptionGroup var security: HostSecurityOptions
    @OptionGroup var metrics: MetricsOptions

    func run() async throws {
        var environment = EnvironmentValues.process()
        if let control { environment.controlEndpoint = control }
        if let name {
            environment.nodeName = name
        } else if ProcessInfo.processInfo.environment[EnvironmentVariableName.node] == nil {
            environment.nodeName = role.rawValue
        }
        let stop = SignalTrap.stopSignals()
        let metricsEndpoint = try metrics.endpoint()
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
            metrics.announce(metricsEndpoint)
            try await runServices([host] + [metricsEndpoint].compactMap { $0 }, stoppingOn: stop)
        case .view:
            guard environment.controlEndpoint != nil else {
                throw ValidationError("no host endpoint: pass --control ENDPOINT or set STATEBUS_CONTROL")
            }
            metrics.serveInBackground(metricsEndpoint)
            let environment = environment
            let app = self.app.value
            let (screen, todoScreen) = try screens(for: app)
            let item = self.item
            let view = Task { @MainActor in
                try await DemoNode.view(
                    app, screen: screen, todoScreen: todoScreen, item: item, environment: environment, commands: DemoNode.standardInputLines(),
                    output: emit)
            }
            await stop.wait()
            view.cancel()
        }
    }
}

extension NodeCommand {
    /// The screen `--screen` names for the app's views.
    /// - Throws: `ValidationError` listing the app's screens when it names none of them.
    func screens(for app: DemoApp) throws -> (ProfileScreen, TodoScreen) {
        guard let screen else { return (.profile, .list) }
        switch app {
        case .profile:
            guard let chosen = ProfileScreen(rawValue: screen) else {
                throw ValidationError(
                    "--screen '\(screen)' is not a profile screen; use one of: \(ProfileScreen.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            return (chosen, .list)
        case .todo:
            guard let chosen = TodoScreen(rawValue: screen) else {
                throw ValidationError(
                    "--screen '\(screen)' is not a todo screen; use one of: \(TodoScreen.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            return (.profile, chosen)
        case .sharedText:
            throw ValidationError("the shared-text app has one screen: leave out --screen")
        }
    }
}

/// `shared-text`, `profile` or `todo` on the command line.
struct DemoAppArgument: ExpressibleByArgument {
    let value: DemoApp
    init?(argument: String) {
        guard let app = DemoApp(rawValue: argument) else { return nil }
        value = app
    }
    static var allValueStrings: [String] { DemoApp.allCases.map(\.rawValue) }
}
