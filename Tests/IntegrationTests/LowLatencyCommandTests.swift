import Foundation
import StateBusTesting
import Testing
import ZeroMQ

/// `--pin-cpu` on `statebus host`, `view` and `watch`, and the host's `--busy-poll-us`, with
/// real processes.
@Suite("The low-latency options on the command line")
struct LowLatencyCommandTests {
    @Test(
        "a host and a watching view pinned to one CPU serve and follow; --pin-cpu of a CPU the process may not use is refused, naming the ones it may"
    )
    func pinCPU() async throws {
        let folder = "/tmp/sbpin-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let control = "ipc://\(folder)/control"
        let statebus = try BuiltProducts.executable("statebus")
        let cpu = try #require(ThreadAffinity.allowedCPUs.first)

        let refused = try await runStatebus(["host", "--control", control, "--object", "Counter", "--property", "count:int=0", "--pin-cpu", "4096"])
        #expect(refused.status == 64, "\(refused.output)")
        #expect(refused.output.contains { $0.contains("--pin-cpu 4096") && $0.contains("it may use \(cpu)") }, "\(refused.output)")

        let host = try NodeProcess(
            executable: statebus,
            arguments: ["host", "--control", control, "--object", "Counter", "--property", "count:int=3", "--no-persistence", "--pin-cpu", "\(cpu)"],
            name: "host")
        defer { host.terminate() }
        try await host.waitForLine("the host ready") { $0.hasPrefix("ready ") }
        let watch = try NodeProcess(
            executable: statebus, arguments: ["watch", "--control", control, "--object", "Counter", "--pin-cpu", "\(cpu)"], name: "watch")
        defer { watch.terminate() }
        try await watch.waitForLine("the first value") { $0.contains("count = 3") }
        let set = try await runStatebus(["set", "--control", control, "--object", "Counter", "count", "9"])
        #expect(set.status == 0, "\(set.output)")
        try await watch.waitForLine("the new value") { $0.contains("count = 9") }
    }

    @Test("a host told never to poll busily (--busy-poll-us 0) serves writes; a value out of range is refused, saying what to give")
    func busyPolling() async throws {
        try await withTestSystem { system in
            let control = system.endpoint("control")
            let refused = try await runStatebus([
                "host", "--control", control, "--object", "Counter", "--property", "count:int=0", "--busy-poll-us", "2000000"
            ])
            #expect(refused.status == 64, "\(refused.output)")
            #expect(
                refused.output.contains { $0.contains("--busy-poll-us must be 0 to 1000000 microseconds, got 2000000") }, "\(refused.output)")

            let host = try system.startProcess(
                executable: system.statebus,
                arguments: [
                    "host", "--control", control, "--object", "Counter", "--property", "count:int=3", "--no-persistence", "--busy-poll-us", "0"
                ], name: "host")
            try await host.waitForLine("the host ready") { $0.hasPrefix("ready ") }
            let set = try await runStatebus(["set", "--control", control, "--object", "Counter", "count", "9"])
            #expect(set.status == 0, "\(set.output)")
            let get = try await runStatebus(["get", "--control", control, "--object", "Counter", "count"])
            #expect(get.output.last == "9", "\(get.output)")
        }
    }
}
