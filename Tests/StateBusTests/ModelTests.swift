import Foundation
@_spi(Testing) import StateBus
import StateBusRuntime
import Testing

/// Waits, on the main actor, until `condition` holds (checked after each observed change of
/// what it reads), or fails after the deadline.
@MainActor
func waitUntil(_ what: String, timeout: Duration = .seconds(120), _ condition: @escaping @MainActor () -> Bool) async throws {
    let deadline = ContinuousClock.now + timeout
    while !condition() {
        guard ContinuousClock.now < deadline else { throw StateBusError(.timeout, "timed out waiting for \(what)") }
        // Wake when something the condition read changes, or at the deadline.
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let resumed = OnceFlag()
            withObservationTracking {
                _ = condition()
            } onChange: {
                if resumed.set() { continuation.resume() }
            }
            Task { @MainActor in
                try? await Task.sleep(until: deadline)  // the deadline, not a synchronisation
                if resumed.set() { continuation.resume() }
            }
        }
    }
}

/// A child view's field, as in SwiftUI: `@Binding` to a value its parent owns.
@MainActor
struct EmailField {
    @Binding var email: String
    func type(_ text: String) { email = text }
}

/// A flag that can be set once, from any thread.
final class OnceFlag: Sendable {
    private let flag = Locked(false)
    /// Sets the flag; returns whether this call was the first.
    func set() -> Bool {
        flag.withLock { value in
            defer { value = true }
            return !value
        }
    }
}

@MainActor
@Suite("Shared models: one declaration for the host and every view")
struct ModelTests {
    func serve<Model: SharedModel>(_ model: Model) async throws -> StateHost {
        let folder = Fixtures.temporaryFolder()
        return try await StateHost(
            serving: [model],
            configuration: HostConfiguration(
                name: "model", controlEndpoint: "ipc://\(folder)/control", heartbeatInterval: .milliseconds(200),
                persistence: .file("\(folder)/state.sqlite")
            ))
    }

    @Test("the macro declares the object: names, defaults, markers")
    func definition() {
        let definition = ProfileModel.objectDefinition
        #expect(ProfileModel.objectName == "Profile")
        #expect(SharedData.objectName == "SharedData")
        #expect(definition.properties.map(\.name) == ["user", "isLoading", "notificationsEnabled"])
        #expect(definition.property(named: "isLoading")?.isWritable == false)
        #expect(definition.property(named: "notificationsEnabled")?.isPersisted == true)
        #expect(definition.property(named: "user")?.defaultValue == ["username": "anna", "email": "anna@example.com"])
        #expect(SharedData.objectDefinition.property(named: "draft") == nil)
        #expect(ProfileModel._$propertyName(\ProfileModel.user) == "user")
    }

    @Test("edits on the host model and on replica models converge everywhere")
    func convergence() async throws {
        let truth = SharedData()
        truth.sharedText = "set before serving"
        let host = try await serve(truth)
        defer { host.stop() }
        let first = try await SharedData.replica(controlEndpoint: host.controlEndpoint)
        let second = try await SharedData.replica(controlEndpoint: host.controlEndpoint)
        defer {
            first.connection.detach()
            second.connection.detach()
        }
        #expect(first.sharedText == "set before serving")
        first.sharedText = "from the first view"
        #expect(first.sharedText == "from the first view")  // optimistic
        try await waitUntil("the host and the second view") {
            truth.sharedText == "from the first view" && second.sharedText == "from the first view"
        }
        truth.sharedText = "from the host"
        try await waitUntil("both views") { first.sharedText == "from the host" && second.sharedText == "from the host" }
        first.draft = "local only"
        #expect(host.values(of: "SharedData")?["draft"] == nil)
        #expect(second.draft == "never synced")
    }

    @Test("observation tracks only what was read, on hosts and replicas alike")
    func observationIsSelective() async throws {
        let truth = SharedData()
        let host = try await serve(truth)
        defer { host.stop() }
        let view = try await SharedData.replica(controlEndpoint: host.controlEndpoint)
        defer { view.connection.detach() }
        for model in [truth, view] {
            let textChanged = OnceFlag()
            withObservationTracking {
                _ = model.sharedText
            } onChange: {
                _ = textChanged.set()
            }
            model.edits += 1
            #expect(textChanged.set(), "changing 'edits' must not trigger an observer of 'sharedText'")
            let fired = OnceFlag()
            withObservationTracking {
                _ = model.sharedText
            } onChange: {
                _ = fired.set()
            }
            model.sharedText = "changed \(model === truth ? "host" : "view")"
            #expect(!fired.set(), "changing 'sharedText' must trigger its observer")
        }
        // A change that arrives from another process triggers observers too (after the
        // view's own writes have reached the host, or they would win the race).
        try await waitUntil("the view's writes at the host") { truth.sharedText == "changed view" }
        let remote = OnceFlag()
        withObservationTracking {
            _ = view.sharedText
        } onChange: {
            _ = remote.set()
        }
        truth.sharedText = "from afar"
        try await waitUntil("the remote change") { view.sharedText == "from afar" }
        #expect(!remote.set())
    }

    @Test("nested bindings write one field; a sibling edit from another view survives")
    func nestedBindings() async throws {
        let truth = ProfileModel()
        let host = try await serve(truth)
        defer { host.stop() }
        let editor = try await ProfileModel.replica(controlEndpoint: host.controlEndpoint)
        let other = try await ProfileModel.replica(controlEndpoint: host.controlEndpoint)
        defer {
            editor.connection.detach()
            other.connection.detach()
        }
        let username = Bindable(editor).user.username
        username.wrappedValue = "bea"
        // A child view that declares `@Binding`, handed `$user.email` by its parent.
        EmailField(email: Bindable(other).user.email).type("bea@example.org")
        let expected = User(username: "bea", email: "bea@example.org")
        try await waitUntil("both edits everywhere") { truth.user == expected && editor.user == expected && other.user == expected }
        #expect(truth.commits.contains(["user"]), "the host's post-commit hook runs")
    }

    @Test("a rejected edit rolls back and reaches the view as an error it can show and retry")
    func rejection() async throws {
        let truth = ProfileModel()
        let host = try await serve(truth)
        defer { host.stop() }
        let view = try await ProfileModel.replica(controlEndpoint: host.controlEndpoint)
        defer { view.connection.detach() }
        Bindable(view).user.email.wrappedValue = "no-at-sign"
        #expect(view.user.email == "no-at-sign")
        try await waitUntil("the rejection") { view.connection.lastWriteError != nil }
        #expect(view.connection.lastWriteError?.code == .validationFailed)
        #expect(view.connection.lastWriteError?.message.contains("not an email address") == true)
        try await waitUntil("the rollback") { view.user.email == "anna@example.com" }
        #expect(truth.user.email == "anna@example.com")

        view.isLoading = true  // host-only
        try await waitUntil("the read-only rejection") { view.connection.lastWriteError?.code == .readOnly }
        try await waitUntil("the rollback of isLoading") { view.isLoading == false }
        view.connection.dismissWriteError()
        #expect(view.connection.lastWriteError == nil)
    }

    @Test("a refusal stays shown when an earlier accepted edit of the same property is confirmed after it")
    func refusalOutlivesAnEarlierAcceptance() async throws {
        let truth = ProfileModel()
        let host = try await serve(truth)
        defer { host.stop() }
        let view = try await ProfileModel.replica(controlEndpoint: host.controlEndpoint)
        defer { view.connection.detach() }
        // Both edits reach the host in one turn: the refusal of the second is answered at
        // once, the first is confirmed by its publication at the end of the turn, after it.
        // (When a slow view sends the second only after the host's turn, the refusal comes
        // last and the check below holds anyway: it never fails for the timing, and it
        // catches the bug whenever the order is the one above.)
        let resume = await host.pauseLoopForTesting()
        Bindable(view).user.email.wrappedValue = "bea@example.org"
        Bindable(view).user.email.wrappedValue = "bea-at-example"
        resume()
        try await waitUntil("the host to take the first edit") { truth.user.email == "bea@example.org" }
        try await waitUntil("the refusal of the second edit") { view.connection.lastWriteError != nil }
        try await waitUntil("the view to settle on the first edit") { view.user.email == "bea@example.org" }
        // Before, the first edit's confirmation cleared the refusal of the second.
        let error = view.connection.lastWriteError
        #expect(error?.message.contains("not an email address") == true, "\(String(describing: error))")
    }

    @Test("a detached model is a plain observable object")
    func detached() {
        let model = SharedData()
        model.sharedText = "alone"
        #expect(model.sharedText == "alone")
        #expect(model.connection.state == .live)
        let constant = Binding.constant(3)
        constant.wrappedValue = 4
        #expect(constant.wrappedValue == 3)
    }
}
