import Foundation
import StateBus
import StateBusDemo
import StateBusTesting
import Testing
import ZeroMQ

/// Host actions (`@Action`) with real processes: the demo's profile host (`statebus node
/// profile --role host`), whose `rename(to:)` refuses a blank name, called from a model
/// replica in this process, from `statebus call`, and through a relay.
@Suite("Actions: a view calls a method that runs on the host")
struct ActionProcessTests {

    /// Starts the profile demo's host in a new private folder.
    static func profileHost() async throws -> (host: NodeProcess, control: String, folder: String) {
        let folder = "/tmp/sba-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let control = "ipc://\(folder)/profile"
        let host = try NodeProcess(
            executable: try BuiltProducts.executable("statebus"),
            arguments: ["node", "profile", "--role", "host", "--control", control, "--database", "\(folder)/profile.sqlite"], name: "host")
        try await host.waitForLine("the host ready") { $0.hasPrefix("ready ") }
        return (host, control, folder)
    }

    @Test("the result comes back, the caller holds the change when the call returns, other views converge; failures name their reason")
    @MainActor
    func callFromAModel() async throws {
        let (host, control, folder) = try await Self.profileHost()
        defer {
            host.terminate()
            try? FileManager.default.removeItem(atPath: folder)
        }
        let other = try NodeProcess(
            executable: try BuiltProducts.executable("statebus"), arguments: ["watch", "--json", "--control", control, "--object", "Profile"],
            name: "other view")
        defer { other.terminate() }
        try await other.waitForLine("the other view's first state") { $0.contains(#""username":"anna""#) }

        let profile = try await ProfileViewModel.replica(controlEndpoint: control)
        defer { profile.connection.detach() }
        let previous = try await profile.rename(to: "carol")
        #expect(previous == "anna")
        // Read at once, with no wait: the call returned only once this view held the change.
        #expect(profile.user.username == "carol")
        try await other.waitForLine("the other view sees the action's change") { $0.contains(#""username":"carol""#) }
        let loaded = try await profile.loadUser()
        #expect(loaded == User(username: "carol", email: "anna@example.com"))
        #expect(profile.isLoading == false)

        // The action throws: the caller gets its reason, and nothing changed.
        do {
            _ = try await profile.rename(to: "   ")
            Issue.record("a blank name was accepted")
        } catch let error as StateBusError {
            #expect(error.code == .actionFailed)
            #expect(error.message.contains("a username cannot be blank"), "\(error)")
        }
        #expect(profile.user.username == "carol")

        // The untyped form: an unknown action, the wrong count, the wrong type.
        let replica = try Replica(object: "Profile", controlEndpoint: control)
        defer { replica.close() }
        try await replica.waitUntilLive()
        let refusals: [(action: String, arguments: [Value], code: StateBusError.Code, mentions: String)] = [
            ("launch", [], .unknownAction, "has no action 'launch'; it has: loadUser() -> User, rename(to: String) -> String"),
            ("rename", [], .unknownAction, "takes 1 argument(s), the call has 0"),
            ("rename", [.int(7)], .typeMismatch, "argument 'to' of rename should be a String")
        ]
        for refusal in refusals {
            do {
                _ = try await replica.call(refusal.action, arguments: refusal.arguments)
                Issue.record("\(refusal.action) with \(refusal.arguments) was not refused")
            } catch {
                #expect(error.code == refusal.code, "\(error)")
                #expect(error.message.contains(refusal.mentions), "\(error)")
            }
        }
        let previousName = try await replica.call("rename", arguments: [.string("dora")])
        let carol: Value = .string("carol")
        #expect(previousName == carol)
        guard case .map(let user)? = replica.values["user"] else {
            Issue.record("no user in \(replica.values)")
            return
        }
        let dora: Value = .string("dora")
        #expect(user["username"] == dora, "the replica holds the change when the call returns: \(user)")
    }

    @Test("statebus call prints the result or the refusal, statebus objects lists the actions, and a relay forwards calls")
    func fromTheCommandLineAndThroughARelay() async throws {
        let (host, control, folder) = try await Self.profileHost()
        defer {
            host.terminate()
            try? FileManager.default.removeItem(atPath: folder)
        }
        var run = try await runStatebus(["objects", "--control", control])
        #expect(run.output.contains("  action rename(to: String) -> String"), "\(run.output)")
        #expect(run.output.contains("  action loadUser() -> User"), "\(run.output)")

        run = try await runStatebus(["call", "--control", control, "--object", "Profile", "rename", #"["erin"]"#])
        #expect(run.status == 0, "\(run.output)")
        #expect(run.output.last == #""anna""#, "\(run.output)")
        run = try await runStatebus(["get", "--control", control, "--object", "Profile", "user.username"])
        #expect(run.output.last == #""erin""#, "\(run.output)")

        run = try await runStatebus(["call", "--control", control, "--object", "Profile", "rename", #"[""]"#, "--json"])
        #expect(run.status == 1)
        #expect(run.output.contains { $0.contains(#""code":"actionFailed""#) && $0.contains("cannot be blank") }, "\(run.output)")
        run = try await runStatebus(["call", "--control", control, "--object", "Profile", "rename", #""erin""#])
        #expect(run.status != 0)
        #expect(run.output.contains { $0.contains("must be a JSON array") }, "\(run.output)")

        let relayControl = "ipc://\(folder)/relay"
        let relay = try NodeProcess(
            executable: try BuiltProducts.executable("statebus"), arguments: ["relay", "--upstream", control, "--control", relayControl],
            name: "relay")
        defer { relay.terminate() }
        try await relay.waitForLine("the relay ready") { $0.hasPrefix("ready ") }
        run = try await runStatebus(["call", "--control", relayControl, "--object", "Profile", "rename", #"["fay"]"#])
        #expect(run.status == 0, "\(run.output)")
        #expect(run.output.last == #""erin""#, "\(run.output)")
        run = try await runStatebus(["call", "--control", relayControl, "--object", "Profile", "rename", #"[" "]"#])
        #expect(run.status == 1)
        #expect(run.output.contains { $0.contains("cannot be blank") }, "the host's reason through the relay: \(run.output)")
        run = try await runStatebus(["get", "--control", relayControl, "--object", "Profile", "user.username"])
        #expect(run.output.last == #""fay""#, "\(run.output)")
    }

    @Test("with keys, calling an action takes the right to write the object: a read key is refused, a write key's call runs")
    func keysDecideWhoMayCall() async throws {
        try await withTestSystem { system in
            let keys = try TestKeys(folder: system.folder)
            let (reader, writer) = (try keys.client("reader"), try keys.client("writer"))
            try keys.authorize([("read", reader, "reader"), ("write", writer, "writer")])
            let host = try system.startProcess(
                executable: system.statebus,
                arguments: [
                    "node", "profile", "--role", "host", "--control", "tcp://127.0.0.1:*", "--database", "\(system.folder)/profile.sqlite",
                    "--key", keys.hostKeyFile, "--authorized", keys.authorizedFile
                ], name: "host")
            let ready = try await host.waitForLine("the host's ready line", timeout: .seconds(60)) { $0.contains("ready control=") }
            let control = try #require(ready.split(separator: " ").first { $0.hasPrefix("control=") }.map { String($0.dropFirst("control=".count)) })
            func replica(_ client: CurveKeyPair) throws -> Replica {
                var configuration = ReplicaConfiguration(nodeName: "test")
                configuration.security = keys.security(client)
                return try system.adopt(try Replica(object: "Profile", controlEndpoint: control, configuration: configuration))
            }
            let reading = try replica(reader)
            let writing = try replica(writer)
            try await reading.waitUntilLive(timeout: .seconds(30))
            try await writing.waitUntilLive(timeout: .seconds(30))
            do {
                _ = try await reading.call("rename", arguments: [.string("eve")])
                Issue.record("a read key's call ran")
            } catch let error as StateBusError {
                #expect(error.code == .forbidden, "\(error)")
                #expect(error.message.contains("reader"), "names the key: \(error)")
            }
            let previous = try await writing.call("rename", arguments: [.string("wes")])
            let anna: Value = .string("anna")
            #expect(previous == anna, "the forbidden call changed nothing")
        }
    }
}
