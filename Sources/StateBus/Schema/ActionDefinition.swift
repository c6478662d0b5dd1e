import StateBusWire

/// An action of a shared object: a method that runs on the host when a view calls it (the
/// method marked ``Action()`` on a ``SharedModel(_:)`` class), with its parameters and
/// result as the schema shows them to views and tools.
public struct ActionDefinition: Sendable, Hashable {
    /// One parameter of an action.
    public struct Parameter: Sendable, Hashable {
        /// The Swift argument label ("" for an unlabelled parameter); tools show it.
        public let label: String
        /// The kind of value, when it is a plain one; `nil` for structured values.
        public let kind: ValueKind?
        /// The parameter's Swift type, for people and tools.
        public let typeName: String

        /// Describes a parameter of a Swift type.
        public init<T: Codable>(_ label: String, type: T.Type) {
            self.label = label
            self.kind = ValueKind.plainKind(of: type)
            self.typeName = String(describing: type)
        }

        /// Describes a parameter by kind alone (tools, clients without Swift types).
        public init(_ label: String, kind: ValueKind?, typeName: String) {
            self.label = label
            self.kind = kind
            self.typeName = typeName
        }
    }

    /// The action's name: the method's base name.
    public let name: String
    /// The parameters, in call order.
    public let parameters: [Parameter]
    /// The kind of the result, when it is a plain one.
    public let resultKind: ValueKind?
    /// The result's Swift type; `"Void"` when the action returns nothing.
    public let resultTypeName: String

    /// Describes an action returning a value.
    public init<Result: Codable>(_ name: String, parameters: [Parameter] = [], result: Result.Type) {
        self.name = name
        self.parameters = parameters
        self.resultKind = ValueKind.plainKind(of: result)
        self.resultTypeName = String(describing: result)
    }

    /// Describes an action that returns nothing.
    public init(_ name: String, parameters: [Parameter] = []) {
        self.name = name
        self.parameters = parameters
        self.resultKind = nil
        self.resultTypeName = "Void"
    }

    /// Describes an action by kinds alone (as a client reads it from a welcome).
    public init(_ name: String, parameters: [Parameter], resultKind: ValueKind?, resultTypeName: String) {
        self.name = name
        self.parameters = parameters
        self.resultKind = resultKind
        self.resultTypeName = resultTypeName
    }

    /// `name(label: Type, …) -> Result`, as `statebus objects` prints it.
    public var signature: String {
        let parameters = parameters.map { $0.label.isEmpty ? "_: \($0.typeName)" : "\($0.label): \($0.typeName)" }.joined(separator: ", ")
        return resultTypeName == "Void" ? "\(name)(\(parameters))" : "\(name)(\(parameters)) -> \(resultTypeName)"
    }
}

extension ValueKind {
    /// The kind a plain Swift type's values always have (Bool, Int, Double, String), or `nil`
    /// for any other type, whose values are structured or vary.
    static func plainKind<T>(of type: T.Type) -> ValueKind? {
        switch type {
        case is Bool.Type: .bool
        case is Int.Type: .int
        case is Double.Type: .double
        case is String.Type: .string
        default: nil
        }
    }
}
