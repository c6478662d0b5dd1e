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

    /// Whether this process may run on `cpu` (its affinity mask, as `taskset` or a cgroup
    /// set it): what a thread can be pinned to.
    public static func isAllowed(_ cpu: Int32) -> Bool { czmq_cpu_allowed(cpu) == 1 }

    /// How many CPUs the calling thread may run on (at least 1): 1 for a thread pinned to one.
    public static var currentThreadCPUCount: Int { Int(czmq_thread_cpu_count()) }

    /// The CPUs this process may run on, for messages.
    public static var allowedCPUs: [Int32] { (0..<1024).filter(isAllowed) }
}
