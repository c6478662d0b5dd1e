import Logging
import ServiceLifecycle

/// Runs a command's hosts, relays or inspector as services (swift-service-lifecycle) until
/// SIGINT or SIGTERM shuts the group down gracefully: each stops with its last work done
/// (a host's last commit and publication).
///
/// The signals are trapped by `stop`, made at the start of the command, not by the group
/// itself: the group installs its handlers only when it runs, so a signal that came while a
/// host was still opening its database would end the process the hard way.
/// - Throws: what a service throws.
package func runServices(_ services: [any Service], stoppingOn stop: SignalTrap) async throws {
    let group = ServiceGroup(
        configuration: ServiceGroupConfiguration(services: services.map { .init(service: $0) }, logger: Logger(label: "statebus.services")))
    let shutdown = Task {
        await stop.wait()
        await group.triggerGracefulShutdown()
    }
    defer { shutdown.cancel() }
    try await group.run()
}
