import Foundation
import ZeroMQ

/// The clients a host admits, each with a role: the authorized keys file.
///
/// One client per line, `ROLE PUBLIC-KEY NAME`; `#` starts a comment line:
///
/// ```
/// # who may read and write this host's objects
/// write  Yne@$w-vo<fVvi]a<NY6T1ed:M$fCG*[IaLV{hID  editor
/// write:Profile,SharedData  e8@z...  profile-app
/// read   rq:rM>}U?@Lns47E1%kR.o@n%FcmmsL/@{H8]yf7  dashboard
/// ```
///
/// Roles: `read` joins and follows every object; `write` also writes every object;
/// `write:A,B` writes only objects `A` and `B` (and reads all); `relay` is a relay
/// (`statebus relay`), which reads every object and forwards the writes of the views joined
/// to it, each under its own view id (its own authorized keys file decides what each of its
/// views may do). The name is for logs.
public struct AuthorizedKeys: Sendable, Hashable {
    /// What a key may do.
    public enum Role: Sendable, Hashable, CustomStringConvertible {
        /// Join and follow every object; no writes.
        case read
        /// Also write: every object (`nil`), or only those named.
        case write(objects: Set<String>?)
        /// A relay: reads every object and writes for the views joined to it.
        case relay

        /// Whether the role may write to `object`.
        public func mayWrite(_ object: String) -> Bool {
            switch self {
            case .read: false
            case .write(let objects): objects?.contains(object) ?? true
            case .relay: true
            }
        }

        /// The role as the file spells it.
        public var description: String {
            switch self {
            case .read: "read"
            case .write(nil): "write"
            case .write(let objects?): "write:" + objects.sorted().joined(separator: ",")
            case .relay: "relay"
            }
        }
    }

    /// One admitted client.
    public struct Entry: Sendable, Hashable {
        /// What it may do.
        public var role: Role
        /// Its CURVE public key, Z85.
        public var publicKey: String
        /// A name for logs.
        public var name: String

        /// Creates an entry.
        public init(role: Role, publicKey: String, name: String) {
            self.role = role
            self.publicKey = publicKey
            self.name = name
        }
    }

    /// The entries, in file order.
    public let entries: [Entry]
    private let byKey: [String: Entry]

    /// Makes the list from entries.
    /// - Throws: ``AuthorizedKeysError`` when a key is invalid or listed twice.
    public init(_ entries: [Entry]) throws(AuthorizedKeysError) {
        var byKey: [String: Entry] = [:]
        for (index, entry) in entries.enumerated() {
            guard (try? Z85.decode(entry.publicKey))?.count == 32 else {
                throw AuthorizedKeysError(file: "(entries)", line: index + 1, "'\(entry.publicKey)' is not a CURVE public key (40 characters of Z85)")
            }
            guard byKey.updateValue(entry, forKey: entry.publicKey) == nil else {
                throw AuthorizedKeysError(file: "(entries)", line: index + 1, "the key of '\(entry.name)' is listed twice")
            }
        }
        self.entries = entries
        self.byKey = byKey
    }

    /// The entry of a public key, if it is listed.
    public func entry(for publicKey: String) -> Entry? { byKey[publicKey] }

    /// Reads an authorized keys file.
    /// - Parameter path: the file.
    /// - Throws: ``AuthorizedKeysError`` with the file and line of the first thing wrong, or
    ///   when the file cannot be read or others may change it.
    public init(contentsOf path: String) throws(AuthorizedKeysError) {
        var status = stat()
        guard stat(path, &status) == 0 else {
            throw AuthorizedKeysError(file: path, line: 0, "cannot read it: \(String(cString: strerror(errno)))")
        }
        // Whoever may change the file decides who gets in.
        guard status.st_mode & 0o022 == 0 else {
            throw AuthorizedKeysError(
                file: path, line: 0,
                "its mode is 0\(String(status.st_mode & 0o777, radix: 8)): others may change who gets in; run `chmod go-w \(path)`")
        }
        let text: String
        do {
            text = try String(contentsOfFile: path, encoding: .utf8)
        } catch {
            throw AuthorizedKeysError(file: path, line: 0, "cannot read it: \(error.localizedDescription)")
        }
        try self.init(parsing: text, file: path)
    }

    /// Parses the text of an authorized keys file.
    /// - Parameters:
    ///   - text: the file's contents.
    ///   - file: its name, for errors.
    /// - Throws: ``AuthorizedKeysError`` naming the line and what is wrong with it.
    public init(parsing text: String, file: String) throws(AuthorizedKeysError) {
        var entries: [Entry] = []
        var lines: [String: Int] = [:]
        for (index, rawLine) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = index + 1
            let trimmed = rawLine.trimmingCharacters(in: .whitespaces)
            if trimmed.isEmpty || trimmed.hasPrefix("#") { continue }
            let fields = trimmed.split(maxSplits: 2, whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init)
            guard fields.count == 3 else {
                throw AuthorizedKeysError(
                    file: file, line: line, "expected ROLE PUBLIC-KEY NAME, for example `read rq:rM>}U?@Lns47E1%kR.o@n%FcmmsL/@{H8]yf7 dashboard`")
            }
            let role = try Self.role(fields[0], file: file, line: line)
            let key = fields[1]
            guard key.utf8.count == 40, (try? Z85.decode(key))?.count == 32 else {
                throw AuthorizedKeysError(
                    file: file, line: line, "'\(key)' is not a CURVE public key (40 characters of Z85, as in the .pub file `statebus keygen` writes)")
            }
            if let first = lines[key] {
                throw AuthorizedKeysError(file: file, line: line, "this key is listed already on line \(first); give each key one line and one role")
            }
            lines[key] = line
            entries.append(Entry(role: role, publicKey: key, name: fields[2].trimmingCharacters(in: .whitespaces)))
        }
        try self.init(entries)
    }

    private static func role(_ text: String, file: String, line: Int) throws(AuthorizedKeysError) -> Role {
        if text == "read" { return .read }
        if text == "write" { return .write(objects: nil) }
        if text == "relay" { return .relay }
        if text.hasPrefix("write:") {
            let objects = text.dropFirst("write:".count).split(separator: ",", omittingEmptySubsequences: false).map(String.init)
            guard !objects.isEmpty, !objects.contains(where: \.isEmpty) else {
                throw AuthorizedKeysError(file: file, line: line, "'\(text)' names no object (or an empty one): write:Obj1,Obj2, without spaces")
            }
            return .write(objects: Set(objects))
        }
        throw AuthorizedKeysError(file: file, line: line, "unknown role '\(text)': use read, write, write:Obj1,Obj2 or relay")
    }
}

/// What is wrong with an authorized keys file, and where.
public struct AuthorizedKeysError: Error, Sendable, CustomStringConvertible {
    /// The file.
    public let file: String
    /// The line (1-based; 0 for the file as a whole).
    public let line: Int
    /// What is wrong and what to do.
    public let message: String

    /// Creates an error.
    public init(file: String, line: Int, _ message: String) {
        self.file = file
        self.line = line
        self.message = message
    }

    /// "FILE:LINE: MESSAGE".
    public var description: String { line > 0 ? "\(file):\(line): \(message)" : "\(file): \(message)" }
}
