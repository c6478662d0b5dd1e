import ArgumentParser
import Foundation
import StateBus
import StateBusCommandLine
import StateBusInspector
import StateBusRuntime

/// `statebus inspect`: serves a live web page that is a view of a running host.
struct InspectCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "inspect",
        abstract: "Serve a live web page of a running host: every object's properties, editable, the connected views, live charts.",
        discussion: """
            The page is itself a view: it joins every object the host serves, shows each \
            property as it changes (server-sent events), and lets you edit each writable one in \
            place (Enter sends, Escape reverts): the host's verdict shows under the field, and \
            a rejected edit shows the host's reason while the field goes back to the host's \
            value. Beside them: updates per second, the round trip of your edits, and the \
            views connected to the host. Values are JSON (strings are edited as text). The \
            page is plain HTML served from this binary; it prints inspector=URL once it \
            listens. It can write with the role of the key it joins with: serve it on \
            loopback (the default) unless everyone who reaches the address may write.

            Examples:
              statebus inspect --control ipc:///tmp/demo/control
              statebus inspect --control tcp://127.0.0.1:7000 --http 127.0.0.1:0
              statebus inspect --control tcp://10.0.0.5:7000 --key me.key --host-key host.pub --http 127.0.0.1:8080
              statebus inspect --recording counter.rec      # scrub through a recording (statebus record)

            With --recording FILE the page shows a recording instead of a live host: a host \
            in this process serves the recorded object read-only, and a slider moves it to any \
            recorded sequence (time travel across processes: other views may join it too, at \
            the control endpoint the page names).
            """
    )

    @Option(name: .long, help: "The host's (or a relay's) control endpoint (default: $STATEBUS_CONTROL).")
    var control: String?

    @Option(name: .long, help: "A recording (statebus record) to scrub through instead of a live host.")
    var recording: String?

    @Option(name: .long, help: ArgumentHelp("Where to serve the page (port 0 picks a free one).", valueName: "HOST:PORT"))
    var http = "127.0.0.1:8080"

    @Option(name: .long, help: "Seconds to wait for the host at start (default: $STATEBUS_TIMEOUT, else 10).")
    var timeout: Double?

    private var wait: RequestedWait { RequestedWait(option: timeout, default: 10) }

    @Option(name: .long, help: "This client's CURVE secret key file, for a host with keys (default: $STATEBUS_KEY_FILE).")
    var key: String?

    @Option(name: .customLong("host-key"), help: "The host's public key file or Z85 key (default: $STATEBUS_HOST_KEY_FILE).")
    var hostKey: String?

    func validate() throws {
        do {
            let address = try HTTPListenAddress(parsing: http)
            if !["127.0.0.1", "localhost", "::1"].contains(address.host) {
                FileHandle.standardError.write(
                    Data("statebus inspect: serving on \(address.host): anyone who reaches it can read and edit the host's objects\n".utf8))
            }
        } catch {
            throw ValidationError("--http \(error)")
        }
        if recording != nil, control != nil { throw ValidationError("choose one of --control (a live host) and --recording (a file), not both") }
        guard recording != nil || control ?? ProcessInfo.processInfo.environment[EnvironmentVariableName.control] != nil else {
            throw ValidationError("no host endpoint: pass --control ENDPOINT (a host's or relay's) or set STATEBUS_CONTROL")
        }
        try wait.validate()
    }

    func run() async throws {
        let stop = SignalTrap.stopSignals()
        if let recording {
            try await inspect(recording: recording, stop: stop)
            return
        }
        // The same endpoint and key rules as every other command's (environment defaults,
        // both keys or neither).
        let connection = try ConnectionOptions.parse(
            (control.map { ["--control", $0] } ?? []) + (key.map { ["--key", $0] } ?? []) + (hostKey.map { ["--host-key", $0] } ?? []))
        let inspector = Inspector(
            controlEndpoint: connection.controlEndpoint, address: try HTTPListenAddress(parsing: http), security: try connection.security(),
            joinTimeout: wait.duration)
        announce(inspector)
        try await runServices([inspector], stoppingOn: stop)
    }

    /// Serves the page over a recording: a host of this process at a private ipc endpoint,
    /// moved along the recording by the page's slider.
    private func inspect(recording: String, stop: SignalTrap) async throws {
        let history = try RecordedHistory(path: recording)
        let folder = NSTemporaryDirectory() + "statebus-inspect-\(getpid())-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let scrubber = try await RecordingScrubber(history: history, controlEndpoint: "ipc://\(folder)/recording")
        let inspector = Inspector(
            controlEndpoint: "ipc://\(folder)/recording", address: try HTTPListenAddress(parsing: http), joinTimeout: .seconds(10),
            timeline: scrubber.timeline())
        announce(inspector)
        do {
            try await runServices([inspector], stoppingOn: stop)
        } catch {
            await scrubber.stop()
            throw error
        }
        await scrubber.stop()
    }

    /// Prints `inspector=URL` once the page is served.
    private func announce(_ inspector: Inspector) {
        Task {
            let port = try await inspector.waitUntilBound(timeout: wait.duration + .seconds(20))
            var address = inspector.address
            address.port = port
            emit("inspector=http://\(address)/")
        }
    }
}
