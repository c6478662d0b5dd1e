import Observation
import StateBus

/// A view property the view renderer links to storage that outlives the view value: views are
/// rebuilt on every render, their state is not.
@MainActor
protocol DynamicPropertyLink: AnyObject {
    func link(to graph: ViewGraph, key: String)
}

/// A box whose value is observed, so changing ``State`` re-renders what read it.
@MainActor
final class StateBox<Value>: Observable {
    private let registrar = ObservationRegistrar()
    private var stored: Value
    init(_ value: Value) { stored = value }
    var value: Value {
        get {
            registrar.access(self, keyPath: \.value)
            return stored
        }
        set { registrar.withMutation(of: self, keyPath: \.value) { stored = newValue } }
    }
}

@MainActor
final class StateLocation<Value>: DynamicPropertyLink {
    var box: StateBox<Value>
    init(_ value: Value) { box = StateBox(value) }
    func link(to graph: ViewGraph, key: String) { box = graph.stateBox(key: key, initial: box) }
}

/// View-local state that survives re-renders and never leaves the process, as SwiftUI's
/// `@State`. Changing it re-renders the views that read it.
@MainActor
@propertyWrapper
public struct State<Value> {
    let location: StateLocation<Value>
    /// Declares state with its first value.
    public init(wrappedValue: Value) { location = StateLocation(wrappedValue) }
    /// The current value.
    public var wrappedValue: Value {
        get { location.box.value }
        nonmutating set { location.box.value = newValue }
    }
    /// A binding to the state, to hand to a child view.
    public var projectedValue: Binding<Value> {
        let location = self.location
        return Binding(get: { location.box.value }, set: { location.box.value = $0 })
    }
}

@MainActor
final class EnvironmentLocation: DynamicPropertyLink {
    var values = EnvironmentValues.process()
    func link(to graph: ViewGraph, key: String) { values = graph.environment }
}

/// Reads a value from the view's environment, as SwiftUI's `@Environment(\.key)`:
/// `@Environment(\.nodeName) var nodeName`.
@MainActor
@propertyWrapper
public struct Environment<Value> {
    let keyPath: KeyPath<EnvironmentValues, Value>
    let location = EnvironmentLocation()
    /// Declares an environment read.
    public init(_ keyPath: KeyPath<EnvironmentValues, Value>) { self.keyPath = keyPath }
    /// The value where the view is rendered.
    public var wrappedValue: Value { location.values[keyPath: keyPath] }
}

/// A shared model from the view's environment, by type, as SwiftUI's `@EnvironmentObject`.
///
/// Put models in with ``View/environmentObject(_:)`` or connect them in the node's start-up
/// with ``EnvironmentValues/replica(of:controlEndpoint:timeout:)``. A view rendered without
/// its model gets a detached default model and a warning, not a crash.
@MainActor
@propertyWrapper
public struct EnvironmentObject<Model: SharedModel> {
    let location = EnvironmentLocation()
    /// Declares the dependency.
    public init() {}
    /// The model.
    public var wrappedValue: Model {
        if let model = location.values.objects.model(Model.self) { return model }
        missingEnvironmentObject(Model.objectName)
        let model = Model()
        location.values.objects.insert(model)
        return model
    }
    /// Bindings to the model's properties: `$shared.sharedText`.
    public var projectedValue: Bindable<Model> { Bindable(wrappedValue) }
}

private func missingEnvironmentObject(_ name: String) {
    print(
        "warning: no \(name) in the environment; using a detached default. Add .environmentObject(model) or connect it with EnvironmentValues.replica(of:) before rendering."
    )
}

/// Lets the view renderer find a property's storage through reflection.
@MainActor
protocol DynamicPropertyCarrier {
    var linkTarget: any DynamicPropertyLink { get }
}

extension State: DynamicPropertyCarrier { var linkTarget: any DynamicPropertyLink { location } }
extension Environment: DynamicPropertyCarrier { var linkTarget: any DynamicPropertyLink { location } }
extension EnvironmentObject: DynamicPropertyCarrier { var linkTarget: any DynamicPropertyLink { location } }
