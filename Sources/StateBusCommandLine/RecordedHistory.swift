import Foundation
import StateBus
import StateBusWire
import SwiftProtobuf

/// A recording read for replay: the object's definition (read-only, starting from the
/// recorded snapshot) and the batches after it.
package struct RecordedHistory {
    package struct Step {
        package let time: UInt64
        package let sequence: UInt64
        package let changes: [PropertyChange]
    }

    package let object: String
    package let definition: ObjectDefinition
    package let firstSequence: UInt64
    package let lastSequence: UInt64
    package let steps: [Step]

    package init(path: String) throws {
        let (header, records) = try Recording.read(path: path)
        object = header.object
        var welcome: Statebus_V1_Welcome?
        var snapshot: [Statebus_V1_PropertyState] = []
        var first: UInt64?
        var sequence: UInt64 = 0
        var pendingChunks: [Statebus_V1_PropertyState] = []
        var steps: [Step] = []
        for record in records {
            let bytes = [UInt8](Data(base64Encoded: record.bytes) ?? Data())
            switch record.kind {
            case "welcome":
                welcome = try Statebus_V1_Welcome(serializedBytes: bytes)
            case "chunk":
                let chunk = try Statebus_V1_SnapshotChunk(serializedBytes: bytes)
                pendingChunks += chunk.properties
                guard chunk.last else { continue }
                if first == nil {
                    first = chunk.sequence
                    snapshot = pendingChunks
                } else {
                    // A later snapshot (the recorder fell behind): its values, as one batch.
                    steps.append(
                        Step(
                            time: record.t, sequence: chunk.sequence,
                            changes: pendingChunks.map { PropertyChange($0.name, to: Value(wire: $0.value)) }))
                }
                sequence = chunk.sequence
                pendingChunks = []
            case "publication":
                let publication = try Statebus_V1_Publication(serializedBytes: bytes)
                for batch in publication.updates where batch.object == header.object && batch.sequence > sequence {
                    steps.append(Step(time: record.t, sequence: batch.sequence, changes: batch.changes.map(PropertyChange.init(wire:))))
                    sequence = batch.sequence
                }
            default:
                throw RecordingError("\(path): a record of unknown kind '\(record.kind)'")
            }
        }
        guard let welcome, let schema = welcome.objects.first(where: { $0.name == header.object }), let first else {
            throw RecordingError("\(path) has no welcome and snapshot of \(header.object): it was cut short before recording began")
        }
        let values = Dictionary(snapshot.map { ($0.name, Value(wire: $0.value)) }, uniquingKeysWith: { _, last in last })
        definition = ObjectDefinition(
            header.object,
            properties: schema.properties.map { property in
                PropertyDefinition(property.name, kind: ValueKind(wire: property.kind), default: values[property.name] ?? .null, writable: false)
            })
        firstSequence = first
        lastSequence = sequence
        self.steps = steps
    }
}
