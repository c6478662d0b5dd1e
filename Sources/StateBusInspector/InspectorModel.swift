import Foundation
import StateBus
import StateBusRuntime
import StateBusWire
import ZeroMQ

/// What the inspector sees of a host: its description and one live ``Replica`` per object,
/// all on one I/O loop. The inspector is a view like any other: it joins, follows and writes
/// through the public protocol.
final class InspectorModel: Sendable {
    let controlEndpoint: String
    let description: HostDescription
    /// One replica per object, by name.
    let replicas: [String: Replica]
    let security: ReplicaSecurity?
    /// The recorded history being scrubbed, and where the host stands in it.
    let timeline: InspectorTimeline?
    private let position: Locked<UInt64>
    private let loop: IOLoop

    /// Asks the host for its description and joins every object it serves.
    /// - Throws: the host's error, or a timeout when nothing answers within `timeout`.
    init(controlEndpoint: String, security: ReplicaSecurity?, timeout: Duration, timeline: InspectorTimeline? = nil) async throws {
        self.controlEndpoint = controlEndpoint
        self.security = security
        self.timeline = timeline
        position = Locked(timeline?.last ?? 0)
        description = try await HostDescription.fetch(controlEndpoint: controlEndpoint, timeout: timeout, security: security)
        let loop = try IOLoop(context: try Context(), name: "statebus-inspect")
        self.loop = loop
        var replicas: [String: Replica] = [:]
        for object in description.objects.keys {
            var configuration = ReplicaConfiguration(nodeName: "statebus-inspect")
            configuration.security = security
            replicas[object] = try Replica(object: object, controlEndpoint: controlEndpoint, configuration: configuration, loop: loop)
        }
        self.replicas = replicas
    }

    /// Closes every replica (each says goodbye) and the loop.
    func close() {
        for replica in replicas.values { replica.close() }
        loop.shutdown()
    }

    /// Update batches applied by all replicas so far.
    var appliedUpdates: Int { replicas.values.reduce(0) { $0 + $1.statistics.appliedUpdates } }

    /// The page's picture of every object now.
    func state() -> InspectorMessage.State {
        let objects = description.objects.keys.sorted().map { name -> InspectorMessage.Object in
            let replica = replicas[name]
            let (_, sequence, values, connection) =
                replica?.consistentState ?? (0, 0, [:], .connecting)
            let properties = (description.objects[name] ?? []).map { property -> InspectorMessage.Property in
                let value = values[property.name]
                var text: String?
                if property.kind == .string, case .string(let string)? = value { text = string }
                return InspectorMessage.Property(
                    name: property.name, type: property.typeName, isString: property.kind == .string, writable: property.isWritable,
                    persisted: property.isPersisted, json: value.map(InspectorJSON.text) ?? "null", text: text)
            }
            return InspectorMessage.Object(name: name, connection: connection.description, sequence: sequence, properties: properties)
        }
        // The host that serves now: for a group's hosts, the leader, which changes.
        let serving = replicas.values.lazy.compactMap(\.welcomedBy).first
        let listed = controlEndpoint.split(separator: ",").map(String.init)
        return InspectorMessage.State(
            host: serving?.name ?? description.name, endpoint: serving?.controlEndpoint ?? controlEndpoint,
            group: listed.count > 1 ? listed : nil, objects: objects,
            timeline: timeline.map {
                InspectorMessage.Timeline(first: $0.first, last: $0.last, at: position.withLock { $0 }, sequences: $0.sequences)
            })
    }

    /// Moves the recorded history's host to `sequence` (the page's slider).
    /// - Returns: where it stands now, or why it could not move.
    func seek(to sequence: UInt64) async -> InspectorMessage.Position {
        guard let timeline else { return .init(at: 0, error: "this inspector shows a live host, not a recording") }
        let target = timeline.sequences.last { $0 <= sequence } ?? timeline.first
        do {
            let (epoch, sequence) = try await timeline.seek(target)
            // Answer once every replica shows the host's new state, so the page's next state
            // is the recording at `target`.
            for replica in replicas.values {
                try await replica.waitFor(timeout: .seconds(10), "the host at recorded sequence \(target)") { replica in
                    let state = replica.consistentState
                    return state.connection == .live && state.epoch == epoch && state.sequence == sequence
                }
            }
            position.withLock { $0 = target }
            return .init(at: target, error: nil)
        } catch {
            return .init(at: position.withLock { $0 }, error: "\(error)")
        }
    }

    /// Writes `json` (a JSON value) to `property` of `object` and waits for the host's verdict.
    /// - Returns: the verdict for the page: accepted with its sequence, or the reason.
    func write(object: String, property: String, json: String) async -> InspectorMessage.Verdict {
        let started = ContinuousClock.now
        guard let replica = replicas[object] else {
            return .init(object: object, property: property, accepted: false, reason: "this host serves no object '\(object)'", roundTripMs: nil)
        }
        let value: Value
        do {
            value = try JSONDecoder().decode(Value.self, from: Data(json.utf8))
        } catch {
            return .init(
                object: object, property: property, accepted: false,
                reason: "'\(json)' is not a JSON value: write numbers and true/false as is, strings in double quotes", roundTripMs: nil)
        }
        // What the field shows once the verdict is in: the value now (rolled back after a
        // rejection).
        func shown() -> String? {
            guard let value = replica[property] else { return nil }
            if case .string(let text) = value, description.objects[object]?.first(where: { $0.name == property })?.kind == .string { return text }
            return InspectorJSON.text(value)
        }
        do {
            let sequence = try await replica.write(property, to: value).accepted()
            let elapsed = ContinuousClock.now - started
            return .init(
                object: object, property: property, accepted: true, reason: "accepted at sequence \(sequence)",
                roundTripMs: elapsed.inSeconds * 1_000, shown: shown())
        } catch {
            return .init(object: object, property: property, accepted: false, reason: "\(error)", roundTripMs: nil, shown: shown())
        }
    }
}

/// Values as the page shows them: compact JSON with sorted keys.
enum InspectorJSON {
    static func text(_ value: Value) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return (try? encoder.encode(value)).map { String(decoding: $0, as: UTF8.self) } ?? value.description
    }

    static func encode(_ message: some Encodable) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return (try? encoder.encode(message)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
    }
}
