import Foundation
import StateBus
import Testing
import ZeroMQ

/// The low-latency profile (`pinnedCPU`) through the public API: a host and a view pinned to
/// one CPU serve and write as unpinned ones do; a CPU the process may not use is refused.
@Suite("Low-latency profile: pinned to one CPU")
struct LowLatencyProfileTests {
    @Test("a host and a view pinned to one CPU join, write and echo")
    func pinnedHostAndView() async throws {
        let cpu = try #require(ThreadAffinity.allowedCPUs.first)
        let folder = Fixtures.temporaryFolder()
        var configuration = HostConfiguration(name: "pinned", controlEndpoint: "ipc://\(folder)/control", persistence: .disabled)
        configuration.pinnedCPU = cpu
        let host = try await StateHost(objects: [Fixtures.sharedData], configuration: configuration)
        defer { host.stop() }
        var viewConfiguration = ReplicaConfiguration(nodeName: "pinned-view")
        viewConfiguration.pinnedCPU = cpu
        let replica = try Replica(object: "SharedData", controlEndpoint: host.controlEndpoint, configuration: viewConfiguration)
        defer { replica.close() }
        try await replica.waitUntilLive(timeout: .seconds(20))
        let sequence = try await replica.write("counter", to: .int(7)).accepted()
        #expect(sequence > 0)
        #expect(host.value(of: "counter", in: "SharedData") == .int(7))
        try await replica.waitFor(timeout: .seconds(20), "the echo") { $0.pendingWriteCount == 0 && $0["counter"] == .int(7) }
    }

    @Test("a CPU this process may not run on is refused before anything starts, naming the setting and the CPUs it may use")
    func unusableCPU() async throws {
        let folder = Fixtures.temporaryFolder()
        var configuration = HostConfiguration(name: "pinned", controlEndpoint: "ipc://\(folder)/control", persistence: .disabled)
        configuration.pinnedCPU = 4096
        let hostError = await #expect(throws: StateBusError.self) {
            _ = try await StateHost(objects: [Fixtures.sharedData], configuration: configuration)
        }
        #expect(hostError?.code == .badRequest)
        #expect(hostError?.message.contains("HostConfiguration.pinnedCPU is 4096") == true, "\(String(describing: hostError))")
        #expect(
            hostError?.message.contains("it may use: \(ThreadAffinity.allowedCPUs.map(String.init).joined(separator: ", ")))") == true,
            "\(String(describing: hostError))")

        var viewConfiguration = ReplicaConfiguration()
        viewConfiguration.pinnedCPU = -1
        let viewError = #expect(throws: StateBusError.self) {
            _ = try Replica(object: "SharedData", controlEndpoint: "ipc://\(folder)/control", configuration: viewConfiguration)
        }
        #expect(viewError?.code == .badRequest)
        #expect(viewError?.message.contains("ReplicaConfiguration.pinnedCPU is -1") == true, "\(String(describing: viewError))")
    }
}
