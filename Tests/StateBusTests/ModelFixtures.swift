import StateBus

/// The shared-text model of the SwiftUI example (seeds/003): one text, three views.
@MainActor @SharedModel
final class SharedData {
    var sharedText: String = ""
    var edits: Int = 0
    @Local var draft: String = "never synced"
}

/// The profile model of the SwiftUI examples (seeds/000, 002).
@MainActor @SharedModel("Profile")
final class ProfileModel {
    @Validate({ (user: User) in user.email.contains("@") ? nil : "'\(user.email)' is not an email address" })
    var user: User = User(username: "anna", email: "anna@example.com")
    @HostOnly var isLoading: Bool = false
    @Persisted var notificationsEnabled: Bool = true
    @Local var commits: [Set<String>] = []

    func didCommit(_ properties: Set<String>) {
        commits.append(properties)
    }
}
