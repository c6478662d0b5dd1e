import Foundation
import StateBusTesting
import Testing
import ZeroMQ

@Suite("Messages cross real processes")
struct TwoProcessTests {
    @Test("a child process sends a message to this one over ipc")
    func childSendsOverIPC() throws {
        let folder = URL(fileURLWithPath: "/tmp/sbit-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let context = try Context()
        let pull = try Socket(context: context, type: .pull)
        let endpoint = try pull.bind("ipc://\(folder.path)/it")

        let child = Process()
        child.executableURL = try BuiltProducts.executable("statebus")
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
        #expect(try !poller.poll(timeout: .seconds(20)).isEmpty, "no message from the child within 20 s")
        let message = try #require(try pull.tryReceive())
        #expect(message.string == "cross-process (pid \(child.processIdentifier))")
        child.waitUntilExit()
        #expect(child.terminationStatus == 0)
    }

    @Test("`statebus smoke` starts its own second process and reports the message")
    func smokeCommand() throws {
        let process = Process()
        process.executableURL = try BuiltProducts.executable("statebus")
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
        #expect(process.terminationStatus == 0)
        #expect(text.contains("received \"hello from another process (pid"))
    }
}
