/// The shared models available to views by type, as SwiftUI's `environmentObject` makes
/// them: put in by the host node, or connected on demand from the injected endpoint.
@MainActor
public final class EnvironmentObjects {
    private var models: [ObjectIdentifier: any SharedModel] = [:]

    /// An empty set.
    public nonisolated init() {}

    /// Adds (or replaces) the model of its type.
    public func insert<Model: SharedModel>(_ model: Model) {
        models[ObjectIdentifier(Model.self)] = model
    }

    /// Copies every model of `parent` (a child scope sees its parent's models).
    public func inherit(from parent: EnvironmentObjects) {
        models.merge(parent.models) { own, _ in own }
    }

    /// The model of a type, if present.
    public func model<Model: SharedModel>(_ type: Model.Type) -> Model? {
        models[ObjectIdentifier(type)] as? Model
    }
}

/// Where ``EnvironmentValues/objects`` lives.
public struct EnvironmentObjectsKey: EnvironmentKey {
    /// A fresh, empty set per process (`EnvironmentValues` copies share it).
    public static var defaultValue: EnvironmentObjects { shared }
    private static let shared = EnvironmentObjects()
}

extension EnvironmentValues {
    /// The shared models views resolve by type.
    public var objects: EnvironmentObjects {
        get { self[EnvironmentObjectsKey.self] }
        set { self[EnvironmentObjectsKey.self] = newValue }
    }

    /// The replica of `Model` for this node, connected on first use with the injected
    /// ``controlEndpoint`` (or an explicit one), then shared: the `@EnvironmentObject`
    /// resolution across processes, without passing endpoints by hand.
    /// - Parameters:
    ///   - type: the model type; its object name is ``SharedModel/objectName``.
    ///   - controlEndpoint: overrides the injected endpoint.
    ///   - timeout: how long to wait for the first snapshot.
    /// - Throws: `StateBusError` when no endpoint is known, or the join fails.
    @MainActor
    public func replica<Model: SharedModel>(of type: Model.Type, controlEndpoint: String? = nil, timeout: Duration = .seconds(10)) async throws
        -> Model
    {
        if let model = objects.model(type) { return model }
        guard let endpoint = controlEndpoint ?? self.controlEndpoint else {
            throw StateBusError(
                .other, "no control endpoint for \(Model.objectName): set STATEBUS_CONTROL (the launcher does) or pass controlEndpoint:",
                object: Model.objectName)
        }
        var configuration = ReplicaConfiguration(nodeName: nodeName)
        configuration.security = try replicaSecurity()
        let model = try await Model.replica(controlEndpoint: endpoint, configuration: configuration, timeout: timeout)
        objects.insert(model)
        return model
    }
}
