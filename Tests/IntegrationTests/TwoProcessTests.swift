import Foundation
import StateBusRuntime
import StateBusTesting
import Testing
import ZeroMQ

@Suite("Messages cross real processes")
struct TwoProcessTests {
    @Test("a child process sends a message to this one over ipc")
    func childSendsOverIPC() async throws {
        let folder = URL(fileURLWithPath: "/tmp/sbit-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let statebus = try BuiltProducts.executable("statebus")
        // The waits block (poll, process exit): on a thread of their own, not one of the few
        // that run every test's async code. The checks are made here, on the test's task.
        let (message, pid, status) = try await onThreadOfItsOwn { () throws -> (String?, Int32, Int32) in
            let context = try Context()
            defer { context.terminate() }
            let pull = try Socket(context: context, type: .pull)
            defer { pull.close() }
            let endpoint = try pull.bind("ipc://\(folder.path)/it")
            let child = Process()
            child.executableURL = statebus
            child.arguments = ["smoke", "--send-to", endpoint, "--message", "cross-process"]
            try child.run()
            defer {
                if child.isRunning {
                    child.terminate()
                    child.waitUntilExit()
                }
            }
            let poller = Poller()
            poller.add(pull, events: .readable)
            guard try !poller.poll(timeout: .seconds(20)).isEmpty else { return (nil, child.processIdentifier, -1) }
            let message = try pull.tryReceive()?.string
            child.waitUntilExit()
            return (message, child.processIdentifier, child.terminationStatus)
        }
        let received = try #require(message, "no message from the child within 20 s")
        #expect(received == "cross-process (pid \(pid))")
        #expect(status == 0)
    }

    @Test("`statebus smoke` starts its own second process and reports the message")
    func smokeCommand() async throws {
        let statebus = try BuiltProducts.executable("statebus")
        // Reads the output to its end and waits for the exit: on a thread of its own.
        let (text, status) = try await onThreadOfItsOwn { () throws -> (String, Int32) in
            let process = Process()
            process.executableURL = statebus
            process.arguments = ["smoke"]
            let output = Pipe()
            process.standardOutput = output
            try process.run()
            defer {
                if process.isRunning {
                    process.terminate()
                    process.waitUntilExit()
                }
            }
            let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            process.waitUntilExit()
            return (text, process.terminationStatus)
        }
        #expect(status == 0)
        #expect(text.contains("received \"hello from another process (pid"))
    }
}
