/// One step into a nested value: a map key (a struct field), a list index, or the element
/// of a keyed collection with a given id.
public enum PathComponent: Hashable, Sendable {
    /// A map key or struct field.
    case key(String)
    /// A list position, from 0.
    case index(Int)
    /// The element of a list (a keyed collection, such as an `IdentifiedArray`) whose
    /// `"id"` field equals this value: it stays the same element when others are inserted,
    /// removed or moved around it.
    case id(Value)
}

/// A path into a nested value, such as `user.email` or `items[2].name`, so a write can
/// change one field of a struct and leave its siblings to other writers.
public struct ValuePath: Hashable, Sendable, CustomStringConvertible, ExpressibleByArrayLiteral {
    /// The steps, outermost first.
    public var components: [PathComponent]

    /// Creates a path from steps.
    public init(_ components: [PathComponent]) { self.components = components }

    /// Creates a path from steps: `["user", .index(0)]` style literals use `.key` for strings.
    public init(arrayLiteral elements: PathComponent...) { components = elements }

    /// The empty path: the whole value.
    public static let root = ValuePath([])

    /// Parses `user.email`, `items[2].name`, `todos[id="a1"].done` (the element of a keyed
    /// collection with that id; `[id=7]` for a number) or `""` (the root).
    ///
    /// Keys are letters, digits, `_` and `-`; any other key is written in brackets and
    /// quotes: `["a.b"]`.
    /// - Throws: ``ValuePathError`` naming the position and what was wrong.
    public init(parsing text: String) throws(ValuePathError) {
        var components: [PathComponent] = []
        let characters = Array(text)
        var position = 0
        func fail(_ reason: String) -> ValuePathError {
            ValuePathError(path: text, reason: "at character \(position + 1): \(reason)")
        }
        func isKeyCharacter(_ character: Character) -> Bool {
            character.isLetter || character.isNumber || character == "_" || character == "-"
        }
        var expectKey = true
        while position < characters.count {
            let character = characters[position]
            if character == "[" {
                position += 1
                if characters[position...].starts(with: "id=") {
                    // [id="text"] or [id=42]: the element of a keyed collection.
                    position += 3
                    var token = ""
                    if position < characters.count, characters[position] == "\"" {
                        position += 1
                        while position < characters.count, characters[position] != "\"" {
                            token.append(characters[position])
                            position += 1
                        }
                        guard position + 1 < characters.count, characters[position + 1] == "]" else {
                            throw fail("expected \"] to close an element id")
                        }
                        position += 2
                        components.append(.id(.string(token)))
                    } else {
                        while position < characters.count, characters[position] == "-" || characters[position].isNumber {
                            token.append(characters[position])
                            position += 1
                        }
                        guard let number = Int64(token) else { throw fail("expected an element id: a number, or text in quotes") }
                        guard position < characters.count, characters[position] == "]" else { throw fail("expected ] after the element id") }
                        position += 1
                        components.append(.id(.int(number)))
                    }
                } else if position < characters.count, characters[position] == "\"" {
                    position += 1
                    var key = ""
                    while position < characters.count, characters[position] != "\"" {
                        key.append(characters[position])
                        position += 1
                    }
                    guard position + 1 < characters.count, characters[position + 1] == "]" else {
                        throw fail("expected \"] to close a quoted key")
                    }
                    position += 2
                    components.append(.key(key))
                } else {
                    var digits = ""
                    while position < characters.count, characters[position].isNumber {
                        digits.append(characters[position])
                        position += 1
                    }
                    guard !digits.isEmpty, let index = Int(digits) else { throw fail("expected a list index") }
                    guard position < characters.count, characters[position] == "]" else { throw fail("expected ] after the index") }
                    position += 1
                    components.append(.index(index))
                }
                expectKey = false
            } else if character == "." {
                guard !components.isEmpty, !expectKey else { throw fail("a key was expected before '.'") }
                position += 1
                expectKey = true
                guard position < characters.count else { throw fail("the path ends with '.'") }
            } else if isKeyCharacter(character) {
                guard expectKey else { throw fail("expected '.' or '[' before '\(character)'") }
                var key = ""
                while position < characters.count, isKeyCharacter(characters[position]) {
                    key.append(characters[position])
                    position += 1
                }
                components.append(.key(key))
                expectKey = false
            } else {
                throw fail("'\(character)' cannot appear here; quote unusual keys as [\"key\"]")
            }
        }
        self.components = components
    }

    /// The path with one more step.
    public func appending(_ component: PathComponent) -> ValuePath {
        ValuePath(components + [component])
    }

    /// The path with the steps of another after it.
    public func appending(_ other: ValuePath) -> ValuePath {
        ValuePath(components + other.components)
    }

    /// The path in the syntax ``init(parsing:)`` reads.
    public var description: String {
        var text = ""
        for component in components {
            switch component {
            case .index(let index): text += "[\(index)]"
            case .id(.int(let number)): text += "[id=\(number)]"
            case .id(.string(let string)): text += "[id=\"\(string)\"]"
            case .id(let other): text += "[id=\(other)]"
            case .key(let key):
                let plain = !key.isEmpty && key.allSatisfy { $0.isLetter || $0.isNumber || $0 == "_" || $0 == "-" }
                if plain { text += text.isEmpty ? key : ".\(key)" } else { text += "[\"\(key)\"]" }
            }
        }
        return text
    }
}

extension PathComponent: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral {
    /// A string literal is a key.
    public init(stringLiteral value: String) { self = .key(value) }
    /// An integer literal is an index.
    public init(integerLiteral value: Int) { self = .index(value) }
}

/// A path that cannot be parsed or does not lead into a value.
public struct ValuePathError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The path, as text.
    public let path: String
    /// What was wrong.
    public let reason: String

    /// Creates an error.
    public init(path: String, reason: String) {
        self.path = path
        self.reason = reason
    }

    /// "invalid path 'a..b': at character 3: …".
    public var description: String { "invalid path '\(path)': \(reason)" }
}
