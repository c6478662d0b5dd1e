import Foundation
@_spi(Testing) import StateBus
import StateBusTesting
import Testing

/// The host's database locked by another process, and on a full disk, while durable writes
/// arrive: each such write fails with an error naming the file, none is acknowledged, and
/// everything else the host does goes on.
@Suite("Disk faults while durable writes arrive")
struct DiskFaultTests {
    /// A `statebus host` serving Settings (`theme` persisted, `draft` not) on a database in
    /// `folder`.
    static func startHost(in folder: String, database: String, arguments: [String] = []) async throws -> NodeProcess {
        let host = try NodeProcess(
            executable: try BuiltProducts.executable("statebus"),
            arguments: [
                "host", "--control", "ipc://\(folder)/control", "--object", "Settings", "--property", "theme:string~=light",
                "--property", "draft:string=", "--property", "blob:string~=", "--database", database, "--heartbeat-ms", "200"
            ] + arguments,
            name: "host")
        try await host.waitForLine("the host ready") { $0.hasPrefix("ready ") }
        return host
    }

    /// A fresh folder for a test's sockets and files (short: ipc paths are limited).
    static func temporaryFolder() throws -> String {
        let folder = "/tmp/sbd-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        return folder
    }

    /// What `statebus get` prints for a property (as JSON: a string in quotes): a read
    /// through a view of its own.
    static func get(_ property: String, in folder: String) async throws -> String? {
        let get = try NodeProcess(
            executable: try BuiltProducts.executable("statebus"),
            arguments: ["get", "--control", "ipc://\(folder)/control", "--object", "Settings", property], name: "get")
        guard try await get.exited(timeout: .seconds(30)) == 0 else { return nil }
        return get.output.last
    }

    /// A replica of Settings in the test process, live.
    static func liveReplica(in folder: String) async throws -> Replica {
        let replica = try Replica(object: "Settings", controlEndpoint: "ipc://\(folder)/control")
        do {
            try await replica.waitUntilLive(timeout: .seconds(30))
        } catch {
            replica.close()
            throw error
        }
        return replica
    }

    /// What the file holds for a property, read as `statebus persisted` does.
    static func stored(_ property: String, in database: String) throws -> Value? {
        try SQLitePropertyStore(path: database, readOnly: true).loadAll().first { $0.property == property }?.value
    }

    static func verdict(_ receipt: WriteReceipt) async -> Result<UInt64, StateBusError> {
        do {
            return .success(try await receipt.accepted())
        } catch let error as StateBusError {
            return .failure(error)
        } catch {
            return .failure(StateBusError(.other, "\(error)"))
        }
    }

    @Test(
        "a commit waiting for another process's lock holds only its own write: reads and joins go on, and the write is acknowledged once the lock is gone"
    )
    func lockedWhileServing() async throws {
        let folder = try Self.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let database = "\(folder)/settings.sqlite"
        let host = try await Self.startHost(in: folder, database: database, arguments: ["--database-lock-timeout-ms", "120000"])
        defer { host.terminate() }
        let writer = try await Self.liveReplica(in: folder)
        defer { writer.close() }
        _ = try await writer.write("theme", to: "warm").accepted()

        let lock = try SQLiteWriteLock(path: database)
        defer { lock.release() }
        let receipt = writer.write("theme", to: "blocked")
        // A read shows the host applied the write (a snapshot holds the host's current
        // values) while its commit waits for the lock: the host answers it meanwhile.
        let deadline = ContinuousClock.now + .seconds(60)
        var read = try await Self.get("theme", in: folder)
        while read != #""blocked""#, ContinuousClock.now < deadline { read = try await Self.get("theme", in: folder) }
        #expect(read == #""blocked""#, "the host did not answer a read while its commit waited")
        let joiner = try await Self.liveReplica(in: folder)
        defer { joiner.close() }
        #expect(receipt.result == nil, "the write was answered while its commit could not have happened")
        #expect(try Self.stored("theme", in: database) == "warm")

        lock.release()
        let sequence = await Self.verdict(receipt)
        #expect((try? sequence.get()) != nil, "the write failed after the lock was released: \(sequence)")
        #expect(try Self.stored("theme", in: database) == "blocked")
    }

    @Test(
        "a commit that cannot get the lock in time fails its write with persistenceFailed naming the file; the host and views go back to the stored value"
    )
    func lockedPastTimeout() async throws {
        let folder = try Self.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let database = "\(folder)/settings.sqlite"
        let host = try await Self.startHost(in: folder, database: database, arguments: ["--database-lock-timeout-ms", "300"])
        defer { host.terminate() }
        let writer = try await Self.liveReplica(in: folder)
        defer { writer.close() }
        _ = try await writer.write("theme", to: "stored").accepted()

        let lock = try SQLiteWriteLock(path: database)
        let failed = await Self.verdict(writer.write("theme", to: "never"))
        lock.release()
        guard case .failure(let error) = failed else {
            Issue.record("a write was acknowledged while another process held the database: \(failed)")
            return
        }
        print("locked database: \(error)")
        #expect(error.code == .persistenceFailed)
        #expect(error.message.contains(database))
        #expect(error.message.contains("locked"))
        try await writer.waitFor(timeout: .seconds(30), "the view back at the stored value") { $0["theme"] == "stored" }
        #expect(try await Self.get("theme", in: folder) == #""stored""#)
        // The next write tries the disk again.
        _ = try await writer.write("theme", to: "after").accepted()
        #expect(try Self.stored("theme", in: database) == "after")
    }

    @Test("a full disk (a 1 MB tmpfs): durable writes fail with persistenceFailed naming the file, none acknowledged, other writes go on")
    func fullDisk() async throws {
        let folder = try Self.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let disk = "\(folder)/disk"
        try FileManager.default.createDirectory(atPath: disk, withIntermediateDirectories: true)
        let mount = try NodeProcess(
            executable: URL(fileURLWithPath: "/bin/mount"), arguments: ["-t", "tmpfs", "-o", "size=1m", "tmpfs", disk], name: "mount")
        guard try await mount.exited() == 0 else {
            print("full disk: skipped, a tmpfs cannot be mounted here (needs root): \(mount.output.joined(separator: " "))")
            return
        }
        defer { _ = try? NodeProcess(executable: URL(fileURLWithPath: "/bin/umount"), arguments: ["-l", disk], name: "umount").waitForExit() }
        let database = "\(disk)/settings.sqlite"
        let host = try await Self.startHost(in: folder, database: database)
        defer { host.terminate() }
        let writer = try await Self.liveReplica(in: folder)
        defer { writer.close() }
        let other = try await Self.liveReplica(in: folder)
        defer { other.close() }

        // 100 KB values, each different: the database and its log fill the disk in a few.
        var acknowledged = 0
        var failure: StateBusError?
        for index in 1...100 {
            let value = Value.string("\(index):" + String(repeating: "x", count: 100_000))
            switch await Self.verdict(writer.write("blob", to: value)) {
            case .success: acknowledged = index
            case .failure(let error): failure = error
            }
            if failure != nil { break }
        }
        print("full disk: \(acknowledged) writes of 100 KB acknowledged, then: \(failure.map(String.init(describing:)) ?? "no failure")")
        let error = try #require(failure, "100 writes of 100 KB fit on a 1 MB disk")
        #expect(error.code == .persistenceFailed)
        #expect(error.message.contains(database))
        #expect(error.message.contains("full"))
        // Other writes go on, and the host still holds the last acknowledged value.
        _ = try await other.write("draft", to: "still served").accepted()
        #expect(host.isRunning)
        let stored = try Self.stored("blob", in: database)
        let prefix = "\(acknowledged):"
        if case .string(let text)? = stored {
            #expect(text.hasPrefix(prefix), "the file holds another value than the last acknowledged one")
        } else {
            #expect(acknowledged == 0, "the file holds no value, but \(acknowledged) writes were acknowledged")
        }
        let noneAcknowledged = acknowledged == 0
        try await writer.waitFor(timeout: .seconds(30), "the view back at the stored value") { replica in
            guard case .string(let text)? = replica["blob"] else { return noneAcknowledged }
            return text.hasPrefix(prefix)
        }
    }
}
