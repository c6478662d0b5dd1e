import Foundation
import StateBusWire
import Testing

/// Types shaped like the models users declare.
struct Address: Codable, Equatable, Sendable {
    var street: String
    var zip: Int?
}

struct Person: Codable, Equatable, Sendable {
    enum Role: String, Codable, Sendable { case admin, editor }
    enum Status: Codable, Equatable, Sendable {
        case offline
        case busy(until: Date)
        case away(String, Int)
    }
    var name: String
    var age: UInt8
    var role: Role
    var status: Status
    var address: Address?
    var tags: [String]
    var scores: [String: Double]
    var byID: [Int: String]
    var avatar: Data
    var id: UUID
    var homepage: URL
    var joined: Date
}

@Suite("Value encoder and decoder")
struct ValueCodecTests {
    let encoder = ValueEncoder()
    let decoder = ValueDecoder()

    func roundTrip<T: Codable & Equatable>(_ value: T) throws -> T {
        try decoder.decode(T.self, from: try encoder.encode(value))
    }

    static let person = Person(
        name: "Ada", age: 36, role: .admin, status: .busy(until: Date(timeIntervalSince1970: 1_800_000_000.25)),
        address: Address(street: "Main", zip: nil), tags: ["a", "b"], scores: ["x": 1.5], byID: [1: "one", 2: "two"],
        avatar: Data([0, 1, 255]), id: UUID(), homepage: URL(string: "https://example.com/ada")!,
        joined: Date(timeIntervalSince1970: 1_700_000_000)
    )

    @Test("nested structs, enums with and without payloads, optionals and collections round-trip")
    func nestedRoundTrip() throws {
        #expect(try roundTrip(Self.person) == Self.person)
        var other = Self.person
        other.status = .away("lunch", 30)
        other.address = nil
        other.role = .editor
        #expect(try roundTrip(other) == other)
        other.status = .offline
        #expect(try roundTrip(other) == other)
        #expect(
            try roundTrip([Address(street: "a", zip: 1), Address(street: "b", zip: nil)]) == [
                Address(street: "a", zip: 1), Address(street: "b", zip: nil)
            ])
        #expect(try roundTrip([Int?.none, 3]) == [nil, 3])
    }

    @Test("encoded shapes are language-neutral")
    func shapes() throws {
        let address = try encoder.encode(Address(street: "Main", zip: 12345))
        #expect(address == .map(["street": .string("Main"), "zip": .int(12345)]))
        #expect(try encoder.encode(Date(timeIntervalSince1970: 12.5)) == .double(12.5))
        let id = UUID()
        #expect(try encoder.encode(id) == .string(id.uuidString))
        #expect(try encoder.encode(URL(string: "https://x.org/a")!) == .string("https://x.org/a"))
        #expect(try encoder.encode(Data([1, 2])) == .bytes(Data([1, 2])))
        #expect(try encoder.encode(Int?.none) == .null)
        #expect(try encoder.encode(["b": 1, "a": 2]) == .map(["a": .int(2), "b": .int(1)]))
        #expect(try encoder.encode(Person.Role.admin) == .string("admin"))
        #expect(try encoder.encode(UInt8.max) == .int(255))
    }

    @Test("integer boundaries and special doubles")
    func numbers() throws {
        #expect(try roundTrip(Int64.min) == .min)
        #expect(try roundTrip(Int64.max) == .max)
        #expect(try roundTrip(UInt8.max) == .max)
        #expect(try roundTrip(UInt64(Int64.max)) == UInt64(Int64.max))
        #expect(throws: EncodingError.self) { try encoder.encode(UInt64.max) }
        #expect(try roundTrip(-0.0).sign == .minus)
        #expect(try roundTrip(Double.infinity) == .infinity)
        #expect(try roundTrip(Double.nan).isNaN)
        #expect(try roundTrip(Float(1.5)) == 1.5)
        #expect(try decoder.decode(Double.self, from: .int(3)) == 3)
        #expect(try decoder.decode(Int.self, from: .double(4)) == 4)
    }

    @Test("decoding is strict: kinds, ranges, nulls and missing keys give errors that say where")
    func strictness() throws {
        func message(_ body: () throws -> Void) -> String {
            do {
                try body()
                return "no error"
            } catch { return "\(error)" }
        }
        let wrongKind = message { _ = try decoder.decode(Address.self, from: ["street": 1, "zip": 2]) }
        #expect(wrongKind.contains("expected string at street, found int 1"))
        let nested = message { _ = try decoder.decode([Address].self, from: [["street": "a", "zip": "x"]]) }
        #expect(nested.contains("expected int at [0].zip, found string \"x\""))
        let range = message { _ = try decoder.decode(UInt8.self, from: .int(300)) }
        #expect(range.contains("out of range for UInt8"))
        let fraction = message { _ = try decoder.decode(Int.self, from: .double(1.5)) }
        #expect(fraction.contains("expected an integer"))
        let missing = message { _ = try decoder.decode(Address.self, from: ["zip": 2]) }
        #expect(missing.contains("missing key 'street'"))
        let null = message { _ = try decoder.decode(Address.self, from: ["street": nil]) }
        #expect(null.contains("found null"))
        #expect(try decoder.decode(Address.self, from: ["street": "s", "zip": nil]) == Address(street: "s", zip: nil))
        #expect(throws: DecodingError.self) { try decoder.decode(UUID.self, from: "not-a-uuid") }
        #expect(throws: DecodingError.self) { try decoder.decode(String.self, from: .int(1)) }
        #expect(throws: DecodingError.self) { try decoder.decode(Bool.self, from: .int(1)) }
    }

    @Test("a Value nests inside a Codable model as itself")
    func valueInsideModel() throws {
        struct Envelope: Codable, Equatable { var payload: Value }
        let envelope = Envelope(payload: ["a": [1, "x", nil, true, 2.5]])
        #expect(try roundTrip(envelope) == envelope)
        #expect(try encoder.encode(envelope) == .map(["payload": envelope.payload]))
    }

    @Test("description is compact, sorted and escaped")
    func description() {
        let value: Value = ["b": [1, 2.5], "a": "x\"y\n", "c": nil, "d": .bytes(Data([0xAB]))]
        #expect(value.description == #"{"a": "x\"y\n", "b": [1, 2.5], "c": null, "d": <1 bytes: ab>}"#)
    }
}
