import Foundation
import StateBus
import StateBusRuntime
import StateBusTesting
import Testing

/// The profile of the SwiftUI examples, as a test model.
struct User: Codable, Sendable, Equatable {
    var username: String
    var email: String
}

let counter = ObjectDefinition(
    "Counter",
    properties: [
        PropertyDefinition("count", default: 0, validate: { $0 >= 0 ? nil : "count must not be negative" }),
        PropertyDefinition("user", default: User(username: "anna", email: "anna@example.com")),
        PropertyDefinition("progress", default: 0.5)
    ])

@Suite("StateBusTesting: systems of real processes, waits and fault helpers")
struct TestSystemTests {
    @Test("the README's dozen lines: a host and two view processes, an edit through one, every node converged")
    func dozenLines() async throws {
        try await withTestSystem { system in
            let host = try await system.startHost([counter])
            let first = try await system.startView(of: "Counter", at: host.controlEndpoint, name: "first")
            let second = try await system.startView(of: "Counter", at: host.controlEndpoint, name: "second")
            try await first.set("count", to: 3)
            try await waitUntilConverged(host.observed("Counter"), [first, second])
            #expect(second.state?.values["count"] == 3)
            #expect(host.value(of: "count", in: "Counter") == 3)
        }
    }

    @Test("the DocC article's walkthrough, as written: edits, a rejection, kill, pause, reconnect")
    func articleWalkthrough() async throws {
        let counter = ObjectDefinition(
            "Counter",
            properties: [
                PropertyDefinition("count", default: 0, validate: { $0 >= 0 ? nil : "count must not be negative" })
            ])
        try await withTestSystem { system in
            let host = try await system.startHost([counter])
            let first = try await system.startView(of: "Counter", at: host.controlEndpoint, name: "first")
            let second = try await system.startView(of: "Counter", at: host.controlEndpoint, name: "second")
            try await first.set("count", to: 3)
            await #expect(throws: StateBusError.self) { try await first.set("count", to: -1) }
            try await waitUntilConverged(host.observed("Counter"), [first, second])
            #expect(second.state?.values["count"] == 3)

            second.kill()
            try await first.set("count", to: 4)
            try await second.restart()
            try await waitUntilConverged(host.observed("Counter"), [first, second])

            first.pause()
            try host.update("count", to: 5, in: "Counter")
            first.resume()
            try await waitUntil(first, "count", equals: 5)

            second.reconnect()
            try await waitUntilConverged(host.observed("Counter"), [first, second])
        }
    }

    @Test("a write through a view process: path writes, and a rejection carries the host's code and reason")
    func viewWrites() async throws {
        try await withTestSystem { system in
            let host = try await system.startHost([counter])
            let view = try await system.startView(of: "Counter", at: host.controlEndpoint, name: "editor")
            let sequence = try await view.set("user.email", to: "bea@example.org")
            #expect(sequence == host.sequence(of: "Counter"))
            await #expect(throws: StateBusError.self) { try await view.set("count", to: -1) }
            do {
                try await view.set("count", to: -1)
            } catch let error as StateBusError {
                #expect(error.code == .validationFailed)
                #expect(error.message.contains("count must not be negative"))
            }
            try await waitUntilConverged(host.observed("Counter"), [view])
            #expect(view.state?.values["user"] == ["username": "anna", "email": "bea@example.org"])
            #expect(view.state?.values["count"] == 0)

            // After a reconnect, each write still gets its own verdict.
            view.reconnect()
            try await view.waitUntilLive()
            let next = try await view.set("count", to: 6)
            #expect(next == host.sequence(of: "Counter"))
            // A whole Double prints as an integer in the view's JSON: still the same state.
            try await view.set("progress", to: 2.0)
            try await waitUntilConverged(host.observed("Counter"), [view])
            try await waitUntil(view, "progress", equals: .double(2))
        }
    }

    @Test("a timeout names what was awaited and shows the last state seen")
    func timeoutsReportClearly() async throws {
        try await withTestSystem { system in
            let host = try await system.startHost([counter])
            let view = try await system.startView(of: "Counter", at: host.controlEndpoint, name: "slow")
            try host.update("count", to: 2, in: "Counter")
            try await waitUntil(view, "count", equals: 2)
            do {
                try await waitUntil(view, "count", equals: 99, timeout: .milliseconds(300))
                Issue.record("a wait for a value nobody sets returned")
            } catch let timeout as WaitTimeout {
                #expect(timeout.description.contains("view slow: count == 99"))
                #expect(timeout.description.contains("\"count\": 2"), "\(timeout)")
            }

            // A paused view misses a change: the convergence timeout says which view and what.
            view.pause()
            try host.update("count", to: 5, in: "Counter")
            do {
                try await waitUntilConverged(host.observed("Counter"), [view], timeout: .milliseconds(300))
                Issue.record("a paused view converged")
            } catch let timeout as WaitTimeout {
                #expect(timeout.description.contains("view slow differs from host Counter"), "\(timeout)")
                #expect(timeout.description.contains("count: expected 5, got 2"), "\(timeout)")
            }
            view.resume()
            try await waitUntilConverged(host.observed("Counter"), [view])
        }
    }

    @Test("a convergence wait sees changes that happen while it waits")
    func convergenceSeesLateChanges() async throws {
        try await withTestSystem { system in
            let host = try await system.startHost([counter])
            let view = try await system.startView(of: "Counter", at: host.controlEndpoint, name: "late")
            view.pause()
            try host.update("count", to: 1, in: "Counter")
            // The wait starts while the view lags; the host changes again and the view resumes
            // only after that, so the wait can only end on the final state.
            async let converged: Void = waitUntilConverged(host.observed("Counter"), [view])
            try host.update("count", to: 2, in: "Counter")
            view.resume()
            try await converged
            #expect(view.state?.values["count"] == 2)
            try await expectSameState(host.observed("Counter"), [view])
        }
    }

    @Test("no child process outlives a failing test (checked by pid)")
    func failingTestLeavesNoProcess() async throws {
        struct DeliberateFailure: Error {}
        let recorded = PIDs()
        await #expect(throws: DeliberateFailure.self) {
            try await withTestSystem { system in
                let host = try await system.startHostProcess(object: "Counter", properties: ["count:int=0"])
                _ = try await system.startView(of: "Counter", at: host.controlEndpoint, name: "doomed")
                recorded.set(system.processIDs)
                throw DeliberateFailure()
            }
        }
        #expect(recorded.value.count == 2)
        for pid in recorded.value { #expect(!processExists(pid), "process \(pid) outlived the test") }
    }

    @Test("no child process outlives a cancelled test (checked by pid)")
    func cancelledTestLeavesNoProcess() async throws {
        let (started, announce) = AsyncStream<[Int32]>.makeStream()
        let test = Task {
            try await withTestSystem { system in
                let host = try await system.startHostProcess(object: "Counter", properties: ["count:int=0"])
                _ = try await system.startView(of: "Counter", at: host.controlEndpoint, name: "cancelled")
                announce.yield(system.processIDs)
                try await waitUntil("something that never happens", timeout: .seconds(600)) { false }
            }
        }
        var iterator = started.makeAsyncIterator()
        let pids = try #require(await iterator.next())
        test.cancel()
        await #expect(throws: CancellationError.self) { try await test.value }
        #expect(pids.count == 2)
        for pid in pids { #expect(!processExists(pid), "process \(pid) outlived the cancelled test") }
    }

    @Test("fault helpers: a killed view restarts and catches up; a killed host restarts and every view resyncs")
    func faults() async throws {
        try await withTestSystem { system in
            let host = try await system.startHostProcess(object: "Counter", properties: ["count:int=0", "saved:int~=0"])
            let first = try await system.startView(of: "Counter", at: host.controlEndpoint, name: "first")
            let second = try await system.startView(of: "Counter", at: host.controlEndpoint, name: "second")

            first.kill()
            try await second.set("count", to: 7)
            try await first.restart()
            try await waitUntilConverged(host, [first, second])
            #expect(first.state?.values["count"] == 7)

            try await first.set("saved", to: 9)
            let epoch = host.epoch
            host.kill()
            try await waitUntil(first, "to notice the lost host", where: { !$0.isLive })
            try await host.restart()
            #expect(host.epoch != epoch)
            try await waitUntilConverged(host, [first, second])
            // The persisted property survived the kill; the other took its default.
            #expect(second.state?.values == ["count": 0, "saved": 9])

            first.reconnect()
            try await waitUntilConverged(host, [first, second])
        }
    }

    @Test("your own view executable gets the launcher's environment and is a ViewNode")
    func ownViewExecutable() async throws {
        try await withTestSystem { system in
            let host = try await system.startHost([counter])
            // No --control, no --object: `statebus watch` finds both in its environment.
            let view = try system.startViewNode(
                executable: system.statebus, arguments: ["watch", "--json", "--edits"],
                objects: ["Counter"], control: host.controlEndpoint, name: "own")
            try await view.waitUntilLive()
            try await view.set("count", to: 6)
            try await waitUntilConverged(host.observed("Counter"), [view])
            #expect(view.state?.values["count"] == 6)
        }
    }

    @Test("a launch file runs under the system and stops cleanly")
    func launchFile() async throws {
        try await withTestSystem { system in
            let topology = try system.launch(
                yaml: """
                    name: tiny
                    nodes:
                      - name: host
                        role: host
                        objects: [Counter]
                        control: \(system.endpoint("tiny.control"))
                        executable: statebus
                        arguments: [host, --property, "count:int=4"]
                      - name: view
                        role: view
                        objects: [Counter]
                        executable: statebus
                        arguments: [watch, --json]
                    """)
            let view = try await topology.node("view")
            try await view.waitForLine("the host's value") { $0.contains(#""values":{"count":4}"#) }
            #expect(try await topology.stop() == 0)
            #expect(!view.isRunning)
            #expect(topology.output.contains { $0.hasPrefix("view | ") })
        }
    }

    @Test("a state diff names each differing field")
    func stateDiff() {
        let diff = StateDiff(
            expected: ["count": 1, "user": ["username": "anna", "email": "a@b.c"], "gone": true],
            actual: ["count": 1, "user": ["username": "anna", "email": "x"], "extra": 2])
        #expect(diff.differences.map(\.path) == ["extra", "gone", "user.email"])
        #expect(diff.description.contains(#"user.email: expected "a@b.c", got "x""#), "\(diff)")
        #expect(diff.description.contains("gone: missing (expected true)"))
        #expect(StateDiff(expected: ["a": 1], actual: ["a": 1]).isEmpty)
        // Values that crossed JSON: 2.0 printed as 2, bytes as base64.
        #expect(StateDiff(expected: ["p": .double(2), "b": .bytes(Data([1, 2]))], actual: ["p": .int(2), "b": .string("AQI=")]).isEmpty)
        #expect(!StateDiff(expected: ["p": .double(2.5)], actual: ["p": .int(2)]).isEmpty)
    }
}

/// Whether a process with this id runs (a reaped child does not, nor does a zombie that
/// ended and waits to be collected).
func processExists(_ pid: Int32) -> Bool {
    NodeProcess.isRunning(pid: pid)
}

/// Process ids handed out of a test closure.
final class PIDs: Sendable {
    private let stored = Locked<[Int32]>([])
    var value: [Int32] { stored.withLock { $0 } }
    func set(_ pids: [Int32]) { stored.withLock { $0 = pids } }
}
