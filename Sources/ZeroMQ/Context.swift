import CZeroMQ
import StateBusRuntime

/// A libzmq context: the owner of I/O threads and the factory of sockets.
///
/// A context is thread-safe (libzmq's contract), so it is `Sendable`: share one per process.
/// It is terminated once, when ``terminate()`` is called or when the last reference goes;
/// every socket keeps its context alive, so a context never terminates under an open socket.
public final class Context: Sendable {
    /// The libzmq context pointer.
    ///
    /// `nonisolated(unsafe)` is sound: the pointer is written once in `init` and libzmq
    /// documents `zmq_ctx_*` and `zmq_socket` as safe to call from any thread.
    nonisolated(unsafe) let handle: UnsafeMutableRawPointer
    private let terminated = Locked(false)
    /// Held across `zmq_ctx_term`, so a second ``terminate()`` returns only once the context
    /// is gone (not while the first still waits for its sockets' pending messages).
    private let termination = Locked(())

    /// Creates a context.
    /// - Parameters:
    ///   - ioThreads: libzmq I/O threads (1 is right below a few gigabits a second).
    ///   - ioThreadCPU: pins the I/O threads to this CPU (`ZMQ_THREAD_AFFINITY_CPU_ADD`),
    ///     for the low-latency profile; `nil` lets the kernel place them.
    /// - Throws: `ZeroMQError` when libzmq cannot create a context or refuses the CPU.
    public init(ioThreads: Int32 = 1, ioThreadCPU: Int32? = nil) throws(ZeroMQError) {
        guard let handle = zmq_ctx_new() else {
            throw ZeroMQError(code: czmq_errno(), operation: "zmq_ctx_new")
        }
        self.handle = handle
        if ioThreads != 1 {
            _ = zmq_ctx_set(handle, ZMQ_IO_THREADS, ioThreads)
        }
        // Before the first socket: libzmq starts its I/O threads then, with this affinity.
        if let ioThreadCPU {
            do {
                try zmqCall("zmq_ctx_set(ZMQ_THREAD_AFFINITY_CPU_ADD)") { zmq_ctx_set(handle, ZMQ_THREAD_AFFINITY_CPU_ADD, ioThreadCPU) }
            } catch {
                zmq_ctx_term(handle)
                throw error
            }
        }
    }

    /// Makes every blocking call on this context's sockets return `contextTerminated`,
    /// without waiting for the sockets to close. Safe to call more than once.
    public func shutdown() {
        if terminated.withLock({ $0 }) { return }
        _ = zmq_ctx_shutdown(handle)
    }

    /// Terminates the context: waits until every socket is closed and has sent what its
    /// linger allows, then frees it.
    ///
    /// Called automatically on deinit. Safe to call more than once, from any thread: a later
    /// call returns once the first has finished.
    public func terminate() {
        termination.withLock { _ in
            let first = terminated.withLock { done -> Bool in
                defer { done = true }
                return !done
            }
            guard first else { return }
            _ = try? zmqCall("zmq_ctx_term") { zmq_ctx_term(handle) }
        }
    }

    /// Whether ``terminate()`` has begun: no socket may be made in it any more.
    var isTerminated: Bool { terminated.withLock { $0 } }

    deinit { terminate() }

    /// The libzmq version this process runs against, for example `(4, 3, 4)`.
    public static var libraryVersion: (major: Int32, minor: Int32, patch: Int32) {
        var major: Int32 = 0
        var minor: Int32 = 0
        var patch: Int32 = 0
        zmq_version(&major, &minor, &patch)
        return (major, minor, patch)
    }

    /// Whether libzmq was built with a capability, such as `"curve"` or `"ipc"`.
    /// - Parameter capability: the name `zmq_has` takes.
    public static func has(_ capability: String) -> Bool { zmq_has(capability) == 1 }
}
