import StateBus
import StateBusTerminalUI

/// A user, as in the profile editor of the SwiftUI examples (seeds/000).
public struct User: Codable, Sendable, Equatable {
    /// The user's name.
    public var username: String
    /// The user's email address.
    public var email: String

    /// Creates a user.
    public init(username: String, email: String) {
        self.username = username
        self.email = email
    }
}

/// The profile view model of the SwiftUI examples (seeds/000, 002), shared across processes:
/// `user` with a validated email, host-only `isLoading` and `error`, and a persisted
/// notification setting (the `@AppStorage` toggle).
@MainActor @SharedModel("Profile")
public final class ProfileViewModel {
    /// The user; the host refuses an email without an @.
    @Validate({ (user: User) in
        user.email.contains("@") && user.email.contains(".")
            ? nil : "'\(user.email)' is not a valid email address: it needs an @ and a domain"
    })
    public var user: User = User(username: "anna", email: "anna@example.com")

    /// Whether the host is loading the profile; only the host updates it.
    @HostOnly public var isLoading: Bool = false

    /// A message from the host about the profile, if any; only the host updates it.
    @HostOnly public var error: String? = nil

    /// Whether notifications are on; kept by the host across restarts.
    @Persisted public var isNotificationEnabled: Bool = false

    /// How many changes the host has committed (host-local bookkeeping, never synced).
    @Local public var committedChanges: Int = 0

    /// The host's post-commit hook: counts what was applied.
    public func didCommit(_ properties: Set<String>) {
        committedChanges += properties.count
    }

    /// Reloads the profile on the host (what a view's reload button calls): `isLoading` is
    /// on while it runs and any earlier `error` is cleared. Returns the user loaded.
    @Action public func loadUser() async throws -> User {
        isLoading = true
        error = nil
        let loaded = user
        isLoading = false
        return loaded
    }

    /// Renames the user on the host, refusing a blank name; returns the previous name.
    @Action public func rename(to username: String) async throws -> String {
        guard !username.allSatisfy(\.isWhitespace) else { throw ProfileError.blankUsername }
        let previous = user.username
        user.username = username
        return previous
    }
}

/// Why the profile's host refused an action.
public enum ProfileError: Error, CustomStringConvertible {
    /// ``ProfileViewModel/rename(to:)`` was given an empty or blank name.
    case blankUsername

    /// What was wrong and what to do.
    public var description: String {
        switch self {
        case .blankUsername: "a username cannot be blank: give at least one visible character"
        }
    }
}

/// Shows the profile.
public struct ProfileView: View {
    @EnvironmentObject var profile: ProfileViewModel
    /// Creates the view.
    public init() {}
    /// Username, email, loading and notification state.
    public var body: some View {
        VStack {
            Text("Username: \(profile.user.username)")
            Text("Email: \(profile.user.email)")
            if profile.isLoading { Text("Loading…") }
            Text("Notifications: \(profile.isNotificationEnabled ? "on" : "off")")
        }
    }
}

/// Edits the user through bindings to its fields: `$user.username`, `$user.email`, as
/// `ProfileEditingView` of the SwiftUI example does with `@Binding var user: User`.
public struct ProfileEditingView: View {
    @Binding var user: User
    /// Edits a user through a binding (the parent passes `$profile.user`).
    public init(user: Binding<User>) { _user = user }
    /// The two fields.
    public var body: some View {
        VStack {
            Text("Username field: \(user.username)")
            Text("Email field: \(user.email)")
        }
    }
}

/// The notification toggle, bound to the persisted setting.
public struct NotificationToggleView: View {
    @Binding var isEnabled: Bool
    /// A toggle bound to a flag (the parent passes `$profile.isNotificationEnabled`).
    public init(isEnabled: Binding<Bool>) { _isEnabled = isEnabled }
    /// `[x]` or `[ ]`.
    public var body: some View {
        Text("Notifications toggle: [\(isEnabled ? "x" : " ")]")
    }
}

/// Shows the host's refusal of this view's last edit, with retry and dismiss.
public struct ErrorView: View {
    @EnvironmentObject var profile: ProfileViewModel
    /// Creates the view.
    public init() {}
    /// The error, or that all is well.
    public var body: some View {
        if let error = profile.connection.lastWriteError {
            Text("Error: \(error.message) (type 'retry' or 'dismiss')")
        } else if let message = profile.error {
            Text("Host says: \(message)")
        } else {
            Text("No errors")
        }
    }
}
