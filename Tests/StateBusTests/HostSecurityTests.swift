import Foundation
import StateBus
import Testing
import ZeroMQ

/// Issue 13 in one process: the secure default and the counting of forbidden requests.
@Suite("A host's keys, roles and secure default")
struct HostSecurityTests {
    static let objects = [ObjectDefinition("Profile", properties: [PropertyDefinition("name", default: "anna")])]

    @Test("a host refuses a tcp endpoint on a non-loopback address without keys, unless told allowsInsecureNetwork")
    func secureDefault() async throws {
        for endpoint in ["tcp://0.0.0.0:*", "tcp://*:*"] {
            let error = await #expect(throws: StateBusError.self) {
                let host = try await StateHost(
                    objects: Self.objects, configuration: HostConfiguration(controlEndpoint: endpoint, persistence: .disabled))
                host.stop()
            }
            #expect(error?.code == .unsafeEndpoint, "\(String(describing: error))")
            #expect(error?.message.contains("--insecure") == true, "\(String(describing: error))")
        }
        var configuration = HostConfiguration(controlEndpoint: "tcp://0.0.0.0:*", persistence: .disabled)
        configuration.allowsInsecureNetwork = true
        let host = try await StateHost(objects: Self.objects, configuration: configuration)
        host.stop()
        // Loopback is every local user's: a key-less host refuses it too. ipc is this user's alone.
        await #expect(throws: StateBusError.self) {
            _ = try await StateHost(
                objects: Self.objects, configuration: HostConfiguration(controlEndpoint: "tcp://127.0.0.1:*", persistence: .disabled))
        }
        let local = try await StateHost(
            objects: Self.objects, configuration: HostConfiguration(controlEndpoint: "ipc://\(Fixtures.temporaryFolder())/c", persistence: .disabled))
        local.stop()
    }

    @Test("a forbidden write is rejected, rolled back and counted; a malformed authorized keys file is refused at start with file:line")
    func forbiddenCounted() async throws {
        let folder = Fixtures.temporaryFolder()
        let (hostKeys, reader) = (try CurveKeyPair.generate(), try CurveKeyPair.generate())
        let authorized = "\(folder)/authorized.keys"
        try "read \(reader.publicKey) reader\n".write(toFile: authorized, atomically: true, encoding: .utf8)
        chmod(authorized, 0o644)  // whatever the umask: a group-writable file is refused
        var configuration = HostConfiguration(controlEndpoint: "tcp://127.0.0.1:*", persistence: .disabled)
        configuration.security = HostSecurity(keys: hostKeys, authorizedKeysFile: authorized)
        let host = try await StateHost(objects: Self.objects, configuration: configuration)
        defer { host.stop() }
        var replicaConfiguration = ReplicaConfiguration()
        replicaConfiguration.security = ReplicaSecurity(keys: reader, hostPublicKey: hostKeys.publicKey)
        let replica = try Replica(object: "Profile", controlEndpoint: host.controlEndpoint, configuration: replicaConfiguration)
        defer { replica.close() }
        try await replica.waitUntilLive(timeout: .seconds(20))
        await #expect(throws: StateBusError.self) { _ = try await replica.write("name", to: "eve").accepted() }
        #expect(replica["name"] == "anna")
        #expect(host.statistics.forbiddenRequests == 1)
        #expect(host.value(of: "name", in: "Profile") == "anna")

        try "read \(reader.publicKey) reader\nwrite nonsense x\n".write(toFile: authorized, atomically: true, encoding: .utf8)
        chmod(authorized, 0o644)
        let error = await #expect(throws: AuthorizedKeysError.self) { try await host.reloadAuthorizedKeys() }
        #expect(error?.line == 2, "\(String(describing: error))")
        let startError = await #expect(throws: AuthorizedKeysError.self) {
            let other = try await StateHost(objects: Self.objects, configuration: configuration)
            other.stop()
        }
        #expect(startError?.description.hasPrefix("\(authorized):2:") == true, "\(String(describing: startError))")
    }
}
