import ArgumentParser
import Foundation
import StateBusCommandLine
import ZeroMQ

/// `statebus smoke`: starts a second process and receives a message from it over ipc,
/// proving libzmq and the wrapper work on this machine.
struct SmokeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "smoke",
        abstract: "Show a message crossing from one process to another over ZeroMQ.",
        discussion: """
            Without options, binds a PULL socket on an ipc:// endpoint in a temporary folder, \
            starts a copy of itself as a second process that connects and sends one message, \
            prints what arrived, and exits 0 when it did.

            Examples:
              statebus smoke
              statebus smoke --send-to ipc:///tmp/demo/socket --message "hi"
            """
    )

    @Option(name: .long, help: "Send one message to this endpoint and exit (the child's role).")
    var sendTo: String?

    @Option(name: .long, help: "The message the child sends.")
    var message: String = "hello from another process"

    @Option(name: .long, help: "Seconds to wait for the message before failing (default: $STATEBUS_TIMEOUT, else 10).")
    var timeout: Double?

    private var wait: RequestedWait { RequestedWait(option: timeout, default: 10) }

    func validate() throws { try wait.validate() }

    func run() async throws {
        let context = try Context()
        if let endpoint = sendTo {
            let push = try Socket(context: context, type: .push)
            try push.set(.linger, 5_000)  // keep the message until it is delivered
            try push.connect(endpoint)
            try push.send("\(message) (pid \(ProcessInfo.processInfo.processIdentifier))")
            return
        }
        let folder = FileManager.default.temporaryDirectory
            .appendingPathComponent("statebus-smoke-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let pull = try Socket(context: context, type: .pull)
        let endpoint = try pull.bind("ipc://\(folder.path)/smoke")
        print("bound PULL at \(endpoint) in pid \(ProcessInfo.processInfo.processIdentifier)")

        let child = Process()
        child.executableURL = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        child.arguments = ["smoke", "--send-to", endpoint, "--message", message]
        try child.run()
        defer { if child.isRunning { child.terminate() } }
        print("started sender process pid \(child.processIdentifier)")

        let poller = Poller()
        poller.add(pull, events: .readable)
        guard try !poller.poll(timeout: wait.duration).isEmpty,
            let received = try pull.tryReceive()
        else {
            throw SmokeFailure(endpoint: endpoint, seconds: wait.seconds ?? 0)
        }
        print("received \"\(received.string)\" across processes over \(endpoint)")
        child.waitUntilExit()
    }
}

/// The smoke test's message did not arrive in time.
struct SmokeFailure: Error, CustomStringConvertible {
    let endpoint: String
    let seconds: Double
    var description: String {
        "no message arrived on \(endpoint) within \(seconds) s: check that libzmq works (deploy/setup.sh) and that the temporary folder allows ipc sockets"
    }
}
