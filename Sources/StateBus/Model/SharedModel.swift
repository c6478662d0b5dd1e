/// A class declared with ``SharedModel(_:)``. The macro provides every requirement except
/// ``didCommit(_:)``, which has a default.
@MainActor
public protocol SharedModel: AnyObject, Observable {
    /// The object's name on the bus.
    nonisolated static var objectName: String { get }
    /// The object's synced properties, for the host.
    nonisolated static var objectDefinition: ObjectDefinition { get }
    /// The synced property a key path names, or `nil`.
    static func _$propertyName(_ keyPath: PartialKeyPath<Self>) -> String?
    /// The link to the host or replica.
    var _$bus: ModelBus { get }
    /// Every synced property's value.
    func _$values() -> [String: Value]
    /// Applies values from the other side; returns the names applied.
    func _$apply(_ values: [String: Value]) -> Set<String>
    /// Repeats the element edits of one property that its replica (on a view) or the host's
    /// store (on the host) made in place (a large keyed collection changes one element at a
    /// time); `false` when the property cannot, and takes its whole value.
    func _$repeatElementEdits(_ property: String, _ edits: [ElementEdit]) -> Bool
    /// Runs an action (``Action()``) on the host: decodes the arguments, calls the method,
    /// encodes its result.
    func _$perform(_ action: String, _ arguments: [Value]) async throws -> Value
    /// Creates a model with every property at its default.
    init()
    /// Called on the host after changes are applied (from a view's write or the host's own
    /// set): the post-commit hook. Validation happens before, in ``Validate(_:)`` rules.
    /// - Parameter properties: the names that changed.
    func didCommit(_ properties: Set<String>)
}

extension SharedModel {
    /// Does nothing by default.
    public func didCommit(_ properties: Set<String>) {}

    /// Repeats nothing by default: a model written without the macro takes whole values.
    public func _$repeatElementEdits(_ property: String, _ edits: [ElementEdit]) -> Bool { false }

    /// The bus link of this model: connection state, the last rejected write, retry.
    public var connection: ModelBus { _$bus }

    /// Connects a replica of this model to a host and waits until it holds the host's state.
    /// - Parameters:
    ///   - controlEndpoint: the host's control endpoint.
    ///   - configuration: the replica's identity and patience.
    ///   - timeout: how long to wait for the first snapshot.
    /// - Returns: a model whose properties follow the host, and whose writes go to the host.
    /// - Throws: `StateBusError` (`timeout`, `unknownObject`).
    public static func replica(
        controlEndpoint: String,
        configuration: ReplicaConfiguration = ReplicaConfiguration(),
        timeout: Duration = .seconds(10)
    ) async throws -> Self {
        let replica = try Replica(object: objectName, controlEndpoint: controlEndpoint, configuration: configuration)
        do {
            try await replica.waitUntilLive(timeout: timeout)
        } catch {
            replica.close()
            throw error
        }
        let model = Self()
        model._$bus.attach(model, to: replica)
        return model
    }
}

extension StateHost {
    /// Starts a host that serves models: their current values become the host's state, and
    /// from then on each model is the host's object (the `@StateObject` that owns the truth).
    /// - Parameters:
    ///   - models: the models to serve; their types must have distinct object names.
    ///   - configuration: endpoints and behaviour.
    /// - Throws: like ``StateHost/init(objects:configuration:context:)``; and the host's
    ///   `StateBusError` (such as `typeMismatch`, for a type that does not decode its own
    ///   encoding) when it refuses a value a model had before serving, naming the object and
    ///   property. The host is then stopped.
    @MainActor
    public convenience init(serving models: [any SharedModel], configuration: HostConfiguration = HostConfiguration()) async throws {
        try await self.init(objects: models.map { type(of: $0).objectDefinition }, configuration: configuration)
        for (index, model) in models.enumerated() {
            let definition = type(of: model).objectDefinition
            // Values the code changed before serving become the host's; persisted properties
            // keep what the host restored (the stored value wins over the code, as with
            // @AppStorage).
            let changes = model._$values().sorted { $0.key < $1.key }.compactMap { name, value -> PropertyChange? in
                guard let property = definition.property(named: name), !property.isPersisted,
                    value != property.defaultValue
                else { return nil }
                return PropertyChange(name, to: value)
            }
            if !changes.isEmpty {
                do {
                    _ = try apply(changes, to: definition.name)
                } catch {
                    // The host refused a value the code gave the model (its type does not
                    // read back its own encoding): serving anyway would show the model's
                    // value in this process and the default on the bus. Say which and why.
                    for served in models[..<index] { served._$bus.detach() }
                    stop()
                    throw StateBusError(
                        error.code, "the value the model had before serving was refused: \(error.message)",
                        object: error.object ?? definition.name, property: error.property)
                }
            }
            model._$bus.attach(model, to: self)
            if !definition.actions.isEmpty {
                // Held by the host until it stops: a view may call an action of a model that
                // the serving code did not keep. A main-actor box is Sendable; the model, seen
                // as `any SharedModel`, is not.
                let served = ServedModel(model)
                actionHandlers.register(object: definition.name) { @MainActor action, arguments in
                    try await served.model._$perform(action, arguments)
                }
            }
        }
    }
}

/// A model the host serves, for the handler of its actions: a main-actor class may cross to
/// the task that runs a call.
@MainActor
private final class ServedModel {
    let model: any SharedModel
    init(_ model: any SharedModel) { self.model = model }
}
