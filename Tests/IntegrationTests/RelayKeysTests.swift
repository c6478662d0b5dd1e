import Foundation
import StateBus
import StateBusTesting
import Testing
import ZeroMQ

/// A relay with CURVE keys on both sides: the host lists the relay's key with the role
/// `relay`, the relay lists its own views.
@Suite("Relays with keys")
struct RelayKeysTests {
    @Test(
        "a view the relay admits reads and writes through it; a view it does not list is refused; a relay key without the relay role is refused by the host"
    )
    func keysOnBothSides() async throws {
        try await withTestSystem { system in
            let keys = try TestKeys(folder: system.folder)
            let relayKeys = try keys.client("relay")
            let impostor = try keys.client("impostor")
            let viewKeys = try keys.client("view")
            let stranger = try keys.client("stranger")
            try keys.authorize([("relay", relayKeys, "relay"), ("write", impostor, "impostor")])
            // The relay's own authorized keys: its views.
            let relayAuthorized = system.path("relay-views.keys")
            try "write \(viewKeys.publicKey) view\n".write(toFile: relayAuthorized, atomically: true, encoding: .utf8)
            chmod(relayAuthorized, 0o644)
            let host = try await TcpHost.start(in: system, arguments: ["--key", keys.hostKeyFile, "--authorized", keys.authorizedFile])

            let relay = try system.startProcess(
                executable: system.statebus,
                arguments: [
                    "relay", "--upstream", host.control, "--key", "\(system.folder)/relay.key", "--host-key", keys.hostPublicFile,
                    "--control", "tcp://127.0.0.1:*", "--authorized", relayAuthorized
                ], name: "relay")
            let ready = try await relay.waitForLine("the relay ready", timeout: .seconds(60)) { $0.hasPrefix("ready ") }
            let relayControl = try #require(lineField("control", in: ready))

            // The admitted view writes through the relay; the host applies it.
            let view = try host.replica(
                in: system, security: ReplicaSecurity(keys: viewKeys, hostPublicKey: relayKeys.publicKey), viewID: "view-1", control: relayControl)
            try await view.waitUntilLive(timeout: .seconds(30))
            let sequence = try await view.write("count", to: 7).accepted()
            #expect(sequence > 0)
            let seven: Value = .int(7)
            try await view.waitFor(timeout: .seconds(20), "the view's own write confirmed") { $0.values["count"] == seven }

            // A view key the relay does not list gets nothing.
            let refused = try host.replica(
                in: system, security: ReplicaSecurity(keys: stranger, hostPublicKey: relayKeys.publicKey), control: relayControl)
            try await refused.waitFor(timeout: .seconds(30), "the stranger refused") { $0.lastError?.code == .forbidden }
            #expect(refused.connectionState != .live)

            // A key the host lists as a writer, not a relay, cannot relay.
            let wrongRole = try system.startProcess(
                executable: system.statebus,
                arguments: [
                    "relay", "--upstream", host.control, "--key", "\(system.folder)/impostor.key", "--host-key", keys.hostPublicFile,
                    "--control", system.endpoint("impostor.control")
                ], name: "impostor relay")
            try await wrongRole.waitForLine("the host's refusal in the impostor's log", timeout: .seconds(60)) {
                $0.contains("forbidden") && $0.contains("role relay")
            }
            #expect(!wrongRole.output.contains { $0.hasPrefix("ready ") })
        }
    }
}
