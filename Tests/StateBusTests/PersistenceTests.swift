import Foundation
@_spi(Testing) import StateBus
import Testing

@Suite("Persisted properties")
struct PersistenceTests {
    static let settings = ObjectDefinition(
        "Settings",
        properties: [
            PropertyDefinition("notifications", default: true, persisted: true),
            PropertyDefinition("theme", default: "light", persisted: true),
            PropertyDefinition("draft", default: "")
        ])

    static func host(_ folder: String, objects: [ObjectDefinition] = [settings]) async throws -> StateHost {
        try await StateHost(
            objects: objects,
            configuration: HostConfiguration(
                name: "settings", controlEndpoint: "ipc://\(folder)/control", heartbeatInterval: .milliseconds(200),
                persistence: .file("\(folder)/settings.sqlite")
            ))
    }

    @Test("after a restart persisted values come back, the others take their defaults, views resync")
    func restartRestore() async throws {
        let folder = Fixtures.temporaryFolder()
        let first = try await Self.host(folder)
        let replica = try await Fixtures.liveReplica("Settings", of: first)
        defer { replica.close() }
        _ = try await replica.write("notifications", to: false).accepted()
        _ = try await replica.write("draft", to: "unsaved").accepted()
        try first.update("theme", to: "dark", in: "Settings")
        first.stop()
        let second = try await Self.host(folder)
        defer { second.stop() }
        #expect(second.value(of: "notifications", in: "Settings") == false)
        #expect(second.value(of: "theme", in: "Settings") == "dark")
        #expect(second.value(of: "draft", in: "Settings") == "")
        try await replica.waitFor(timeout: .seconds(20), "the resync on the new epoch") {
            $0.epoch == second.epoch && $0["notifications"] == false && $0["draft"] == ""
        }
    }

    @Test("group commit: a thousand queued changes take one transaction")
    func groupCommit() async throws {
        let folder = Fixtures.temporaryFolder()
        let host = try await Self.host(folder)
        defer { host.stop() }
        let replica = try await Fixtures.liveReplica("Settings", of: host)
        defer { replica.close() }
        _ = try await replica.write("theme", to: "warm-up").accepted()
        let before = host.statistics.persistenceCommits
        let resume = await host.pauseLoopForTesting()
        for index in 1...1000 { try host.update("theme", to: .string("theme \(index)"), in: "Settings") }
        resume()
        try await replica.waitFor(timeout: .seconds(20), "the last change") { $0["theme"] == "theme 1000" }
        #expect(host.statistics.persistenceCommits == before + 1)
        #expect(
            try SQLitePropertyStore(path: "\(folder)/settings.sqlite", readOnly: true).loadAll()
                .contains { $0.property == "theme" && $0.value == "theme 1000" })
    }

    @Test("group commit: a burst of 1,000 view writes, each acknowledged only once durable, takes far fewer commits")
    func viewBurstGroupCommit() async throws {
        let folder = Fixtures.temporaryFolder()
        let host = try await Self.host(folder)
        defer { host.stop() }
        let replica = try await Fixtures.liveReplica("Settings", of: host)
        defer { replica.close() }
        let before = host.statistics.persistenceCommits
        let receipts = (1...1000).map { replica.write("theme", to: .string("theme \($0)")) }
        for receipt in receipts { _ = try await receipt.accepted() }
        let commits = host.statistics.persistenceCommits - before
        // A count, not a time: each acknowledgement waited for a commit, and commits were shared.
        #expect(commits >= 1)
        #expect(commits <= 250, "1,000 acknowledged writes took \(commits) commits")
        #expect(
            try SQLitePropertyStore(path: "\(folder)/settings.sqlite", readOnly: true).loadAll()
                .contains { $0.property == "theme" && $0.value == "theme 1000" })
    }

    @Test("the host's own durable set returns once the file holds the value")
    func hostSetDurably() async throws {
        let folder = Fixtures.temporaryFolder()
        let host = try await Self.host(folder)
        defer { host.stop() }
        let before = host.statistics.persistenceCommits
        try await host.updateDurably("theme", to: "dark", in: "Settings")
        #expect(host.statistics.persistenceCommits == before + 1)
        #expect(
            try SQLitePropertyStore(path: "\(folder)/settings.sqlite", readOnly: true).loadAll()
                .contains { $0.property == "theme" && $0.value == "dark" })
        // A property that is not persisted needs no commit.
        try await host.updateDurably("draft", to: "x", in: "Settings")
        #expect(host.statistics.persistenceCommits == before + 1)
    }

    @Test("schema evolution: new properties take defaults, unknown ones are kept, undecodable ones fall back")
    func schemaEvolution() async throws {
        let folder = Fixtures.temporaryFolder()
        let path = "\(folder)/settings.sqlite"
        do {
            let store = try SQLitePropertyStore(path: path)
            try store.save([
                StoredProperty(object: "Settings", property: "notifications", value: "not a bool", version: 3),
                StoredProperty(object: "Settings", property: "retired", value: 42, version: 1)
            ])
            store.close()
        }
        let log = CapturedLog()
        let host = try await StateHost(
            objects: [Self.settings],
            configuration: HostConfiguration(
                name: "settings", controlEndpoint: "ipc://\(folder)/control", persistence: .file(path), logger: log.logger))
        #expect(host.value(of: "notifications", in: "Settings") == true)  // undecodable: the default
        let warning = try #require(log.messages.first { $0.level == .warning })
        #expect(warning.message.contains("Settings.notifications"))
        #expect(warning.message.contains(path))
        #expect(warning.message.contains("using the default true"))
        #expect(host.value(of: "theme", in: "Settings") == "light")  // new: the default
        #expect(host.value(of: "retired", in: "Settings") == nil)  // unknown: ignored
        try host.update("theme", to: "dark", in: "Settings")
        let replica = try await Fixtures.liveReplica("Settings", of: host)
        replica.close()
        host.stop()
        let stored = try SQLitePropertyStore(path: path, readOnly: true).loadAll()
        #expect(stored.contains { $0.property == "retired" && $0.value == 42 })  // kept
        #expect(stored.contains { $0.property == "theme" && $0.value == "dark" })
    }

    @Test("the file keeps each view's last 1,024 stored answers, however sparse its durable write ids")
    func storedAnswersPerView() throws {
        let folder = Fixtures.temporaryFolder()
        let store = try SQLitePropertyStore(path: "\(folder)/answers.sqlite")
        defer { store.close() }
        // Every other write of `sparse` was durable (the others had no answer to store), in
        // several transactions, as a group commit stores them.
        for first in stride(from: 0, to: 1_500, by: 500) {
            let answers = (first..<first + 500).map { StoredAnswer(view: "sparse", writeID: UInt64(2 * $0 + 2), digest: 7, object: "Settings") }
            try store.save([], answers: answers + [StoredAnswer(view: "other", writeID: UInt64(first + 1), digest: 7, object: "Settings")])
        }
        let answers = try store.load().answers
        let sparse = answers.filter { $0.view == "sparse" }.map(\.writeID).sorted()
        #expect(sparse.count == StoredAnswerLimits.perView)
        #expect(sparse.first == UInt64(2 * (1_500 - StoredAnswerLimits.perView) + 2))
        #expect(sparse.last == 3_000)
        #expect(answers.filter { $0.view == "other" }.count == 3)
    }

    @Test("persistence disabled on request: nothing is written, defaults every start")
    func disabled() async throws {
        let folder = Fixtures.temporaryFolder()
        let host = try await StateHost(
            objects: [Self.settings],
            configuration: HostConfiguration(
                name: "settings", controlEndpoint: "ipc://\(folder)/control", persistence: .disabled))
        try host.update("theme", to: "dark", in: "Settings")
        host.stop()
        #expect(!FileManager.default.fileExists(atPath: "\(folder)/settings.sqlite"))
        #expect(host.statistics.persistenceCommits == 0)
    }
}
