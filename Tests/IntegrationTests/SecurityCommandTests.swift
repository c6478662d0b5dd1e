import Foundation
import StateBus
import StateBusTesting
import Testing

/// Issue 13 from the command line: `statebus keygen`, key files others may read, and the
/// secure default for network endpoints.
@Suite("Keys and secure defaults from the command line")
struct SecurityCommandTests {
    @Test("keygen writes NAME.key (0600) and NAME.pub, prints the public key, and refuses to overwrite without --force")
    func keygen() async throws {
        try await withTestSystem { system in
            let out = system.path("keys")
            let first = try system.startProcess(executable: system.statebus, arguments: ["keygen", "view", "--out", out], name: "keygen")
            #expect(await first.exitStatus() == 0, "\(first.output)")
            let publicKey = try CurveKeyFile.loadPublic(at: "\(out)/view.pub")
            #expect(first.output.contains(publicKey), "prints the public key: \(first.output)")
            let secret = try CurveKeyFile.loadSecret(at: "\(out)/view.key")
            #expect(secret.publicKey == publicKey)

            let again = try system.startProcess(executable: system.statebus, arguments: ["keygen", "view", "--out", out], name: "keygen-again")
            #expect(await again.exitStatus() != 0)
            #expect(again.output.joined(separator: "\n").contains("exists already"), "\(again.output)")
            #expect(try CurveKeyFile.loadSecret(at: "\(out)/view.key") == secret, "the key was not replaced")

            let forced = try system.startProcess(
                executable: system.statebus, arguments: ["keygen", "view", "--out", out, "--force"], name: "keygen-force")
            #expect(await forced.exitStatus() == 0, "\(forced.output)")
            #expect(try CurveKeyFile.loadSecret(at: "\(out)/view.key") != secret)
        }
    }

    @Test("a host or a view given a secret key file with mode 0644 refuses it, naming the mode")
    func looseKeyRefused() async throws {
        try await withTestSystem { system in
            let keys = try TestKeys(folder: system.folder)
            let view = try keys.client("view")
            try keys.authorize([("read", view, "view")])
            chmod(keys.hostKeyFile, 0o644)
            let host = try system.startProcess(
                executable: system.statebus,
                arguments: [
                    "host", "--control", "tcp://127.0.0.1:*", "--object", "Profile", "--property", "name:string=", "--no-persistence",
                    "--key", keys.hostKeyFile, "--authorized", keys.authorizedFile
                ], name: "loose-host")
            #expect(await host.exitStatus() != 0)
            #expect(host.output.joined(separator: "\n").contains("0644"), "\(host.output)")

            chmod("\(keys.folder)/view.key", 0o644)
            let get = try system.startProcess(
                executable: system.statebus,
                arguments: [
                    "get", "--control", "tcp://127.0.0.1:9", "--object", "Profile", "name", "--key", "\(keys.folder)/view.key", "--host-key",
                    keys.hostPublicFile
                ], name: "loose-view")
            #expect(await get.exitStatus() != 0)
            #expect(get.output.joined(separator: "\n").contains("0644"), "\(get.output)")
        }
    }

    @Test("a host refuses a non-loopback tcp endpoint without keys, naming both ways out; --insecure starts it with a warning")
    func nonLoopbackRefused() async throws {
        try await withTestSystem { system in
            let arguments = ["host", "--control", "tcp://0.0.0.0:*", "--object", "Profile", "--property", "name:string=", "--no-persistence"]
            let refused = try system.startProcess(executable: system.statebus, arguments: arguments, name: "exposed")
            #expect(await refused.exitStatus() != 0)
            let output = refused.output.joined(separator: "\n")
            #expect(output.contains("--key") && output.contains("--authorized") && output.contains("--insecure"), "\(output)")

            let insecure = try system.startProcess(executable: system.statebus, arguments: arguments + ["--insecure"], name: "insecure")
            try await insecure.waitForLine("its ready line", timeout: .seconds(60)) { $0.contains("ready control=") }
            #expect(insecure.output.contains { $0.contains("INSECURE") }, "\(insecure.output)")

            // Loopback tcp is every local user's: refused without keys too, naming the way out.
            // ipc stays key-less by default: the runtime folder is this user's alone.
            let loopback = try system.startProcess(
                executable: system.statebus,
                arguments: ["host", "--control", "tcp://127.0.0.1:*", "--object", "Profile", "--property", "name:string=", "--no-persistence"],
                name: "loopback")
            #expect(try await loopback.exited(timeout: .seconds(60)) != 0)
            #expect(
                loopback.output.contains { $0.contains("refusing to serve tcp://127.0.0.1:*") && $0.contains("--insecure") }, "\(loopback.output)")
            let local = try system.startProcess(
                executable: system.statebus,
                arguments: [
                    "host", "--control", "ipc://\(system.folder)/local", "--object", "Profile", "--property", "name:string=", "--no-persistence"
                ],
                name: "local")
            try await local.waitForLine("its ready line", timeout: .seconds(60)) { $0.contains("ready control=") }
            #expect(!local.output.contains { $0.contains("INSECURE") })
        }
    }
}

/// Issue 13, launch files: key files named per node, passed to the nodes as paths.
@Suite("Launch files with keys")
struct SecureLaunchTests {
    @Test("a launch file names key files per node (relative to the file); the host starts with keys, and its view joins with its own")
    func launchWithKeys() async throws {
        try await withTestSystem { system in
            let keys = try TestKeys(folder: system.path("keys"))
            let view = try keys.client("view")
            try keys.authorize([("write", view, "view")])
            let yaml = """
                name: secure
                nodes:
                  - name: host
                    role: host
                    objects: [Profile]
                    control: \(system.endpoint("secure.control"))
                    key: keys/host.key
                    authorized: keys/authorized.keys
                    executable: statebus
                    arguments: [host, --object, Profile, --property, "name:string=anna", --no-persistence, --heartbeat-ms, "200"]
                  - name: view
                    role: view
                    objects: [Profile]
                    key: keys/view.key
                    executable: statebus
                    arguments: [watch, --json]
                """
            let file = system.path("secure.yaml")
            try yaml.write(toFile: file, atomically: true, encoding: .utf8)
            let launch = try system.startProcess(executable: system.statebus, arguments: ["launch", file], name: "launch")
            try await launch.waitForLine("the view live with its key", timeout: .seconds(60)) {
                $0.hasPrefix("view |") && $0.contains(#""connection":"live""#)
            }
            #expect(launch.output.contains { $0.contains("CURVE on") }, "the host runs with keys: \(launch.output.suffix(20))")
            #expect(!launch.output.contains { $0.contains(view.secretKey) || $0.contains(keys.host.secretKey) }, "no secret key in any output")
            // The host's list of connected views names the view's key as the keys file does.
            let listed = try await ConnectedView.list(controlEndpoint: system.endpoint("secure.control"), security: keys.security(view))
            #expect(listed.views.map(\.keyName) == ["view"], "\(listed)")

            // SIGHUP to the launcher reaches the host, which re-reads its authorized keys and
            // cuts the removed view off.
            try keys.authorize([("read", try keys.client("other"), "other")])
            let mark = launch.lineCount
            launch.signal(SIGHUP)
            try await launch.waitForLine("the host's reload", after: mark, timeout: .seconds(30)) {
                $0.hasPrefix("host |") && $0.contains("1 added, 1 removed")
            }
            try await launch.waitForLine("the removed view going stale", after: mark, timeout: .seconds(30)) {
                $0.hasPrefix("view |") && $0.contains(#""connection":"stale""#)
            }
            #expect(launch.isRunning, "SIGHUP does not stop the launcher")
        }
    }
}
