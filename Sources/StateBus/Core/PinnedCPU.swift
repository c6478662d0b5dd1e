import ZeroMQ

/// Checks a low-latency profile's CPU (``HostConfiguration/pinnedCPU``,
/// ``ReplicaConfiguration/pinnedCPU``) before anything is pinned: the kernel refuses a CPU
/// the process may not use, and the threads would then run unpinned without a word.
enum PinnedCPU {
    /// - Parameter setting: the setting's name, for the message.
    /// - Throws: `badRequest` naming the CPU, the CPUs this process may use, and what to do.
    static func check(_ cpu: Int32?, setting: String) throws(StateBusError) {
        guard let cpu, !ThreadAffinity.isAllowed(cpu) else { return }
        let allowed = ThreadAffinity.allowedCPUs.map(String.init).joined(separator: ", ")
        throw StateBusError(
            .badRequest,
            "\(setting) is \(cpu), a CPU this process may not run on (it may use: \(allowed)); give one of those, or nil (no pinning)")
    }
}
