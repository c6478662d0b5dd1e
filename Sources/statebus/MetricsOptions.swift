import ArgumentParser
import Foundation
import StateBusCommandLine
import StateBusPrometheus
import StateBusRuntime

/// `--metrics HOST:PORT`, shared by the long-running commands (`host`, `relay`, `node`,
/// `watch`, `view`, `load`): serves what the process records at `http://HOST:PORT/metrics`
/// in the Prometheus text format, and prints `metrics=URL` once it listens.
struct MetricsOptions: ParsableArguments {
    @Option(
        name: .long,
        help: ArgumentHelp(
            "Serve metrics in the Prometheus text format at http://HOST:PORT/metrics (port 0 picks a free one; the URL is printed as metrics=URL).",
            valueName: "HOST:PORT"))
    var metrics: String?

    func validate() throws {
        guard let metrics else { return }
        do {
            _ = try HTTPListenAddress(parsing: metrics)
        } catch {
            throw ValidationError("--metrics \(error)")
        }
    }

    /// The endpoint `--metrics` asks for, made now: it bootstraps the metrics backend, which
    /// must happen before the host, relay or replicas that record are created.
    func endpoint() throws -> MetricsEndpoint? {
        try metrics.map { try MetricsEndpoint(address: $0) }
    }

    /// Prints `metrics=URL` once `endpoint` listens (it is started elsewhere: as one of the
    /// command's services, or by ``serveInBackground(_:)``).
    func announce(_ endpoint: MetricsEndpoint?) {
        guard let endpoint else { return }
        Task {
            let port = try await endpoint.waitUntilBound(timeout: .seconds(30))
            var address = endpoint.address
            address.port = port
            emit("metrics=http://\(address)/metrics")
        }
    }

    /// Serves `endpoint` in a task of its own (for commands that run no service group), and
    /// announces it; a server that cannot listen ends the command with the reason.
    func serveInBackground(_ endpoint: MetricsEndpoint?) {
        guard let endpoint else { return }
        announce(endpoint)
        Task {
            do {
                try await endpoint.run()
            } catch {
                FileHandle.standardError.write(Data("statebus: \(error)\n".utf8))
                Foundation.exit(1)
            }
        }
    }
}
