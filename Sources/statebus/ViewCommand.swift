import ArgumentParser
import Foundation
import StateBus
import StateBusCommandLine
import StateBusDemo
import StateBusRuntime
import StateBusWire

/// `statebus view`: a terminal view bound to one property; every line typed is an edit.
struct ViewCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "view",
        abstract: "A terminal view: shows a property as it changes; each line you type sets it.",
        discussion: """
            Prints "[NAME] PROPERTY = VALUE (sequence N)" whenever the value changes, from any \
            view or the host. Each line read from standard input is written to the property \
            (as a string, or as JSON with --json-input); a rejected edit prints the host's \
            reason and the value rolls back. Stops on SIGINT or SIGTERM.

            Examples:
              statebus view --control ipc:///tmp/demo/control --object SharedData --property sharedText --name first
              STATEBUS_CONTROL=tcp://127.0.0.1:7000 STATEBUS_OBJECT=Counter statebus view --property count --json-input
            """
    )
    @OptionGroup var connection: ConnectionOptions
    @OptionGroup var lowLatency: LowLatencyOptions
    @OptionGroup var metrics: MetricsOptions

    @Option(name: .long, help: "The property to show and edit.")
    var property: String

    @Option(name: .long, help: "This view's name, shown in every line (default: $STATEBUS_NODE or 'view').")
    var name: String?

    @Flag(name: .long, help: "Read each input line as JSON instead of a plain string.")
    var jsonInput = false

    func run() async throws {
        let name = self.name ?? ProcessInfo.processInfo.environment[EnvironmentVariableName.node] ?? "view"
        let metricsEndpoint = try metrics.endpoint()
        let replica = try connection.replica(nodeName: name, pinnedCPU: lowLatency.pinCpu)
        metrics.serveInBackground(metricsEndpoint)
        let stop = SignalTrap.stopSignals()
        let property = self.property
        // Subscribe before anything can change, so no transition is missed.
        let changeIterator = replica.changes.makeAsyncIterator()
        let stateIterator = replica.connectionChanges.makeAsyncIterator()
        if replica.connectionState == .live {
            emit("[\(name)] live")
        }
        let shown = LastShown<Value>()
        let show = { @Sendable in
            shown.showIfChanged(replica[property] ?? .null) { emit("[\(name)] \(property) = \($0) (sequence \(replica.sequence))") }
        }
        if replica[property] != nil { show() }
        let renders = Task {
            var changes = changeIterator
            while let changed = await changes.next() {
                if changed.contains(property) { show() }
            }
        }
        let states = Task {
            var states = stateIterator
            while await states.next() != nil {
                emit("[\(name)] \(replica.connectionState)")
                if let error = replica.lastError { emit("[\(name)] error: \(error)") }
            }
        }
        // Lines are read on a thread of their own: a blocking read must not hold one of the
        // cooperative pool's few threads (two on a 2-core machine) for the process's life.
        let edits = Task { [jsonInput] in
            for await line in DemoNode.standardInputLines() {
                let value: Value
                do {
                    value = try ValueText.parse(line, asString: !jsonInput)
                } catch {
                    emit("[\(name)] error: \(error)")
                    continue
                }
                let receipt = replica.write(property, to: value)
                // Optimistic: the edit shows at once, before the host answers (the render
                // task might otherwise see it only after a fast rejection rolled it back).
                show()
                Task {
                    do {
                        _ = try await receipt.accepted()
                    } catch {
                        emit("[\(name)] rejected: \(error); showing \(replica[property] ?? .null) again")
                        show()
                    }
                }
            }
        }
        await stop.wait()
        edits.cancel()
        replica.close()
        renders.cancel()
        states.cancel()
    }
}
