import Foundation

// The JSON gateway's scalar encodings: int64 fields travel as JSON strings (lease IDs exceed
// 2^53, past what a JSON number keeps exactly), bytes fields as standard base64 strings.

/// An int64 field: written as a JSON string, read from a string or a number.
struct WireInt64: Codable, Sendable, Equatable {
    var value: Int64

    init(_ value: Int64) { self.value = value }

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let text = try? container.decode(String.self) {
            guard let value = Int64(text) else {
                throw DecodingError.dataCorruptedError(in: container, debugDescription: "\"\(text)\" is not an int64")
            }
            self.value = value
        } else {
            value = try container.decode(Int64.self)
        }
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(String(value))
    }
}

/// A bytes field: standard base64 in JSON.
struct WireBytes: Codable, Sendable, Equatable {
    var bytes: [UInt8]

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let text = try container.decode(String.self)
        guard let data = Data(base64Encoded: text) else {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "\"\(text)\" is not base64")
        }
        bytes = Array(data)
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(Data(bytes).base64EncodedString())
    }
}

extension Optional where Wrapped == WireInt64 {
    /// The value, or 0 when the gateway left the field out (it omits default values).
    var orZero: Int64 { self?.value ?? 0 }
}

extension Optional where Wrapped == WireBytes {
    /// The bytes, or none when the gateway left the field out.
    var orEmpty: [UInt8] { self?.bytes ?? [] }
}
