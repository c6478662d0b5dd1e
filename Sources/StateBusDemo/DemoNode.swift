import Foundation
import StateBus
import StateBusTerminalUI

/// The demo's apps.
public enum DemoApp: String, CaseIterable, Sendable {
    /// SharedData with three views (seeds/003).
    case sharedText = "shared-text"
    /// The profile editor (seeds/000, 002).
    case profile
    /// The to-do list: a keyed collection and host actions, with a list, an item editor and
    /// a counter of open items.
    case todo
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
        case .todo:
            return try await StateHost(serving: [TodoList()], configuration: configuration)
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
        _ app: DemoApp, screen: ProfileScreen, todoScreen: TodoScreen = .list, item: String = "t1", environment: EnvironmentValues,
        commands: AsyncStream<String>, output: @escaping @MainActor (String) -> Void
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
        case .todo:
            let list = try await environment.replica(of: TodoList.self)
            let renderer = ViewRenderer(
                TodoScreenView(screen: todoScreen, item: item).environmentObject(list), environment: environment, output: print)
            renderer.start()
            var added = 0
            for await line in commands { apply(line, to: list, node: name, added: &added, output: { output("[\(name)] \($0)") }) }
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

    /// Applies one to-do command, as a SwiftUI list's rows and buttons would: edits of the
    /// keyed collection travel as element operations; `new` and `clear` call host actions.
    static func apply(_ line: String, to list: TodoList, node: String, added: inout Int, output: @escaping @MainActor (String) -> Void) {
        let parts = line.split(separator: " ", maxSplits: 2).map(String.init)
        func item(_ id: String) -> Bool {
            guard list.todos[id: id] != nil else {
                output("no to-do \(id)")
                return false
            }
            return true
        }
        switch (parts.first, parts.count) {
        case ("add", 2...):
            added += 1
            list.todos.append(Todo(id: "\(node)-\(added)", title: parts[1...].joined(separator: " ")))
        case ("title", 3): if item(parts[1]) { list.todos[id: parts[1]]?.title = parts[2] }
        case ("done", 2): if item(parts[1]) { list.todos[id: parts[1]]?.done = true }
        case ("undo", 2): if item(parts[1]) { list.todos[id: parts[1]]?.done = false }
        case ("remove", 2): if item(parts[1]) { list.todos.remove(id: parts[1]) }
        case ("move", 3):
            guard item(parts[1]), let position = Int(parts[2]), let from = list.todos.index(id: parts[1]) else {
                output("use: move ID POSITION (a number from 0)")
                return
            }
            list.todos.move(fromOffsets: [from], toOffset: position > from ? min(position + 1, list.todos.count) : max(0, position))
        case ("new", 2...):
            let title = parts[1...].joined(separator: " ")
            Task {
                do { output("the host added \(try await list.add(title))") } catch { output("new refused: \(error)") }
            }
        case ("clear", 1):
            Task {
                do { output("the host cleared \(try await list.clearCompleted()) done items") } catch { output("clear refused: \(error)") }
            }
        default:
            output(
                "unknown command '\(line)': use add TITLE, title ID TEXT, done ID, undo ID, move ID POSITION, remove ID, new TITLE (host action), clear (host action)"
            )
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
