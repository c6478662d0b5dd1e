import Observation
import StateBus

/// The view renderer's memory between renders: state boxes, renderers and lifecycle records,
/// keyed by each view's structural path in the tree.
@MainActor
final class ViewGraph {
    var environment: EnvironmentValues
    private var states: [String: AnyObject] = [:]
    private var renderers: [String: AnyObject] = [:]
    private var appeared: Set<String> = []
    private var disappearActions: [String: () -> Void] = [:]
    private var lastValues: [String: Any] = [:]
    private var receivers: [String: Task<Void, Never>] = [:]
    private var seen: Set<String> = []
    private var afterRender: [() -> Void] = []
    /// How many times each view's body was evaluated, by path (for tests and diagnostics).
    private(set) var bodyEvaluations: [String: Int] = [:]

    init(environment: EnvironmentValues) { self.environment = environment }

    /// Renders a view at a path into lines.
    func evaluate<V: View>(_ view: V, path: String, into lines: inout [String]) {
        if let primitive = view as? any PrimitiveView {
            primitive.render(in: self, path: path, into: &lines)
            return
        }
        if let represented = view as? any ViewRepresentable {
            renderRepresentable(represented, path: path, into: &lines)
            return
        }
        for child in Mirror(reflecting: view).children {
            if let carrier = child.value as? any DynamicPropertyCarrier {
                carrier.linkTarget.link(to: self, key: "\(path):\(child.label ?? "")")
            }
        }
        bodyEvaluations[path, default: 0] += 1
        evaluate(view.body, path: "\(path)/\(V.self)", into: &lines)
    }

    private func renderRepresentable<R: ViewRepresentable>(_ view: R, path: String, into lines: inout [String]) {
        RepresentableRendering(view: view).render(in: self, path: path, into: &lines)
    }

    /// One render pass: the tree's lines, then lifecycle actions.
    func renderPass(_ body: (inout [String]) -> Void) -> [String] {
        seen = []
        var lines: [String] = []
        body(&lines)
        // Views no longer shown: disappear actions and receivers end.
        for path in appeared.subtracting(seen) { appeared.remove(path) }
        for (path, action) in disappearActions where !seen.contains(path) {
            disappearActions[path] = nil
            afterRender.append(action)
        }
        for (path, task) in receivers where !seen.contains(path) {
            task.cancel()
            receivers[path] = nil
        }
        return lines
    }

    /// Runs lifecycle actions collected during the last pass (after it, so actions that change
    /// state schedule another render instead of changing the one in progress).
    func runAfterRenderActions() {
        let actions = afterRender
        afterRender = []
        for action in actions { action() }
    }

    func stateBox<Value>(key: String, initial: StateBox<Value>) -> StateBox<Value> {
        if let box = states[key] as? StateBox<Value> { return box }
        states[key] = initial
        return initial
    }

    func renderer<Renderer: AnyObject>(key: String, make: () -> Renderer) -> Renderer {
        if let renderer = renderers[key] as? Renderer { return renderer }
        let renderer = make()
        renderers[key] = renderer
        return renderer
    }

    func appear(path: String, action: @escaping () -> Void) {
        seen.insert(path)
        if appeared.insert(path).inserted { afterRender.append(action) }
    }

    func onDisappear(path: String, action: @escaping () -> Void) {
        seen.insert(path)
        disappearActions[path] = action
    }

    func change<Value: Equatable>(path: String, value: Value, action: @escaping (Value, Value) -> Void) {
        seen.insert(path)
        if let old = lastValues[path] as? Value, old != value { afterRender.append { action(old, value) } }
        lastValues[path] = value
    }

    func receive<Events: AsyncSequence & Sendable>(path: String, events: Events, action: @escaping (Events.Element) -> Void)
    where Events.Element: Sendable {
        seen.insert(path)
        guard receivers[path] == nil else { return }
        let deliver = MainActorBox(action)
        receivers[path] = Task { @MainActor in
            do {
                for try await element in events {
                    if Task.isCancelled { return }
                    deliver.value(element)
                }
            } catch {}
        }
    }

    /// Ends every receiver and runs every pending disappear action (the renderer stops).
    func tearDown() {
        for task in receivers.values { task.cancel() }
        receivers = [:]
        let actions = disappearActions.values
        disappearActions = [:]
        for action in actions { action() }
    }
}

/// Carries a main-actor closure into a main-actor task.
@MainActor
final class MainActorBox<Value> {
    let value: Value
    init(_ value: Value) { self.value = value }
}
