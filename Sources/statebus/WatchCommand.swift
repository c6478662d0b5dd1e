import ArgumentParser
import Foundation
import StateBus
import StateBusCommandLine
import StateBusRuntime

/// `statebus watch`: follows a running host's object and prints its state at every change
/// until SIGINT or SIGTERM; with `--edits` it is also a view driven through standard input
/// (``WatchEdits``).
struct WatchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "watch",
        abstract: "Follow a running host's object: print its state at every change.",
        discussion: """
            Runs until interrupted. With --json, prints one JSON object per line.

            With --edits it is also a view you drive through standard input: each line \
            `PROPERTY JSON` (a path is allowed: `user.email "b@example.org"`) is written \
            through this replica and its outcome printed (with --json: \
            {"event":"write","line":N,...,"accepted":true,"sequence":S}); the line \
            `:reconnect` drops the connection and joins again. StateBusTesting's ViewNode \
            runs this.

            Examples:
              statebus watch --control ipc:///tmp/demo/control --object SharedData
              STATEBUS_CONTROL=tcp://10.0.0.5:7000 statebus watch --object Profile --json
              echo 'user.email "bea@example.org"' | statebus watch --object Profile --edits
              statebus watch --object Profile --metrics 127.0.0.1:0   # prints metrics=http://127.0.0.1:PORT/metrics
            """
    )
    @OptionGroup var connection: ConnectionOptions
    @OptionGroup var lowLatency: LowLatencyOptions
    @OptionGroup var output: OutputOptions
    @OptionGroup var metrics: MetricsOptions

    @Flag(name: .long, help: "Read edits from standard input: `PROPERTY JSON` per line, or `:reconnect`.")
    var edits = false

    @Option(name: .long, help: "This view's node name, as the host logs it (default: $STATEBUS_NODE or statebus-watch).")
    var name: String?

    func run() async throws {
        let nodeName = name ?? ProcessInfo.processInfo.environment[EnvironmentVariableName.node] ?? "statebus-watch"
        let metricsEndpoint = try metrics.endpoint()
        let replica = try connection.replica(nodeName: nodeName, pinnedCPU: lowLatency.pinCpu)
        metrics.serveInBackground(metricsEndpoint)
        let stop = SignalTrap.stopSignals()
        // Subscribe before anything can change, so no transition is missed.
        let changeIterator = replica.changes.makeAsyncIterator()
        let positionIterator = replica.sequenceChanges.makeAsyncIterator()
        let connectionIterator = replica.connectionChanges.makeAsyncIterator()
        let printer = StatePrinter(replica: replica, json: output.json)
        if replica.connectionState == .live { printer.printIfChanged() }
        let input = edits ? Task { [json = output.json] in await WatchEdits.run(on: replica, json: json) } : nil
        // A value change, or a position change alone (the echo of this replica's own write).
        let changes = Task {
            var iterator = changeIterator
            while await iterator.next() != nil { printer.printIfChanged() }
        }
        let positions = Task {
            var iterator = positionIterator
            while await iterator.next() != nil { printer.printIfChanged() }
        }
        let connections = Task {
            var last = ConnectionState.closed
            var iterator = connectionIterator
            while await iterator.next() != nil {
                let now = replica.connectionState
                if now != last {
                    last = now
                    if output.json {
                        // `at`: when the view saw it (CLOCK_MONOTONIC ns), so a reader can time it
                        // without counting its own delay in reading this line.
                        emit(#"{"event":"connection","connection":"\#(now)","epoch":\#(replica.epoch),"at":\#(MonotonicClock.now())}"#)
                    } else {
                        emit("connection: \(now)")
                    }
                    if now == .live { printer.printIfChanged(force: true) }
                }
                if let error = replica.lastError { FileHandle.standardError.write(Data("error: \(error)\n".utf8)) }
            }
        }
        await stop.wait()
        input?.cancel()
        replica.close()
        changes.cancel()
        positions.cancel()
        connections.cancel()
    }
}
