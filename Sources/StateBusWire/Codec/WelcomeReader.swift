import Foundation

/// A version-2 welcome, read by hand for one object: what a view needs of it, with that
/// object's property table read straight from the frame (no copy of the frame, no arrays of
/// the columns the view does not use). A welcome to a view of 100,000 properties is about a
/// megabyte; the generated code holds it twice over while it decodes.
package struct WelcomeReader: Sendable {
    package var epoch: UInt64 = 0
    package var updatesEndpoint = ""
    package var hostName = ""
    package var heartbeatIntervalMs: UInt32 = 0
    package var maxMessageBytes: UInt64 = 0
    package var sessionToken: [UInt8] = []
    package var schemaHash: UInt64 = 0
    /// The host grants confirmation by echo on this connection (`Welcome.confirms_by_echo`).
    package var confirmsByEcho = false
    /// Every object's name, in the welcome's order (their indexes).
    package var objectNames: [String] = []
    /// The object asked for: its index, and its properties' names and kinds.
    package var object: (index: Int, names: [String], kinds: [ValueKind?])?

    /// Reads the welcome in `buffer[range]` (a reply's `welcome` body), keeping the property
    /// table of the object named `name`.
    /// - Throws: `WireDecodingError` when the bytes are not a valid welcome.
    package init(_ buffer: UnsafeRawBufferPointer, range: Range<Int>, object name: String) throws(WireDecodingError) {
        var reader = WireReader(buffer, range: range)
        while let (field, type) = try reader.nextField() {
            switch (field, type) {
            case (1, .varint): epoch = try reader.varint()
            case (2, .lengthDelimited): updatesEndpoint = try reader.string()
            case (3, .lengthDelimited): hostName = try reader.string()
            case (4, .lengthDelimited):
                var schema = try reader.nested()
                var objectName = ""
                var table: Range<Int>?
                while let (part, partType) = try schema.nextField() {
                    switch (part, partType) {
                    case (1, .lengthDelimited): objectName = try schema.string()
                    case (4, .lengthDelimited): table = try schema.lengthDelimited()
                    default: try schema.skip(partType)
                    }
                }
                if objectName == name, object == nil {
                    object = (objectNames.count, [], [])
                    if let table { try readTable(buffer, range: table) }
                }
                objectNames.append(objectName)
            case (5, .varint): heartbeatIntervalMs = try reader.varint32()
            case (6, .varint): maxMessageBytes = try reader.varint()
            case (7, .lengthDelimited): sessionToken = try reader.bytes()
            case (8, .fixed64): schemaHash = try reader.fixed64()
            case (9, .varint): confirmsByEcho = try reader.varint() != 0
            default: try reader.skip(type)
            }
        }
    }

    /// Reads a `PropertyTable`'s names and kinds into ``object``.
    private mutating func readTable(_ buffer: UnsafeRawBufferPointer, range: Range<Int>) throws(WireDecodingError) {
        var reader = WireReader(buffer, range: range)
        // Counted first, so the arrays are made once at their size.
        let count = reader.countFields(1)
        var names: [String] = []
        var kinds: [ValueKind?] = []
        names.reserveCapacity(count)
        kinds.reserveCapacity(count)
        while let (field, type) = try reader.nextField() {
            switch (field, type) {
            case (1, .lengthDelimited):
                names.append(try reader.string())
            case (2, .lengthDelimited):
                var packed = try reader.nested()
                while !packed.isAtEnd { kinds.append(Self.kind(try packed.varint())) }
            case (2, .varint):
                kinds.append(Self.kind(try reader.varint()))
            default:
                try reader.skip(type)
            }
        }
        object?.names = names
        object?.kinds = kinds
    }

    /// The same summary of a welcome the generated code decoded (a form the fast reader
    /// refused).
    package init(_ welcome: Statebus_V1_Welcome, object name: String) {
        epoch = welcome.epoch
        updatesEndpoint = welcome.updatesEndpoint
        hostName = welcome.hostName
        heartbeatIntervalMs = welcome.heartbeatIntervalMs
        maxMessageBytes = welcome.maxMessageBytes
        sessionToken = Array(welcome.sessionToken)
        schemaHash = welcome.schemaHash
        confirmsByEcho = welcome.confirmsByEcho
        objectNames = welcome.objects.map(\.name)
        if let index = objectNames.firstIndex(of: name) {
            let table = welcome.objects[index].propertyTable
            object = (index, table.names, table.kinds.map(ValueKind.init(wire:)))
        }
    }

    /// The kind of a `ValueKind` number read by hand (`nil`: any, or one this view does not know).
    private static func kind(_ number: UInt64) -> ValueKind? {
        ValueKind(wire: Statebus_V1_ValueKind(rawValue: Int(truncatingIfNeeded: number)) ?? .any)
    }
}
