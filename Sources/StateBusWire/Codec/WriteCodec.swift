/// A view's write as it travels (`Request.write`, versions 1 and 2), in domain types.
package struct WireWrite: Sendable, Equatable {
    /// The request's `protocol_version`.
    package var protocolVersion: UInt32
    package var requestID: UInt64
    package var object: String
    package var writeID: UInt64
    package var viewID: String
    package var changes: [PropertyChange]

    package init(protocolVersion: UInt32, requestID: UInt64, object: String, writeID: UInt64, viewID: String, changes: [PropertyChange]) {
        self.protocolVersion = protocolVersion
        self.requestID = requestID
        self.object = object
        self.writeID = writeID
        self.viewID = viewID
        self.changes = changes
    }
}

/// The hot request and reply of the write path, by hand: a view's `Request` with a `write`
/// body, and the host's `Reply` with a `write_reply` body. Everything else, and any write
/// this fast path does not take, goes through the generated code.
package enum WriteCodec {
    /// The bytes of a `Request` carrying `write`.
    package static func request(_ write: WireWrite) -> [UInt8] {
        var out = WireWriter(capacity: 64 + write.viewID.utf8.count + write.object.utf8.count)
        out.field(1, varint: UInt64(write.protocolVersion))
        out.field(2, varint: write.requestID)
        out.field(
            12,
            message: { body in
                body.field(1, string: write.object)
                body.field(2, varint: write.writeID)
                for change in write.changes {
                    body.field(3, message: { ChangeCodec.write(change, into: &$0) })
                }
                body.field(4, string: write.viewID)
            })
        return out.bytes
    }

    /// Reads a `Request` whose body is `write`, with nothing this protocol does not define
    /// anywhere in it.
    /// - Returns: the write, or `nil` when the request is another one, or a write the fast
    ///   path does not take (unknown fields, non-canonical forms): decode it the general way,
    ///   which refuses or accepts it as the protocol says.
    package static func decodeWrite(_ buffer: UnsafeRawBufferPointer) -> WireWrite? {
        do {
            var reader = WireReader(buffer)
            var write = WireWrite(protocolVersion: 0, requestID: 0, object: "", writeID: 0, viewID: "", changes: [])
            var sawWrite = false
            while let (field, type) = try reader.nextField() {
                switch field {
                case 1:
                    try reader.expect(type, .varint, field: field)
                    write.protocolVersion = try reader.varint32()
                case 2:
                    try reader.expect(type, .varint, field: field)
                    write.requestID = try reader.varint()
                case 12:
                    try reader.expect(type, .lengthDelimited, field: field)
                    guard !sawWrite else { return nil }  // merged pieces: the general way
                    sawWrite = true
                    var body = try reader.nested()
                    while let (part, partType) = try body.nextField() {
                        switch part {
                        case 1:
                            try body.expect(partType, .lengthDelimited, field: part)
                            write.object = try body.string()
                        case 2:
                            try body.expect(partType, .varint, field: part)
                            write.writeID = try body.varint()
                        case 3:
                            try body.expect(partType, .lengthDelimited, field: part)
                            var change = try body.nested()
                            write.changes.append(try ChangeCodec.read(&change, depth: 3))
                        case 4:
                            try body.expect(partType, .lengthDelimited, field: part)
                            write.viewID = try body.string()
                        default:
                            return nil
                        }
                    }
                default:
                    return nil
                }
            }
            return sawWrite ? write : nil
        } catch {
            return nil
        }
    }

    /// The answer to a write, as ``reply(protocolVersion:requestID:writeID:outcome:)`` writes it.
    package enum Outcome: Sendable, Equatable {
        /// Applied at this sequence.
        case accepted(sequence: UInt64)
        /// Refused: the `Error` message's code (its wire number), message, object and property.
        case rejected(code: Int, message: String, object: String, property: String)
    }

    /// The bytes of a `Reply` carrying `write_reply`.
    package static func reply(protocolVersion: UInt32, requestID: UInt64, writeID: UInt64, outcome: Outcome) -> [UInt8] {
        var out = WireWriter(capacity: 32)
        out.field(1, varint: UInt64(protocolVersion))
        out.field(2, varint: requestID)
        out.field(
            12,
            message: { body in
                body.field(1, varint: writeID)
                switch outcome {
                case .accepted(let sequence):
                    body.field(2, bool: true)
                    body.field(3, varint: sequence)
                case .rejected(let code, let message, let object, let property):
                    body.field(
                        4,
                        message: { error in
                            error.field(1, varint: UInt64(UInt32(clamping: code)))
                            error.field(2, string: message)
                            error.field(3, string: object)
                            error.field(4, string: property)
                        })
                }
            })
        return out.bytes
    }

    /// A `Reply` with a `write_reply` body, read by hand.
    package struct DecodedReply: Sendable, Equatable {
        package var protocolVersion: UInt32
        package var requestID: UInt64
        package var writeID: UInt64
        package var outcome: Outcome

        package init(protocolVersion: UInt32, requestID: UInt64, writeID: UInt64, outcome: Outcome) {
            self.protocolVersion = protocolVersion
            self.requestID = requestID
            self.writeID = writeID
            self.outcome = outcome
        }
    }

    /// Reads a `Reply` whose body is `write_reply`.
    /// - Returns: `nil` for any other reply (decode it the general way).
    package static func decodeReply(_ buffer: UnsafeRawBufferPointer) -> DecodedReply? {
        do {
            var reader = WireReader(buffer)
            var version: UInt32 = 0
            var requestID: UInt64 = 0
            var writeID: UInt64 = 0
            var accepted = false
            var sequence: UInt64 = 0
            var rejection: (code: Int, message: String, object: String, property: String)?
            var sawBody = false
            while let (field, type) = try reader.nextField() {
                switch field {
                case 1:
                    try reader.expect(type, .varint, field: field)
                    version = try reader.varint32()
                case 2:
                    try reader.expect(type, .varint, field: field)
                    requestID = try reader.varint()
                case 12:
                    try reader.expect(type, .lengthDelimited, field: field)
                    guard !sawBody else { return nil }
                    sawBody = true
                    var body = try reader.nested()
                    while let (part, partType) = try body.nextField() {
                        switch part {
                        case 1:
                            try body.expect(partType, .varint, field: part)
                            writeID = try body.varint()
                        case 2:
                            try body.expect(partType, .varint, field: part)
                            accepted = try body.varint() != 0
                        case 3:
                            try body.expect(partType, .varint, field: part)
                            sequence = try body.varint()
                        case 4:
                            try body.expect(partType, .lengthDelimited, field: part)
                            var error = try body.nested()
                            var found = (code: 0, message: "", object: "", property: "")
                            while let (item, itemType) = try error.nextField() {
                                switch item {
                                case 1:
                                    try error.expect(itemType, .varint, field: item)
                                    found.code = Int(Int32(truncatingIfNeeded: try error.varint()))
                                case 2:
                                    try error.expect(itemType, .lengthDelimited, field: item)
                                    found.message = try error.string()
                                case 3:
                                    try error.expect(itemType, .lengthDelimited, field: item)
                                    found.object = try error.string()
                                case 4:
                                    try error.expect(itemType, .lengthDelimited, field: item)
                                    found.property = try error.string()
                                default:
                                    try error.skip(itemType)
                                }
                            }
                            rejection = found
                        default:
                            try body.skip(partType)
                        }
                    }
                case 10, 11, 13, 14, 15, 16, 17:
                    return nil  // another body
                default:
                    try reader.skip(type)
                }
            }
            guard sawBody else { return nil }
            let outcome: Outcome =
                accepted
                ? .accepted(sequence: sequence)
                : .rejected(
                    code: rejection?.code ?? 0, message: rejection?.message ?? "", object: rejection?.object ?? "",
                    property: rejection?.property ?? "")
            return DecodedReply(protocolVersion: version, requestID: requestID, writeID: writeID, outcome: outcome)
        } catch {
            return nil
        }
    }
}
