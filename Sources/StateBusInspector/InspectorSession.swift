import Foundation
import HummingbirdWebSocket
import StateBus
import StateBusRuntime

/// One page's WebSocket: pushes the state when it changes and the figures each second, and
/// carries the page's edits to the host and their verdicts back.
struct InspectorSession: Sendable {
    let model: InspectorModel
    let outbound: WebSocketOutboundWriter

    /// Serves the page until it goes away.
    func run(inbound: WebSocketInboundStream) async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await push() }
            group.addTask {
                for try await message in inbound.messages(maxSize: 1 << 20) {
                    guard case .text(let text) = message else { continue }
                    if let write = try? JSONDecoder().decode(InspectorMessage.Write.self, from: Data(text.utf8)), write.type == "write" {
                        let verdict = await model.write(object: write.object, property: write.property, json: write.json)
                        try await outbound.write(.text(InspectorJSON.encode(verdict)))
                    } else if let seek = try? JSONDecoder().decode(InspectorMessage.Seek.self, from: Data(text.utf8)), seek.type == "seek" {
                        try await outbound.write(.text(InspectorJSON.encode(await model.seek(to: seek.sequence))))
                    }
                }
            }
            // The page closed (the reader ended) or the connection broke (either threw).
            _ = try await group.next()
            group.cancelAll()
        }
    }

    /// The state whenever it differs from what the page has (looked at ten times a second:
    /// a person reads no faster, and a burst of updates costs one message), and once a
    /// second the updates per second and the connected views.
    private func push() async throws {
        var shown: InspectorMessage.State?
        var lastStats = ContinuousClock.now
        var lastApplied = model.appliedUpdates
        try await sendStats(updatesPerSecond: 0)
        while !Task.isCancelled {
            let state = model.state()
            if state != shown {
                try await outbound.write(.text(InspectorJSON.encode(state)))
                shown = state
            }
            let now = ContinuousClock.now
            if now - lastStats >= .seconds(1) {
                let applied = model.appliedUpdates
                let seconds = (now - lastStats).inSeconds
                try await sendStats(updatesPerSecond: Double(applied - lastApplied) / seconds)
                lastApplied = applied
                lastStats = now
            }
            try await Task.sleep(for: .milliseconds(100))
        }
    }

    private func sendStats(updatesPerSecond: Double) async throws {
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
        try await outbound.write(.text(InspectorJSON.encode(stats)))
    }
}
