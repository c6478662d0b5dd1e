import Foundation
import StateBus
import Testing

/// A model whose action waits until the test lets it finish.
@MainActor @SharedModel("Gate")
final class GateModel {
    var opened: Int = 0
    /// Actions that started: observed, so a test can wait for it.
    var started: Int = 0
    @Local var waiting: [CheckedContinuation<Void, Never>] = []

    /// Waits for ``release()``, then counts the opening.
    @Action func pass() async throws -> Int {
        started += 1
        await withCheckedContinuation { waiting.append($0) }
        opened += 1
        return opened
    }

    /// Lets every waiting action go on.
    func release() {
        for continuation in waiting { continuation.resume() }
        waiting.removeAll()
    }
}

@MainActor
@Suite("Actions have bounds: running calls on the host, and a deadline on the view")
struct ActionBoundsTests {
    func serve(maxRunningCalls: Int) async throws -> (GateModel, StateHost) {
        let model = GateModel()
        var configuration = HostConfiguration(name: "gate", controlEndpoint: "ipc://\(Fixtures.temporaryFolder())/control")
        configuration.maxRunningCalls = maxRunningCalls
        return (model, try await StateHost(serving: [model], configuration: configuration))
    }

    @Test("past HostConfiguration.maxRunningCalls a call is refused overloaded and does not run; the running one still answers")
    func runningCallsAreBounded() async throws {
        let (model, host) = try await serve(maxRunningCalls: 1)
        defer { host.stop() }
        // The actions run on the main actor, which the suite's other model tests share: early
        // in a full run on two cores a call waited past the default 30 s for it.
        var patient = ReplicaConfiguration(nodeName: "gate")
        patient.callTimeout = .seconds(150)
        let view = try await GateModel.replica(controlEndpoint: host.controlEndpoint, configuration: patient, timeout: .seconds(60))
        defer { view.connection.detach() }
        let first = Task { try await view.pass() }
        try await waitUntil("the first call to run on the host") { model.started == 1 }
        do {
            _ = try await view.pass()
            Issue.record("a second call ran past the bound")
        } catch let error as StateBusError {
            #expect(error.code == .overloaded, "\(error)")
        }
        #expect(host.statistics.callsRefused == 1)
        model.release()
        #expect(try await first.value == 1)
        #expect(view.opened == 1, "the refused call did not run")
    }

    @Test("a call the host does not answer in time fails timeout on the view; the action may still finish on the host")
    func callsHaveADeadline() async throws {
        let (model, host) = try await serve(maxRunningCalls: 4)
        defer { host.stop() }
        let replica = try Replica(object: "Gate", controlEndpoint: host.controlEndpoint)
        defer { replica.close() }
        try await replica.waitUntilLive()
        do {
            _ = try await replica.call("pass", timeout: .milliseconds(300))
            Issue.record("the call returned before the action finished")
        } catch {
            #expect(error.code == .timeout, "\(error)")
            #expect(error.message.contains("may or may not have run"), "\(error)")
        }
        // Released once it runs: released before (a slow host loop or a busy main actor), it
        // would wait for a release that already came.
        try await waitUntil("the action to start on the host") { model.started == 1 }
        model.release()
        try await replica.waitFor(timeout: .seconds(60), "the late action's change") { $0["opened"] == 1 }
    }
}
