import Foundation
import StateBusTesting
import Testing

/// A host and three views, each a real `statebus` process.
@Suite("Replication across real processes")
struct ReplicationProcessTests {
    let folder = "/tmp/sbrp-\(UUID().uuidString.prefix(8))"
    var control: String { "ipc://\(folder)/control" }

    init() throws {
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    }

    func statebus(_ arguments: [String], name: String) throws -> NodeProcess {
        try NodeProcess(executable: try BuiltProducts.executable("statebus"), arguments: arguments, name: name)
    }

    func startHost() throws -> NodeProcess {
        try statebus(["host", "--control", control, "--object", "SharedData", "--heartbeat-ms", "200",
                      "--property", "sharedText:string=", "--property", "counter:int=0", "--print-changes"], name: "host")
    }

    func startView(_ index: Int) throws -> NodeProcess {
        try statebus(["watch", "--control", control, "--object", "SharedData", "--json"], name: "view\(index)")
    }

    /// Writes through a short-lived view process and checks the host accepted it.
    func write(_ property: String, _ json: String) throws {
        let writer = try statebus(["set", "--control", control, "--object", "SharedData", property, json, "--json"], name: "set")
        defer { writer.terminate() }
        #expect(try writer.waitForExit() == 0, "\(writer.output)")
        #expect(writer.output.contains { $0.contains(#""accepted":true"#) })
    }

    /// The `values` object of a state line.
    static func values(_ line: String) -> String? {
        guard let range = line.range(of: #""values":"#) else { return nil }
        return String(line[range.upperBound...].dropLast())
    }

    @Test("three views write, all four processes end in identical state; a killed view and a killed host recover")
    func hostAndThreeViews() async throws {
        let host = try startHost()
        defer { host.terminate() }
        try await host.waitForLine("ready") { $0.hasPrefix("ready ") }
        let views = try (1...3).map(startView)
        defer { views.forEach { $0.terminate() } }
        for view in views { try await view.waitForLine("live") { $0.contains(#""connection":"live""#) } }

        // Each view process writes (the writers are views too), then everyone converges.
        try write("sharedText", #""from view 1""#)
        try write("counter", "2")
        try write("sharedText", #""from view 3""#)
        let expected = #"{"counter":2,"sharedText":"from view 3"}"#
        let hostLine = try await host.waitForLine("the host's final state") { $0.contains(#""sequence":3"#) }
        #expect(Self.values(hostLine) == expected)
        for view in views {
            let line = try await view.waitForLine("sequence 3") { $0.contains(#""sequence":3,"values""#) }
            #expect(Self.values(line) == expected)
        }

        // A view killed with SIGKILL and started again catches up.
        views[0].kill()
        try write("counter", "40")
        try views[0].start()
        let caughtUp = try await views[0].waitForLine("the restarted view's snapshot") { $0.contains(#""sequence":4,"values""#) }
        #expect(Self.values(caughtUp) == #"{"counter":40,"sharedText":"from view 3"}"#)

        // The host killed and restarted: every view notices and resyncs to the new epoch.
        host.kill()
        for view in views { try await view.waitForLine("stale") { $0.contains(#""connection":"stale""#) } }
        try host.start()
        let ready = try await host.waitForLine("ready again") { $0.hasPrefix("ready ") }
        let epoch = try #require(ready.split(separator: "=").last.map(String.init))
        for view in views {
            let line = try await view.waitForLine("the new epoch's state") { $0.contains(#""epoch":\#(epoch),"object""#) }
            #expect(Self.values(line) == #"{"counter":0,"sharedText":""}"#)
        }
    }
}
