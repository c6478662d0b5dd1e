import Foundation
import StateBus
import StateBusTesting
import ZeroMQ

/// Keys for a test: the host's and a few clients', written as `statebus keygen` does, and
/// an authorized keys file to list them in.
struct TestKeys {
    let folder: String
    let host: CurveKeyPair

    init(folder: String) throws {
        self.folder = folder
        host = try CurveKeyPair.generate()
        try CurveKeyFile.write(host, name: "host", in: folder)
    }

    var hostKeyFile: String { "\(folder)/host.key" }
    var hostPublicFile: String { "\(folder)/host.pub" }
    var authorizedFile: String { "\(folder)/authorized.keys" }

    /// A new client key pair, written as NAME.key and NAME.pub.
    func client(_ name: String) throws -> CurveKeyPair {
        let keys = try CurveKeyPair.generate()
        try CurveKeyFile.write(keys, name: name, in: folder)
        return keys
    }

    /// Writes the authorized keys file (replacing it): one `ROLE KEY NAME` line per entry.
    func authorize(_ entries: [(role: String, keys: CurveKeyPair, name: String)]) throws {
        let text = "# test clients\n" + entries.map { "\($0.role) \($0.keys.publicKey) \($0.name)" }.joined(separator: "\n") + "\n"
        let temporary = authorizedFile + ".new"
        try text.write(toFile: temporary, atomically: false, encoding: .utf8)
        chmod(temporary, 0o644)
        rename(temporary, authorizedFile)
    }

    /// The CURVE settings of a replica holding `keys`.
    func security(_ keys: CurveKeyPair, hostKey: String? = nil) -> ReplicaSecurity {
        ReplicaSecurity(keys: keys, hostPublicKey: hostKey ?? host.publicKey)
    }
}

/// A `statebus host` process on `tcp://127.0.0.1:*`, with its endpoints read from its ready
/// line.
struct TcpHost {
    let process: NodeProcess
    let control: String
    let updates: String

    /// Starts `statebus host` serving `Profile` (name, count) and waits for its ready line.
    /// - Parameter arguments: more arguments, such as `--key` and `--authorized`.
    static func start(in system: TestSystem, name: String = "host", arguments: [String]) async throws -> TcpHost {
        let process = try system.startProcess(
            executable: system.statebus,
            arguments: [
                "host", "--name", name, "--control", "tcp://127.0.0.1:*", "--object", "Profile", "--property", "name:string=anna",
                "--property", "count:int=0", "--heartbeat-ms", "200", "--no-persistence"
            ] + arguments, name: name)
        let ready = try await process.waitForLine("its ready line", timeout: .seconds(60)) { $0.contains("ready control=") }
        func field(_ key: String) -> String {
            ready.split(separator: " ").first { $0.hasPrefix(key + "=") }.map { String($0.dropFirst(key.count + 1)) } ?? ""
        }
        return TcpHost(process: process, control: field("control"), updates: field("updates"))
    }

    /// A replica of `Profile` in the test process, adopted by `system` (not waited on).
    func replica(in system: TestSystem, security: ReplicaSecurity?, viewID: String? = nil, control: String? = nil) throws -> Replica {
        var configuration = ReplicaConfiguration(nodeName: "test", requestTimeout: .seconds(2), writeTimeout: .seconds(20))
        configuration.security = security
        if let viewID { configuration.viewID = viewID }
        return try system.adopt(try Replica(object: "Profile", controlEndpoint: control ?? self.control, configuration: configuration))
    }
}
