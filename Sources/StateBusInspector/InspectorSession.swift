import Foundation
import StateBus
import StateBusHTTP
import StateBusRuntime

/// One page's event stream: pushes the state when it changes and the figures each second,
/// until the page goes (its stream closes).
struct InspectorSession: Sendable {
    let model: InspectorModel
    let stream: HTTPEventStream

    /// The state whenever it differs from what the page has (looked at ten times a second:
    /// a person reads no faster, and a burst of updates costs one message), and once a
    /// second the updates per second and the connected views.
    func run() async {
        var shown: InspectorMessage.State?
        var lastStats = ContinuousClock.now
        var lastApplied = model.appliedUpdates
        await sendStats(updatesPerSecond: 0)
        while !stream.isClosed, !Task.isCancelled {
            let state = model.state()
            if state != shown {
                guard stream.send(InspectorJSON.encode(state)) else { return }
                shown = state
            }
            let now = ContinuousClock.now
            if now - lastStats >= .seconds(1) {
                let applied = model.appliedUpdates
                let seconds = (now - lastStats).inSeconds
                await sendStats(updatesPerSecond: Double(applied - lastApplied) / seconds)
                lastApplied = applied
                lastStats = now
            }
            // The page's refresh rate, not a wait for an event.
            try? await Task.sleep(for: .milliseconds(100))
        }
    }

    private func sendStats(updatesPerSecond: Double) async {
        var stats = InspectorMessage.Stats(updatesPerSecond: updatesPerSecond, views: [], viewsOmitted: 0)
        do {
            let list = try await ConnectedView.list(controlEndpoint: model.controlEndpoint, timeout: .seconds(2), security: model.security)
            stats.views = list.views.map { view in
                InspectorMessage.View(
                    viewID: view.viewID, node: view.nodeName, relay: view.isRelay,
                    connectedSeconds: Double(view.connectedFor.components.seconds), key: view.keyName)
            }
            stats.viewsOmitted = list.omitted
        } catch {
            stats.viewsError = "\(error)"
        }
        stream.send(InspectorJSON.encode(stats))
    }
}
