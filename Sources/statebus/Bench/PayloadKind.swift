import ArgumentParser
import StateBusWire

/// The kinds of value the throughput benchmark sends.
enum PayloadKind: String, CaseIterable, Sendable, Codable, ExpressibleByArgument {
    /// A 64-bit integer.
    case int
    /// A 256-byte string.
    case string
    /// A small struct: `{id: Int, name: String, done: Bool}`.
    case `struct`

    /// The property's declared kind on the host.
    var valueKind: ValueKind {
        switch self {
        case .int: .int
        case .string: .string
        case .struct: .map
        }
    }

    /// A name for tables.
    var label: String {
        switch self {
        case .int: "Int"
        case .string: "String(256 B)"
        case .struct: "struct"
        }
    }

    /// The `index`-th value sent (1-based); every one differs from the one before, so the
    /// final value tells which update was applied last.
    func value(_ index: Int) -> Value {
        switch self {
        case .int: return .int(Int64(index))
        case .string:
            // Made from a prepared buffer, as the raw baseline reuses its payload: building
            // the string a character at a time would charge StateBus for the bench's own work.
            var bytes = Self.filler
            var number = index
            var position = bytes.count - 1
            repeat {
                bytes[position] = UInt8(ascii: "0") + UInt8(number % 10)
                number /= 10
                position -= 1
            } while number > 0
            return .string(String(decoding: bytes, as: UTF8.self))
        case .struct:
            // A prepared map with the changing fields set, as a host's code changes the fields
            // of the struct it holds: building a dictionary from its literal each time (three
            // keys hashed and inserted into new storage) would charge StateBus for the bench's
            // own work, as building the string a character at a time would.
            var fields = Self.structFields
            fields["id"] = .int(Int64(index))
            fields["done"] = .bool(index % 2 == 0)
            return .map(fields)
        }
    }

    /// The struct payload's fields before `id` and `done` are set.
    private static let structFields: [String: Value] = ["id": .int(0), "name": .string("item"), "done": .bool(true)]

    /// 256 bytes of `x`, the string payload before its number is written into its end.
    private static let filler = [UInt8](repeating: UInt8(ascii: "x"), count: 256)

    /// The value's own bytes, which the raw baseline sends after its 8-byte sequence number:
    /// 8 for an Int, 256 for the string, 16 for the struct (an Int, a 4-byte string and a
    /// Bool, rounded up). StateBus's messages carry more (topic, object, epoch, sequence,
    /// property name): that overhead is part of what the ratio measures.
    var valueBytes: Int {
        switch self {
        case .int: 8
        case .string: 256
        case .struct: 16
        }
    }
}
