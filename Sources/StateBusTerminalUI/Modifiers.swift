import StateBus

/// Runs `action` after the first render that shows `content` (for a view process, once its
/// shared models hold their first snapshot, since the renderer draws after connecting).
public struct OnAppearView<Content: View>: View, PrimitiveView {
    let content: Content
    let action: () -> Void
    func render(in graph: ViewGraph, path: String, into lines: inout [String]) {
        graph.evaluate(content, path: path + "/a", into: &lines)
        graph.appear(path: path, action: action)
    }
}

/// Runs `action` after the first render that no longer shows `content`.
public struct OnDisappearView<Content: View>: View, PrimitiveView {
    let content: Content
    let action: () -> Void
    func render(in graph: ViewGraph, path: String, into lines: inout [String]) {
        graph.evaluate(content, path: path + "/d", into: &lines)
        graph.onDisappear(path: path, action: action)
    }
}

/// Runs `action(old, new)` after a render in which `value` differs from the previous one.
public struct OnChangeView<Content: View, Value: Equatable>: View, PrimitiveView {
    let content: Content
    let value: Value
    let action: (Value, Value) -> Void
    func render(in graph: ViewGraph, path: String, into lines: inout [String]) {
        graph.evaluate(content, path: path + "/c", into: &lines)
        graph.change(path: path, value: value, action: action)
    }
}

/// Runs `action` for each element of an `AsyncSequence` while `content` is shown.
public struct OnReceiveView<Content: View, Events: AsyncSequence & Sendable>: View, PrimitiveView where Events.Element: Sendable {
    let content: Content
    let events: Events
    let action: (Events.Element) -> Void
    func render(in graph: ViewGraph, path: String, into lines: inout [String]) {
        graph.evaluate(content, path: path + "/r", into: &lines)
        graph.receive(path: path, events: events, action: action)
    }
}

/// Changes the environment for `content` and everything below it.
public struct EnvironmentModifierView<Content: View>: View, PrimitiveView {
    let content: Content
    let transform: (inout EnvironmentValues) -> Void
    func render(in graph: ViewGraph, path: String, into lines: inout [String]) {
        let saved = graph.environment
        transform(&graph.environment)
        graph.evaluate(content, path: path + "/e", into: &lines)
        graph.environment = saved
    }
}

extension View {
    /// Runs `action` once, after the first render that shows this view.
    public func onAppear(perform action: @escaping () -> Void) -> OnAppearView<Self> { OnAppearView(content: self, action: action) }
    /// Runs `action` once this view is no longer shown.
    public func onDisappear(perform action: @escaping () -> Void) -> OnDisappearView<Self> { OnDisappearView(content: self, action: action) }
    /// Runs `action(old, new)` when `value` changes between renders.
    public func onChange<Value: Equatable>(of value: Value, perform action: @escaping (Value, Value) -> Void) -> OnChangeView<Self, Value> {
        OnChangeView(content: self, value: value, action: action)
    }
    /// Runs `action` on the main actor for each element of `events` while this view is shown.
    public func onReceive<Events: AsyncSequence & Sendable>(_ events: Events, perform action: @escaping (Events.Element) -> Void) -> OnReceiveView<
        Self, Events
    > where Events.Element: Sendable {
        OnReceiveView(content: self, events: events, action: action)
    }
    /// Sets an environment value for this view and its descendants.
    public func environment<Value>(_ keyPath: WritableKeyPath<EnvironmentValues, Value>, _ value: Value) -> EnvironmentModifierView<Self> {
        EnvironmentModifierView(content: self) { $0[keyPath: keyPath] = value }
    }
    /// Makes a shared model available to this view and its descendants by type.
    public func environmentObject<Model: SharedModel>(_ model: Model) -> EnvironmentModifierView<Self> {
        EnvironmentModifierView(content: self) { values in
            let objects = EnvironmentObjects()
            objects.inherit(from: values.objects)
            objects.insert(model)
            values.objects = objects
        }
    }
}
