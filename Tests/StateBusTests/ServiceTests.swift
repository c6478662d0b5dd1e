import ServiceLifecycle
import StateBus
import Testing

@Suite("Hosts and relays as services")
struct ServiceTests {
    @Test("a host in a service group serves until a graceful shutdown, then stops")
    func hostAsAService() async throws {
        let host = try await Fixtures.host()
        let group = ServiceGroup(configuration: ServiceGroupConfiguration(services: [.init(service: host)], logger: .init(label: "test")))
        let running = Task { try await group.run() }
        let replica = try Replica(object: "SharedData", controlEndpoint: host.controlEndpoint)
        defer { replica.close() }
        try await replica.waitUntilLive()
        var changes = host.changes(of: "SharedData").makeAsyncIterator()
        await group.triggerGracefulShutdown()
        try await running.value
        // Stopped: the change stream ends (it would wait forever on a host still serving).
        #expect(await changes.next() == nil)
    }
}
