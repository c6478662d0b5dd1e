import Foundation
import StateBus
import StateBusTerminalUI

/// The demo's apps.
public enum DemoApp: String, CaseIterable, Sendable {
    /// SharedData with three views (seeds/003).
    case sharedText = "shared-text"
    /// The profile editor (seeds/000, 002).
    case profile
}

/// What a profile view node shows.
public enum ProfileScreen: String, CaseIterable, Sendable {
    /// The profile.
    case profile
    /// The editing view bound to `$user.username` and `$user.email`.
    case edit
    /// The notification toggle.
    case notifications
    /// The error view with retry.
    case error
}

/// Runs the demo's nodes: hosts that own the models, views that replicate and edit them.
@MainActor
public enum DemoNode {
    /// Starts the host of an app: serves its model until the process stops.
    /// - Returns: the host (keep it; stop it at exit).
    public static func host(_ app: DemoApp, configuration: HostConfiguration) async throws -> StateHost {
        switch app {
        case .sharedText:
            let shared = SharedData()
            shared.sharedText = "Hello from the host"
            return try await StateHost(serving: [shared], configuration: configuration)
        case .profile:
            return try await StateHost(serving: [ProfileViewModel()], configuration: configuration)
        }
    }

    /// Runs a view node: joins the app's model through the environment, renders a screen on
    /// every change (each line prefixed with `[name]`), and applies each command line.
    ///
    /// Commands: for the shared text, any line sets the text. For the profile:
    /// `username NAME`, `email ADDRESS`, `toggle`, `retry`, `dismiss`, and `rename NAME`,
    /// which calls the host's ``ProfileViewModel/rename(to:)`` action.
    /// - Parameters:
    ///   - app: which model.
    ///   - screen: what a profile node shows (ignored for the shared text).
    ///   - environment: endpoint and node name (the launcher injects them).
    ///   - commands: the lines typed or sent.
    ///   - output: receives each printed line.
    public static func view(
        _ app: DemoApp, screen: ProfileScreen, environment: EnvironmentValues,
        commands: AsyncStream<String>, output: @escaping (String) -> Void
    ) async throws {
        let name = environment.nodeName
        let print: ([String]) -> Void = { frame in for line in frame { output("[\(name)] \(line)") } }
        switch app {
        case .sharedText:
            let shared = try await environment.replica(of: SharedData.self)
            let renderer = ViewRenderer(SharedTextView(name: name).environmentObject(shared), environment: environment, output: print)
            renderer.start()
            for await line in commands { shared.sharedText = line }
            renderer.stop()
        case .profile:
            let profile = try await environment.replica(of: ProfileViewModel.self)
            let renderer = ViewRenderer(ProfileScreenView(screen: screen).environmentObject(profile), environment: environment, output: print)
            renderer.start()
            for await line in commands { apply(line, to: profile, output: { output("[\(name)] \($0)") }) }
            renderer.stop()
        }
        output("[\(name)] closed")
    }

    /// Applies one profile command through bindings, as the SwiftUI views would.
    static func apply(_ line: String, to profile: ProfileViewModel, output: @escaping @MainActor (String) -> Void) {
        let parts = line.split(separator: " ", maxSplits: 1).map(String.init)
        let bindings = Bindable(profile)
        switch (parts.first, parts.count) {
        case ("username", 2): bindings.user.username.wrappedValue = parts[1]
        case ("email", 2): bindings.user.email.wrappedValue = parts[1]
        case ("toggle", 1): bindings.isNotificationEnabled.wrappedValue.toggle()
        case ("retry", 1): profile.connection.retryLastWrite()
        case ("dismiss", 1): profile.connection.dismissWriteError()
        case ("rename", 2):
            // An action: runs on the host, and returns once this view holds its change.
            let name = parts[1]
            Task {
                do {
                    let previous = try await profile.rename(to: name)
                    output("renamed '\(previous)' to '\(name)' on the host")
                } catch {
                    output("rename refused: \(error)")
                }
            }
        default: output("unknown command '\(line)': use username NAME, email ADDRESS, toggle, retry, dismiss or rename NAME")
        }
    }

    /// Reads standard input lines on a thread of its own (a blocking read must not hold a
    /// thread of Swift's cooperative pool).
    public nonisolated static func standardInputLines() -> AsyncStream<String> {
        let (stream, continuation) = AsyncStream<String>.makeStream()
        Thread.detachNewThread {
            while let line = readLine() { continuation.yield(line) }
            continuation.finish()
        }
        return stream
    }
}

/// The profile screen a node shows.
struct ProfileScreenView: View {
    let screen: ProfileScreen
    @EnvironmentObject var profile: ProfileViewModel

    var body: some View {
        switch screen {
        case .profile: ProfileView()
        case .edit:
            ProfileEditingView(user: $profile.user)
            ErrorView()
        case .notifications: NotificationToggleView(isEnabled: $profile.isNotificationEnabled)
        case .error: ErrorView()
        }
    }
}
