import CZeroMQ

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A kernel thread that runs one closure and can be joined.
///
/// Blocking calls such as `zmq_poll` must never run on Swift's cooperative pool, so each
/// I/O loop gets a thread of its own.
final class JoinableThread: Sendable {
    /// `pthread_t` is a plain integer on Linux; it is written once, before the thread is
    /// shared, and only read afterwards.
    nonisolated(unsafe) private var thread: pthread_t

    /// Starts a thread running `body`.
    /// - Parameters:
    ///   - name: shown by `top -H` and debuggers (at most 15 characters are kept).
    ///   - body: the work; the thread ends when it returns.
    init(name: String, body: @escaping @Sendable () -> Void) {
        final class Box: Sendable {
            let name: String
            let body: @Sendable () -> Void
            init(name: String, body: @escaping @Sendable () -> Void) {
                self.name = name
                self.body = body
            }
        }
        let box = Unmanaged.passRetained(Box(name: name, body: body)).toOpaque()
        #if canImport(Glibc)
            var handle = pthread_t()
        #else
            var handle: pthread_t? = nil
        #endif
        let result = pthread_create(
            &handle, nil,
            { raw in
                #if canImport(Glibc)
                    let box = Unmanaged<Box>.fromOpaque(raw!).takeRetainedValue()
                    czmq_name_thread(String(box.name.prefix(15)))
                #else
                    let box = Unmanaged<Box>.fromOpaque(raw).takeRetainedValue()
                #endif
                box.body()
                return nil
            }, box)
        precondition(result == 0, "pthread_create failed with \(result)")
        #if canImport(Glibc)
            thread = handle
        #else
            thread = handle!
        #endif
    }

    /// Waits until the thread's closure has returned.
    func join() {
        pthread_join(thread, nil)
    }

    /// Lets the thread free its resources when it ends, without a join (call at most once,
    /// and never together with ``join()``).
    func detach() {
        pthread_detach(thread)
    }
}
