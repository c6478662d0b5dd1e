import ArgumentParser
import ZeroMQ

/// `--pin-cpu`: the low-latency profile (see the Performance article of the documentation),
/// for the long-running processes where a round trip matters: `host`, `view` and `watch`.
struct LowLatencyOptions: ParsableArguments {
    @Option(
        name: .long,
        help: ArgumentHelp(
            "The low-latency profile: pin this process's I/O loop and libzmq I/O threads to this CPU.",
            discussion:
                "Give the host and its views the same CPU for the full effect (on 2 cores it about halves a round trip); the pinned threads never use another CPU."
        ))
    var pinCpu: Int32?

    func validate() throws {
        guard let cpu = pinCpu, !ThreadAffinity.isAllowed(cpu) else { return }
        let allowed = ThreadAffinity.allowedCPUs.map(String.init).joined(separator: ", ")
        throw ValidationError(
            "--pin-cpu \(cpu): this process may not run on CPU \(cpu); it may use \(allowed). Give one of those, or leave --pin-cpu out")
    }
}
