import Foundation
import StateBus
import StateBusTesting
import Testing

/// A host and three views, each a real `statebus` process, driven through StateBusTesting.
@Suite("Replication across real processes")
struct ReplicationProcessTests {
    @Test("three views write, all four processes end in identical state; a killed view and a killed host recover")
    func hostAndThreeViews() async throws {
        try await withTestSystem { system in
            let host = try await system.startHostProcess(object: "SharedData", properties: ["sharedText:string=", "counter:int=0"])
            var views: [ViewNode] = []
            for index in 1...3 { views.append(try await system.startView(of: "SharedData", at: host.controlEndpoint, name: "view\(index)")) }

            // Each view writes; everyone converges on the host's state, sequence included.
            try await views[0].set("sharedText", to: "from view 1")
            try await views[1].set("counter", to: 2)
            try await views[2].set("sharedText", to: "from view 3")
            try await waitUntilConverged(host, views)
            #expect(views[0].state?.values == ["counter": 2, "sharedText": "from view 3"])
            #expect(views[0].state?.sequence == 3)

            // A view killed with SIGKILL misses a change, starts again and catches up.
            views[0].kill()
            try await views[1].set("counter", to: 40)
            try await views[0].restart()
            try await waitUntilConverged(host, views)
            #expect(views[0].state?.values == ["counter": 40, "sharedText": "from view 3"])

            // The host killed and restarted: every view notices, and resyncs to the new epoch
            // (nothing here is persisted, so the defaults are back).
            let epoch = host.epoch
            host.kill()
            for view in views { try await waitUntil(view, "to notice the lost host", where: { !$0.isLive }) }
            try await host.restart()
            try await waitUntilConverged(host, views)
            #expect(host.epoch != epoch)
            for view in views { #expect(view.state?.values == ["counter": 0, "sharedText": ""]) }
        }
    }
}
