import Foundation
import StateBusRuntime

/// A key into ``EnvironmentValues``, with the value a view gets when nobody set one, as in
/// SwiftUI.
///
/// ```swift
/// struct AccentKey: EnvironmentKey { static let defaultValue = "*" }
/// extension EnvironmentValues {
///     var accent: String { get { self[AccentKey.self] } set { self[AccentKey.self] = newValue } }
/// }
/// ```
public protocol EnvironmentKey {
    /// The value's type.
    associatedtype Value: Sendable
    /// The value when none was set.
    static var defaultValue: Value { get }
}

/// A key whose value the launcher injects into a node's process environment: the variable's
/// name and how to read it. ``EnvironmentValues/process(_:)`` reads every such key it is
/// asked for; unset or unreadable variables give the key's default.
public protocol ProcessEnvironmentKey: EnvironmentKey {
    /// The environment variable, such as `STATEBUS_CONTROL`.
    static var variable: String { get }
    /// Reads the variable's text; `nil` when it cannot be read (the default is used).
    static func parse(_ text: String) -> Value?
}

extension ProcessEnvironmentKey {
    /// `parse`, with the result as `Any` so a key whose value is itself optional reads right.
    static func parseErased(_ text: String) -> Any? {
        guard let value = parse(text) else { return nil }
        return value
    }
}

/// The values that flow down a view hierarchy — and, across processes, from the launcher into
/// each node through its process environment (the `environmentObject` counterpart).
public struct EnvironmentValues: Sendable {
    private var values: [ObjectIdentifier: any Sendable] = [:]
    private let processEnvironment: [String: String]

    /// Empty values: every key reads its default.
    public init() { processEnvironment = [:] }

    /// Values read from a process environment: every ``ProcessEnvironmentKey`` reads its
    /// variable (``controlEndpoint`` from `STATEBUS_CONTROL`, ``nodeName`` from
    /// `STATEBUS_NODE`, ``objectNames`` from `STATEBUS_OBJECTS`).
    /// - Parameter environment: the variables (default: this process's).
    public static func process(_ environment: [String: String] = ProcessInfo.processInfo.environment) -> EnvironmentValues {
        EnvironmentValues(processEnvironment: environment)
    }

    private init(processEnvironment: [String: String]) { self.processEnvironment = processEnvironment }

    /// The value for a key: set explicitly, else from the process environment for a
    /// ``ProcessEnvironmentKey``, else the key's default.
    public subscript<Key: EnvironmentKey>(key: Key.Type) -> Key.Value {
        get {
            // Unwrap the stored entry first: casting a missing entry (nil) to an optional
            // Value would "succeed" with nil.
            if let stored = values[ObjectIdentifier(key)], let value = stored as? Key.Value { return value }
            if let processKey = key as? any ProcessEnvironmentKey.Type,
                let text = processEnvironment[processKey.variable],
                let value = processKey.parseErased(text) as? Key.Value
            {
                return value
            }
            return Key.defaultValue
        }
        set { values[ObjectIdentifier(key)] = newValue }
    }

}

// MARK: Keys the launcher injects

/// `STATEBUS_CONTROL`: the host's control endpoint.
public struct ControlEndpointKey: ProcessEnvironmentKey {
    /// No endpoint.
    public static let defaultValue: String? = nil
    /// `STATEBUS_CONTROL`.
    public static let variable = EnvironmentVariableName.control
    /// The text as is, when not empty.
    public static func parse(_ text: String) -> String?? { text.isEmpty ? nil : .some(text) }
}

/// `STATEBUS_NODE`: this node's name in the launch file.
public struct NodeNameKey: ProcessEnvironmentKey {
    /// The process's name.
    public static let defaultValue = ProcessInfo.processInfo.processName
    /// `STATEBUS_NODE`.
    public static let variable = EnvironmentVariableName.node
    /// The text as is, when not empty.
    public static func parse(_ text: String) -> String? { text.isEmpty ? nil : text }
}

/// `STATEBUS_OBJECTS`: the objects this node binds (or serves), comma-separated.
public struct ObjectNamesKey: ProcessEnvironmentKey {
    /// None.
    public static let defaultValue: [String] = []
    /// `STATEBUS_OBJECTS`.
    public static let variable = EnvironmentVariableName.objects
    /// Comma-separated names, blanks dropped.
    public static func parse(_ text: String) -> [String]? {
        text.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }
}

extension EnvironmentValues {
    /// The host's control endpoint (`STATEBUS_CONTROL`), if injected.
    public var controlEndpoint: String? {
        get { self[ControlEndpointKey.self] }
        set { self[ControlEndpointKey.self] = newValue }
    }

    /// This node's name (`STATEBUS_NODE`, default: the process name).
    public var nodeName: String {
        get { self[NodeNameKey.self] }
        set { self[NodeNameKey.self] = newValue }
    }

    /// The objects this node binds (`STATEBUS_OBJECTS`).
    public var objectNames: [String] {
        get { self[ObjectNamesKey.self] }
        set { self[ObjectNamesKey.self] = newValue }
    }
}
