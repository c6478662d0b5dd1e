import StateBusRuntime
import StateBusWire

/// The code that runs each object's actions on a host: registered by
/// ``StateHost/init(serving:configuration:)`` for every served model, and called by the
/// host's I/O loop when a view's call arrives (``HostServer`` starts a task per call).
final class ActionHandlers: Sendable {
    /// Runs the named action with its arguments (one value per parameter) and returns its
    /// encoded result. Throws a `StateBusError` when the arguments do not decode, or
    /// whatever the action throws.
    typealias Handler = @Sendable (_ action: String, _ arguments: [Value]) async throws -> Value

    private let handlers = Locked<[String: Handler]>([:])

    /// Registers the handler of an object's actions (replacing an earlier one).
    func register(object: String, _ handler: @escaping Handler) {
        handlers.withLock { $0[object] = handler }
    }

    /// Forgets every handler (the host stopped), and with them the models they hold.
    func removeAll() {
        handlers.withLock { $0.removeAll() }
    }

    /// The handler of an object's actions, when it is served from a model.
    func handler(for object: String) -> Handler? {
        handlers.withLock { $0[object] }
    }
}
