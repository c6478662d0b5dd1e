import Foundation
@_spi(Testing) import StateBus
import Testing

@Suite("Persistence failures: each gives an error naming the file and what to do")
struct PersistenceFailureTests {
    @Test("a full disk at commit: writers hear persistenceFailed, the host and views keep the stored value")
    func diskFull() async throws {
        let folder = Fixtures.temporaryFolder()
        let path = "\(folder)/settings.sqlite"
        let host = try await PersistenceTests.host(folder)
        defer { host.stop() }
        let replica = try await Fixtures.liveReplica("Settings", of: host)
        defer { replica.close() }
        _ = try await replica.write("theme", to: "dark").accepted()
        try await host.fillDiskForTesting()

        // A view's write that needs room: refused once the commit fails, and undone.
        let large = Value.string(String(repeating: "x", count: 64_000))
        let error = await #expect(throws: StateBusError.self) { try await replica.write("theme", to: large).accepted() }
        #expect(error?.code == .persistenceFailed)
        // The answer names what it refused, as every other rejection of a write does.
        #expect(error?.object == "Settings")
        #expect(error?.property == "theme")
        #expect(error?.message.contains(path) == true)
        #expect(error?.message.contains("the disk is full") == true)
        #expect(host.value(of: "theme", in: "Settings") == "dark")
        try await replica.waitFor(timeout: .seconds(20), "the view back on the stored value") {
            $0["theme"] == "dark" && $0.pendingWriteCount == 0
        }

        // The host's own durable set fails the same way; a plain set is undone by its commit.
        let hostError = await #expect(throws: StateBusError.self) { try await host.updateDurably("theme", to: large, in: "Settings") }
        #expect(hostError?.code == .persistenceFailed)
        try host.update("theme", to: large, in: "Settings")
        // A change to a property that is not persisted still succeeds in the failing round.
        try await host.updateDurably("draft", to: "kept", in: "Settings")
        #expect(host.value(of: "theme", in: "Settings") == "dark")
        #expect(host.value(of: "draft", in: "Settings") == "kept")
        #expect(host.statistics.writesRejected == 1)

        // The host keeps serving and tries the disk again: a write that fits is durable.
        _ = try await replica.write("theme", to: "light").accepted()
        host.stop()
        let restarted = try await PersistenceTests.host(folder)
        defer { restarted.stop() }
        #expect(restarted.value(of: "theme", in: "Settings") == "light")
    }

    @Test("a second host on the same file is refused, naming the file")
    func locked() async throws {
        let folder = Fixtures.temporaryFolder()
        let first = try await PersistenceTests.host(folder)
        defer { first.stop() }
        let error = await #expect(throws: PersistenceError.self) {
            _ = try await StateHost(
                objects: [PersistenceTests.settings],
                configuration: HostConfiguration(
                    name: "other", controlEndpoint: "ipc://\(folder)/other", persistence: .file("\(folder)/settings.sqlite")))
        }
        #expect(error?.kind == .locked)
        #expect(error?.description.contains("\(folder)/settings.sqlite") == true)
        #expect(error?.description.contains("another host (pid \(getpid()))") == true)
    }

    @Test("a corrupt file is refused with what to do")
    func corrupt() async throws {
        let folder = Fixtures.temporaryFolder()
        try Data(repeating: 0x5A, count: 8192).write(to: URL(fileURLWithPath: "\(folder)/settings.sqlite"))
        let error = await #expect(throws: PersistenceError.self) { _ = try await PersistenceTests.host(folder) }
        #expect(error?.kind == .corrupt)
        #expect(error?.description.contains("move it aside") == true)
    }

    @Test("a path that cannot be created is refused, naming it")
    func cannotOpen() async throws {
        let error = await #expect(throws: PersistenceError.self) {
            _ = try await StateHost(
                objects: [PersistenceTests.settings],
                configuration: HostConfiguration(
                    name: "x", controlEndpoint: "ipc://\(Fixtures.temporaryFolder())/c", persistence: .file("/proc/statebus/x.sqlite")))
        }
        #expect(error?.description.contains("/proc/statebus") == true)
    }

    @Test("an unreadable stored row is reported and skipped: the host starts with the other values")
    func unreadableRow() async throws {
        let folder = Fixtures.temporaryFolder()
        let path = "\(folder)/settings.sqlite"
        do {
            let store = try SQLitePropertyStore(path: path)
            try store.save([StoredProperty(object: "Settings", property: "theme", value: "dark", version: 2)])
            // Not a value: a damaged row of a served object, and one of an object nobody serves.
            try store.storeRawForTesting(object: "Settings", property: "notifications", bytes: [0xFF, 0xFF, 0xFF])
            try store.storeRawForTesting(object: "Elsewhere", property: "x", bytes: [0x0A, 0xFF])
            store.close()
        }
        let log = CapturedLog()
        let host = try await StateHost(
            objects: [PersistenceTests.settings],
            configuration: HostConfiguration(
                name: "settings", controlEndpoint: "ipc://\(folder)/control", persistence: .file(path), logger: log.logger))
        defer { host.stop() }
        #expect(host.value(of: "theme", in: "Settings") == "dark")
        #expect(host.value(of: "notifications", in: "Settings") == true)  // the default
        let warnings = log.messages.filter { $0.level == .warning }.map(\.message)
        #expect(warnings.contains { $0.contains("Settings.notifications") && $0.contains(path) && $0.contains("starts from its default true") })
        #expect(warnings.contains { $0.contains("Elsewhere.x") && $0.contains("not served by this host") })
        // Written again, the row is whole.
        try await host.updateDurably("notifications", to: false, in: "Settings")
        let stored = try SQLitePropertyStore(path: path, readOnly: true).load()
        #expect(stored.properties.contains { $0.property == "notifications" && $0.value == false })
        #expect(stored.unreadable.map(\.property) == ["x"])
    }
}
