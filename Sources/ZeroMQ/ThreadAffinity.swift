import CZeroMQ

/// Pinning threads to a CPU, for the low-latency profile (``IOLoop/init(context:name:cpu:)``,
/// ``Context/init(ioThreads:ioThreadCPU:)``).
public enum ThreadAffinity {
    /// Pins the calling thread to one CPU.
    /// - Parameter cpu: the CPU's number, from 0.
    /// - Returns: `false` when the kernel refused (a CPU the process may not use); the thread
    ///   then runs where it did.
    @discardableResult
    public static func pinCurrentThread(to cpu: Int32) -> Bool {
        czmq_pin_thread(cpu) == 0
    }
}
