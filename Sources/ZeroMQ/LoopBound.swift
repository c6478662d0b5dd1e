/// A value that lives on an ``IOLoop``'s thread and may be referred to from anywhere, but
/// read or written only on that thread, which is checked at run time.
///
/// This is how a non-`Sendable` socket, or state built around one, is kept inside a
/// `Sendable` object: the object holds a `LoopBound`, and every use happens in a closure
/// handed to ``IOLoop/execute(_:)``.
public struct LoopBound<Value>: @unchecked Sendable {
    // Why `@unchecked Sendable` is sound: the box is created on the loop thread (the
    // initialiser takes the `LoopThread`, which exists only there) and `value` traps unless
    // the caller is on that same thread, so the non-Sendable value is only ever touched by
    // one thread. Copies of the struct share the box but not access to it.
    private final class Box {
        var value: Value
        init(_ value: Value) { self.value = value }
    }

    private let box: Box
    /// The loop whose thread owns the value.
    public let loop: IOLoop

    /// Binds `value` to the loop thread running this code.
    /// - Parameters:
    ///   - value: the value; from now on used only on `thread`.
    ///   - thread: the current loop thread, as handed to ``IOLoop/execute(_:)``.
    public init(_ value: Value, on thread: LoopThread) {
        box = Box(value)
        loop = thread.loop
    }

    /// The value. Traps when used off the loop thread.
    public var value: Value {
        get {
            precondition(loop.isOnLoopThread, "LoopBound value used off its loop thread")
            return box.value
        }
        nonmutating set {
            precondition(loop.isOnLoopThread, "LoopBound value used off its loop thread")
            box.value = newValue
        }
    }
}
