@_exported import Observation
@_exported import StateBusRuntime
@_exported import StateBusWire

/// Declares a shared model: a final `@MainActor` class whose stored `var`s the host owns and
/// every view replicates, observable as with `@Observable`.
///
/// The same declaration serves the host and every view, as one `.rep` file serves both sides
/// in Qt Remote Objects:
///
/// ```swift
/// @MainActor @SharedModel
/// final class SharedData {
///     var sharedText: String = ""
/// }
///
/// // host process
/// let data = SharedData()
/// let host = try await StateHost(serving: [data])
/// // view process
/// let data = try await SharedData.replica(controlEndpoint: endpoint)
/// data.sharedText = "hi"   // applied at once, sent to the host
/// ```
///
/// Every synced property needs an explicit Codable type and a default value. Mark properties
/// with ``Local()`` (never synced), ``Persisted()`` (kept durable by the host), ``HostOnly()``
/// (read-only for views) and ``Validate(_:)`` (a check the host runs before applying a view's
/// write).
/// - Parameter name: the object's name on the bus (default: the type's name).
@attached(
    member, names: named(init), named(_$observationRegistrar), named(_$bus), named(access), named(withMutation), named(objectName),
    named(objectDefinition), named(_$propertyName), named(_$values), named(_$apply), named(_$repeatElementEdits),
    named(_$perform))
@attached(memberAttribute)
@attached(extension, conformances: SharedModel, Observable)
public macro SharedModel(_ name: String? = nil) = #externalMacro(module: "StateBusMacros", type: "SharedModelMacro")

/// Added by ``SharedModel(_:)`` to each synced property; not written by hand.
@attached(accessor, names: named(init), named(get), named(set))
@attached(peer, names: prefixed(_))
public macro SharedProperty() = #externalMacro(module: "StateBusMacros", type: "SharedPropertyMacro")

/// Keeps a property local to its process, unsynced and unobserved, like
/// `@ObservationIgnored`: it never leaves the process, and changing it re-renders nothing.
/// For view-local state that does re-render, use `State` in the view.
@attached(peer)
public macro Local() = #externalMacro(module: "StateBusMacros", type: "MarkerMacro")

/// The `@AppStorage` counterpart: the host keeps the property durable and restores it when it
/// restarts; the stored value wins over the default.
@attached(peer)
public macro Persisted() = #externalMacro(module: "StateBusMacros", type: "MarkerMacro")

/// Read-only for views: only the host updates it (a host-only setter). A view's write is
/// rejected with `readOnly`.
@attached(peer)
public macro HostOnly() = #externalMacro(module: "StateBusMacros", type: "MarkerMacro")

/// A check the host runs before applying a view's write to this property: return a reason
/// to reject it, or `nil` to accept. It must have no side effects; use
/// ``SharedModel/didCommit(_:)`` for what should happen after a change.
///
/// ```swift
/// @Validate({ (email: String) in email.contains("@") ? nil : "an email address needs an @" })
/// var email: String = ""
/// ```
@attached(peer)
public macro Validate<T>(_ rule: @escaping @Sendable (T) -> String?) = #externalMacro(module: "StateBusMacros", type: "MarkerMacro")

/// A check the host runs on each element a view's write inserts or changes in a keyed
/// collection (an `IdentifiedArray` property), before applying it: return a reason to reject
/// the write, or `nil` to accept. It sees the element alone, so it costs the element's size,
/// not the collection's; ``Validate(_:)`` on the same property sees the whole result.
///
/// ```swift
/// @ValidateElement({ (todo: Todo) in todo.title.isEmpty ? "a to-do needs a title" : nil })
/// var todos: IdentifiedArrayOf<Todo> = []
/// ```
@attached(peer)
public macro ValidateElement<Element>(_ rule: @escaping @Sendable (Element) -> String?) =
    #externalMacro(module: "StateBusMacros", type: "MarkerMacro")

/// An action: a method of a ``SharedModel(_:)`` class that runs on the host when a view
/// calls it, like a Qt Remote Objects slot or a ROS 2 service. On the host (and on a
/// detached model) it is a plain method call; on a view the same call goes to the host, runs
/// the method's body there, and returns once the view holds every change the action made to
/// the object.
///
/// ```swift
/// @MainActor @SharedModel
/// final class TodoList {
///     var items: [Todo] = []
///
///     @Action func clearCompleted() async throws -> Int {
///         let before = items.count
///         items.removeAll { $0.done }
///         return before - items.count
///     }
/// }
///
/// // view process
/// let removed = try await list.clearCompleted()
/// ```
///
/// The method must be `async throws` (on a view it can be refused, time out, or the action
/// can throw: see ``Replica/call(_:arguments:timeout:)`` for the errors), not generic, with
/// `Codable` arguments and result. Calling an action takes the right to write the object.
@attached(body)
public macro Action() = #externalMacro(module: "StateBusMacros", type: "ActionMacro")
