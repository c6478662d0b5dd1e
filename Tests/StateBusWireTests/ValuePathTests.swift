import StateBusWire
import Testing

@Suite("Paths into nested values")
struct ValuePathTests {
    let user: Value = ["username": "anna", "email": "a@x.org", "tags": ["a", "b"], "address": ["zip": 1]]

    @Test("parsing and printing round-trip")
    func parsing() throws {
        #expect(try ValuePath(parsing: "user.email").components == [.key("user"), .key("email")])
        #expect(try ValuePath(parsing: "items[2].name").components == [.key("items"), .index(2), .key("name")])
        #expect(try ValuePath(parsing: "").components.isEmpty)
        #expect(try ValuePath(parsing: #"["a.b"].c"#).components == [.key("a.b"), .key("c")])
        for text in ["user.email", "items[2].name", #"["a.b"].c"#, "[0][1]"] {
            #expect(try ValuePath(parsing: text).description == text)
        }
    }

    @Test("invalid paths say where and why")
    func invalid() {
        #expect(throws: ValuePathError(path: "a..b", reason: "at character 3: a key was expected before '.'")) { try ValuePath(parsing: "a..b") }
        #expect(throws: ValuePathError(path: "a.", reason: "at character 3: the path ends with '.'")) { try ValuePath(parsing: "a.") }
        #expect(throws: ValuePathError.self) { try ValuePath(parsing: "a[x]") }
        #expect(throws: ValuePathError.self) { try ValuePath(parsing: "a b") }
    }

    @Test("reading and setting parts of a value")
    func setAndGet() throws {
        #expect(user[["email"]] == "a@x.org")
        #expect(user[["tags", .index(1)]] == "b")
        #expect(user[["nope"]] == nil)
        let changed = try user.setting("b@x.org", at: ["email"])
        #expect(changed[["email"]] == "b@x.org")
        #expect(changed[["username"]] == "anna")
        #expect(try user.setting(2, at: ["address", "zip"])[["address", "zip"]] == 2)
        #expect(try user.setting("new", at: ["nickname"])[["nickname"]] == "new")  // a map gains a key
        #expect(throws: ValuePathError.self) { try user.setting(1, at: ["tags", .index(5)]) }
        #expect(throws: ValuePathError.self) { try user.setting(1, at: ["email", "x"]) }
        #expect(throws: ValuePathError.self) { try user.setting(1, at: ["missing", "x"]) }
        #expect(try user.setting("whole", at: .root) == "whole")
    }

    @Test("wire conversion keeps values and paths")
    func wire() throws {
        let path = try ValuePath(parsing: "a[3].b")
        #expect(ValuePath(wire: path.wire) == path)
        #expect(Value(wire: user.wire) == user)
        let all: Value = [nil, true, 1, 2.5, "s", .bytes(.init([1])), [1], ["k": 1]]
        #expect(Value(wire: all.wire) == all)
    }
}
