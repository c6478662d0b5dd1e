/// The envelope of a `Reply`, read by hand: its version, request id and which body it
/// carries, so a view hands the hot bodies (a write's answer, a snapshot part) to their fast
/// readers and decodes the others with the generated code.
package struct ReplyEnvelope: Sendable, Equatable {
    /// `Reply.protocol_version`.
    package var protocolVersion: UInt32 = 0
    /// `Reply.request_id`.
    package var requestID: UInt64 = 0
    /// The body's field number (10 welcome, 11 snapshot chunk, 12 write reply, 13 error,
    /// 14 pong, 15 call reply, 16 view list, 17 snapshot part), or 0 when there is none.
    package var body: UInt32 = 0
    /// Where the body's bytes are.
    package var bodyRange: Range<Int> = 0..<0

    /// The field number of a welcome.
    package static let welcome: UInt32 = 10
    /// The field number of a version-2 snapshot part.
    package static let snapshotPart: UInt32 = 17
    /// The field number of a write's answer.
    package static let writeReply: UInt32 = 12

    /// Reads the envelope of the reply in `buffer`.
    /// - Returns: `nil` when the bytes are not a plain reply (malformed, or a body in several
    ///   pieces): decode it the general way.
    package init?(_ buffer: UnsafeRawBufferPointer) {
        var reader = WireReader(buffer)
        do {
            while let (field, type) = try reader.nextField() {
                switch field {
                case 1:
                    guard type == .varint else { return nil }
                    protocolVersion = try reader.varint32()
                case 2:
                    guard type == .varint else { return nil }
                    requestID = try reader.varint()
                case 10...17:
                    guard type == .lengthDelimited, body == 0 else { return nil }
                    body = field
                    bodyRange = try reader.lengthDelimited()
                default:
                    try reader.skip(type)
                }
            }
        } catch {
            return nil
        }
    }
}
