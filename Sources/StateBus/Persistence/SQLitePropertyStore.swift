import CSQLite
import Foundation
import StateBusWire

/// The default ``PropertyStore``: an embedded SQLite database, through SQLite's C API.
///
/// Why the C API and not GRDB: the host needs three statements, one table, and exact control
/// of durability (WAL with `synchronous=FULL`, one transaction per group commit); the C API
/// gives that without a dependency that takes minutes to build.
///
/// Durability: WAL journal with `PRAGMA synchronous=FULL`, so a committed transaction is on
/// disk (fsynced) before ``save(_:)`` returns and survives a killed process and a power cut.
/// One host at a time: an exclusive `flock` on `<file>.lock` keeps a second host out.
public final class SQLitePropertyStore: PropertyStore {
    /// The database file.
    public let path: String
    /// The file, for messages.
    public var location: String { path }
    /// Transactions committed so far; each costs one fsync.
    public private(set) var commitCount = 0
    private var database: OpaquePointer?
    private var lockDescriptor: Int32 = -1

    /// Opens (or creates) a host's database.
    /// - Parameters:
    ///   - path: the file; its folder is created if needed.
    ///   - readOnly: open for reading only (tools), without taking the host's lock.
    ///   - lockTimeout: how long a transaction waits for another process's lock on the file
    ///     before it fails with `locked`.
    /// - Throws: ``PersistenceError``: `readOnly`, `locked` (another host runs on it),
    ///   `corrupt`, `cannotOpen`.
    public init(path: String, readOnly: Bool = false, lockTimeout: Duration = .seconds(2)) throws(PersistenceError) {
        self.path = path
        let folder = (path as NSString).deletingLastPathComponent
        if !readOnly {
            do {
                try FileManager.default.createDirectory(
                    atPath: folder.isEmpty ? "." : folder, withIntermediateDirectories: true,
                    attributes: [.posixPermissions: 0o700])
            } catch {
                throw PersistenceError(
                    .cannotOpen, path: path,
                    "cannot create the folder \(folder): \(error.localizedDescription); choose another path (--database) or fix the permissions")
            }
            if FileManager.default.fileExists(atPath: path), !FileManager.default.isWritableFile(atPath: path) {
                throw PersistenceError(.readOnly, path: path, "the file is read-only; make it writable (chmod u+w) or choose another path")
            }
            try lock()
            try restrictPermissions()
        } else if !FileManager.default.fileExists(atPath: path) {
            throw PersistenceError(.cannotOpen, path: path, "no such database file")
        }
        let flags = readOnly ? SQLITE_OPEN_READONLY : (SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE)
        let opened = sqlite3_open_v2(path, &database, flags | SQLITE_OPEN_NOMUTEX, nil)
        guard opened == SQLITE_OK else {
            let error = failure(opened, doing: "open")
            close()
            throw error
        }
        let (seconds, attoseconds) = lockTimeout.components
        sqlite3_busy_timeout(database, Int32(clamping: seconds * 1000 + attoseconds / 1_000_000_000_000_000))
        do throws(PersistenceError) {
            if !readOnly {
                try execute("PRAGMA journal_mode=WAL")
                try execute("PRAGMA synchronous=FULL")
            }
            let check = try scalarText("PRAGMA quick_check")
            guard check == "ok" else {
                throw PersistenceError(
                    .corrupt, path: path,
                    "the database is damaged (\(check)); move it aside (it is kept for you) and restart to begin empty, or restore a backup")
            }
            if !readOnly {
                try execute(
                    "CREATE TABLE IF NOT EXISTS properties (object TEXT NOT NULL, property TEXT NOT NULL, value BLOB NOT NULL, version INTEGER NOT NULL, PRIMARY KEY (object, property)) WITHOUT ROWID"
                )
                // A rowid table: the rowid grows with every insert (a replaced row gets a new
                // one), so the oldest answers are the smallest rowids.
                try execute(
                    "CREATE TABLE IF NOT EXISTS answers (view TEXT NOT NULL, write_id INTEGER NOT NULL, digest INTEGER NOT NULL, object TEXT NOT NULL, UNIQUE (view, write_id))"
                )
                // Keyed collections, element by element: one row per element (its id and value
                // encoded as values, its position a real number, so an insert between two
                // elements writes one row), and one row per collection stored so.
                try execute(
                    "CREATE TABLE IF NOT EXISTS elements (object TEXT NOT NULL, property TEXT NOT NULL, id BLOB NOT NULL, position REAL NOT NULL, value BLOB NOT NULL, PRIMARY KEY (object, property, id)) WITHOUT ROWID"
                )
                try execute(
                    "CREATE TABLE IF NOT EXISTS collections (object TEXT NOT NULL, property TEXT NOT NULL, version INTEGER NOT NULL, PRIMARY KEY (object, property)) WITHOUT ROWID"
                )
            }
        } catch {
            close()
            throw error
        }
    }

    deinit { close() }

    /// Closes the database and releases the host lock. Safe to call more than once.
    public func close() {
        if let database { sqlite3_close_v2(database) }
        database = nil
        if lockDescriptor >= 0 {
            flock(lockDescriptor, LOCK_UN)
            Foundation.close(lockDescriptor)
            lockDescriptor = -1
        }
    }

    /// The database holds the user's data: readable and writable by the user only (0600).
    /// SQLite gives the WAL and shared-memory files the database file's mode, so creating
    /// the database with 0600 (or tightening an older file) covers all three.
    private func restrictPermissions() throws(PersistenceError) {
        let descriptor = open(path, O_CREAT | O_RDWR | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            throw PersistenceError(
                errno == EROFS || errno == EACCES ? .readOnly : .cannotOpen, path: path,
                "cannot create the database file: \(String(cString: strerror(errno))); the folder must be writable")
        }
        fchmod(descriptor, 0o600)
        Foundation.close(descriptor)
        for suffix in ["-wal", "-shm", ".lock"] { chmod(path + suffix, 0o600) }
    }

    private func lock() throws(PersistenceError) {
        let lockPath = path + ".lock"
        let descriptor = open(lockPath, O_CREAT | O_RDWR | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            throw PersistenceError(
                errno == EROFS || errno == EACCES ? .readOnly : .cannotOpen, path: path,
                "cannot create the lock file \(lockPath): \(String(cString: strerror(errno))); the folder must be writable")
        }
        guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
            let holder = (try? String(contentsOfFile: lockPath, encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines) ?? "?"
            Foundation.close(descriptor)
            throw PersistenceError(
                .locked, path: path, "another host (pid \(holder)) is using this database; stop it, or give this host its own file")
        }
        ftruncate(descriptor, 0)
        let pid = "\(getpid())\n"
        _ = pid.withCString { write(descriptor, $0, strlen($0)) }
        lockDescriptor = descriptor
    }

    // MARK: Reading and writing

    /// Every stored property that can be read, the rows that cannot, and the stored answers.
    public func load() throws(PersistenceError) -> StoredContents {
        let statement = try prepare("SELECT object, property, value, version FROM properties")
        defer { sqlite3_finalize(statement) }
        var contents = StoredContents(properties: [])
        while true {
            let step = sqlite3_step(statement)
            if step == SQLITE_DONE { break }
            guard step == SQLITE_ROW else { throw failure(step, doing: "read") }
            let object = Self.text(statement, 0)
            let property = Self.text(statement, 1)
            let version = UInt64(bitPattern: sqlite3_column_int64(statement, 3))
            let count = Int(sqlite3_column_bytes(statement, 2))
            let bytes = sqlite3_column_blob(statement, 2).map { Data(bytes: $0, count: count) } ?? Data()
            do {
                let value = try Value(serializedBytes: bytes)
                contents.properties.append(StoredProperty(object: object, property: property, value: value, version: version))
            } catch {
                contents.unreadable.append(
                    UnreadableProperty(object: object, property: property, reason: "its \(count) stored bytes are not a value (\(error))"))
            }
        }
        try loadCollections(into: &contents)
        contents.answers = try loadAnswers()
        return contents
    }

    /// Reads the keyed collections stored element by element, each element in position order.
    private func loadCollections(into contents: inout StoredContents) throws(PersistenceError) {
        // A file written before collections were stored so has no tables (and a reader cannot add them).
        guard try scalarText("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'collections'") != "0" else { return }
        let statement = try prepare(
            "SELECT c.object, c.property, c.version, e.id, e.position, e.value FROM collections c LEFT JOIN elements e ON e.object = c.object AND e.property = c.property ORDER BY c.object, c.property, e.position"
        )
        defer { sqlite3_finalize(statement) }
        var current: StoredProperty?
        var items: [Value] = []
        var positions: [Double] = []
        var damage: String?
        func finish() {
            guard var property = current else { return }
            if let damage {
                contents.unreadable.append(UnreadableProperty(object: property.object, property: property.property, reason: damage))
            } else {
                property.value = .list(items)
                property.positions = positions
                contents.properties.removeAll { $0.object == property.object && $0.property == property.property }
                contents.properties.append(property)
            }
        }
        while true {
            let step = sqlite3_step(statement)
            if step == SQLITE_DONE { break }
            guard step == SQLITE_ROW else { throw failure(step, doing: "read the stored collections") }
            let object = Self.text(statement, 0)
            let property = Self.text(statement, 1)
            if current?.object != object || current?.property != property {
                finish()
                current = StoredProperty(
                    object: object, property: property, value: .list([]), version: UInt64(bitPattern: sqlite3_column_int64(statement, 2)))
                items = []
                positions = []
                damage = nil
            }
            guard sqlite3_column_type(statement, 5) != SQLITE_NULL else { continue }  // an empty collection
            let count = Int(sqlite3_column_bytes(statement, 5))
            let bytes = sqlite3_column_blob(statement, 5).map { Data(bytes: $0, count: count) } ?? Data()
            do {
                items.append(try Value(serializedBytes: bytes))
                positions.append(sqlite3_column_double(statement, 4))
            } catch {
                damage = "an element's \(count) stored bytes are not a value (\(error))"
            }
        }
        finish()
    }

    private func loadAnswers() throws(PersistenceError) -> [StoredAnswer] {
        // A file written before answers were stored has no table (and a reader cannot add it).
        guard try scalarText("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'answers'") != "0" else { return [] }
        let statement = try prepare("SELECT view, write_id, digest, object FROM answers")
        defer { sqlite3_finalize(statement) }
        var answers: [StoredAnswer] = []
        while true {
            let step = sqlite3_step(statement)
            if step == SQLITE_DONE { break }
            guard step == SQLITE_ROW else { throw failure(step, doing: "read the stored answers") }
            answers.append(
                StoredAnswer(
                    view: Self.text(statement, 0), writeID: UInt64(bitPattern: sqlite3_column_int64(statement, 1)),
                    digest: UInt64(bitPattern: sqlite3_column_int64(statement, 2)), object: Self.text(statement, 3)))
        }
        return answers
    }

    /// A text column, empty when NULL (never a force-unwrapped C string).
    private static func text(_ statement: OpaquePointer?, _ column: Int32) -> String {
        sqlite3_column_text(statement, column).map { String(cString: $0) } ?? ""
    }

    /// Writes properties and answers in one durable transaction.
    public func save(_ properties: [StoredProperty], answers: [StoredAnswer]) throws(PersistenceError) {
        guard !properties.isEmpty || !answers.isEmpty else { return }
        try execute("BEGIN IMMEDIATE")
        do throws(PersistenceError) {
            try insert(properties.filter { $0.elements == nil })
            try writeElements(of: properties.filter { $0.elements != nil })
            try insert(answers)
            try execute("COMMIT")
            commitCount += 1
        } catch {
            _ = try? execute("ROLLBACK")
            throw error
        }
    }

    private func insert(_ properties: [StoredProperty]) throws(PersistenceError) {
        guard !properties.isEmpty else { return }
        let statement = try prepare("INSERT OR REPLACE INTO properties (object, property, value, version) VALUES (?, ?, ?, ?)")
        defer { sqlite3_finalize(statement) }
        for property in properties {
            let bytes: [UInt8]
            do {
                bytes = try property.value.serializedBytes()
            } catch {
                throw PersistenceError(.other, path: path, "cannot encode \(property.object).\(property.property): \(error)")
            }
            sqlite3_reset(statement)
            sqlite3_bind_text(statement, 1, property.object, -1, csqlite_transient())
            sqlite3_bind_text(statement, 2, property.property, -1, csqlite_transient())
            _ = bytes.withUnsafeBytes { sqlite3_bind_blob(statement, 3, $0.baseAddress, Int32($0.count), csqlite_transient()) }
            sqlite3_bind_int64(statement, 4, Int64(bitPattern: property.version))
            let step = sqlite3_step(statement)
            guard step == SQLITE_DONE else { throw failure(step, doing: "write") }
        }
    }

    /// Writes the element rows of keyed collections (and marks each collection as stored so,
    /// replacing a whole-value row of it, if any).
    private func writeElements(of properties: [StoredProperty]) throws(PersistenceError) {
        guard !properties.isEmpty else { return }
        let mark = try prepare("INSERT OR REPLACE INTO collections (object, property, version) VALUES (?, ?, ?)")
        defer { sqlite3_finalize(mark) }
        let upsert = try prepare("INSERT OR REPLACE INTO elements (object, property, id, position, value) VALUES (?, ?, ?, ?, ?)")
        defer { sqlite3_finalize(upsert) }
        let delete = try prepare("DELETE FROM elements WHERE object = ? AND property = ? AND id = ?")
        defer { sqlite3_finalize(delete) }
        for property in properties {
            func encoded(_ value: Value) throws(PersistenceError) -> [UInt8] {
                do {
                    return try value.serializedBytes()
                } catch {
                    throw PersistenceError(.other, path: path, "cannot encode an element of \(property.object).\(property.property): \(error)")
                }
            }
            func bindNames(_ statement: OpaquePointer?) {
                sqlite3_reset(statement)
                sqlite3_bind_text(statement, 1, property.object, -1, csqlite_transient())
                sqlite3_bind_text(statement, 2, property.property, -1, csqlite_transient())
            }
            func write(_ id: Value, _ position: Double, _ value: Value) throws(PersistenceError) {
                let (idBytes, valueBytes) = (try encoded(id), try encoded(value))
                bindNames(upsert)
                _ = idBytes.withUnsafeBytes { sqlite3_bind_blob(upsert, 3, $0.baseAddress, Int32($0.count), csqlite_transient()) }
                sqlite3_bind_double(upsert, 4, position)
                _ = valueBytes.withUnsafeBytes { sqlite3_bind_blob(upsert, 5, $0.baseAddress, Int32($0.count), csqlite_transient()) }
                let step = sqlite3_step(upsert)
                guard step == SQLITE_DONE else { throw failure(step, doing: "write an element") }
            }
            bindNames(mark)
            sqlite3_bind_int64(mark, 3, Int64(bitPattern: property.version))
            var step = sqlite3_step(mark)
            guard step == SQLITE_DONE else { throw failure(step, doing: "write a collection") }
            for change in property.elements ?? [] {
                switch change {
                case .upsert(let id, let position, let value):
                    try write(id, position, value)
                case .delete(let id):
                    let idBytes = try encoded(id)
                    bindNames(delete)
                    _ = idBytes.withUnsafeBytes { sqlite3_bind_blob(delete, 3, $0.baseAddress, Int32($0.count), csqlite_transient()) }
                    step = sqlite3_step(delete)
                    guard step == SQLITE_DONE else { throw failure(step, doing: "delete an element") }
                case .replaceAll(let elements):
                    try execute(
                        "DELETE FROM elements WHERE object = \(Self.quoted(property.object)) AND property = \(Self.quoted(property.property))")
                    try execute(
                        "DELETE FROM properties WHERE object = \(Self.quoted(property.object)) AND property = \(Self.quoted(property.property))")
                    for (index, element) in elements.enumerated() {
                        guard let id = element.elementID else {
                            throw PersistenceError(.other, path: path, "an element of \(property.object).\(property.property) has no id")
                        }
                        try write(id, Double(index), element)
                    }
                }
            }
        }
    }

    /// A string as an SQL literal.
    private static func quoted(_ text: String) -> String { "'" + text.replacingOccurrences(of: "'", with: "''") + "'" }

    /// Fault injection and inspection for tests: how many rows the file holds per table.
    @_spi(Testing)
    public func rowCountsForTesting() throws(PersistenceError) -> (properties: Int, elements: Int) {
        (Int(try scalarText("SELECT count(*) FROM properties")) ?? -1, Int(try scalarText("SELECT count(*) FROM elements")) ?? -1)
    }

    /// For tests: rows inserted, updated or deleted by this connection so far.
    @_spi(Testing)
    public var changedRowsForTesting: Int { database.map { Int(sqlite3_total_changes($0)) } ?? 0 }

    /// Stores answers, then forgets each view's answers beyond its last
    /// ``StoredAnswerLimits/perView`` (by write id) and the oldest beyond
    /// ``StoredAnswerLimits/total``.
    private func insert(_ answers: [StoredAnswer]) throws(PersistenceError) {
        guard !answers.isEmpty else { return }
        let statement = try prepare("INSERT OR REPLACE INTO answers (view, write_id, digest, object) VALUES (?, ?, ?, ?)")
        defer { sqlite3_finalize(statement) }
        var views: Set<String> = []
        for answer in answers {
            sqlite3_reset(statement)
            sqlite3_bind_text(statement, 1, answer.view, -1, csqlite_transient())
            sqlite3_bind_int64(statement, 2, Int64(bitPattern: answer.writeID))
            sqlite3_bind_int64(statement, 3, Int64(bitPattern: answer.digest))
            sqlite3_bind_text(statement, 4, answer.object, -1, csqlite_transient())
            let step = sqlite3_step(statement)
            guard step == SQLITE_DONE else { throw failure(step, doing: "write the answers") }
            views.insert(answer.view)
        }
        // The view's answers, not its write ids, are counted: a view whose writes are mostly
        // not durable keeps as many stored answers as one whose writes all are. The subquery
        // finds the oldest write id to keep through the (view, write_id) index, and is
        // null (nothing deleted) while the view has fewer.
        let prune = try prepare(
            "DELETE FROM answers WHERE view = ?1 AND write_id < (SELECT write_id FROM answers WHERE view = ?1 ORDER BY write_id DESC LIMIT 1 OFFSET \(StoredAnswerLimits.perView - 1))"
        )
        defer { sqlite3_finalize(prune) }
        for view in views {
            sqlite3_reset(prune)
            sqlite3_bind_text(prune, 1, view, -1, csqlite_transient())
            let step = sqlite3_step(prune)
            guard step == SQLITE_DONE else { throw failure(step, doing: "forget old answers") }
        }
        try execute("DELETE FROM answers WHERE rowid <= (SELECT max(rowid) FROM answers) - \(StoredAnswerLimits.total)")
    }

    /// Fault injection for tests: caps the file at its current number of pages, so the next
    /// transaction that needs a new page fails with `SQLITE_FULL`, as on a full disk.
    @_spi(Testing)
    public func forbidGrowthForTesting() throws(PersistenceError) {
        let pages = try scalarText("PRAGMA page_count")
        _ = try scalarText("PRAGMA max_page_count = \(pages)")
    }

    /// Fault injection for tests: stores `bytes` as a property's value as they are, so a
    /// test can leave a row that does not decode (as a damaged file or another version would).
    @_spi(Testing)
    public func storeRawForTesting(object: String, property: String, bytes: [UInt8]) throws(PersistenceError) {
        let statement = try prepare("INSERT OR REPLACE INTO properties (object, property, value, version) VALUES (?, ?, ?, 1)")
        defer { sqlite3_finalize(statement) }
        sqlite3_bind_text(statement, 1, object, -1, csqlite_transient())
        sqlite3_bind_text(statement, 2, property, -1, csqlite_transient())
        _ = bytes.withUnsafeBytes { sqlite3_bind_blob(statement, 3, $0.baseAddress, Int32($0.count), csqlite_transient()) }
        let step = sqlite3_step(statement)
        guard step == SQLITE_DONE else { throw failure(step, doing: "write") }
    }

    // MARK: SQLite plumbing

    private func execute(_ sql: String) throws(PersistenceError) {
        let result = sqlite3_exec(database, sql, nil, nil, nil)
        guard result == SQLITE_OK else { throw failure(result, doing: sql) }
    }

    private func prepare(_ sql: String) throws(PersistenceError) -> OpaquePointer? {
        var statement: OpaquePointer?
        let result = sqlite3_prepare_v2(database, sql, -1, &statement, nil)
        guard result == SQLITE_OK else { throw failure(result, doing: sql) }
        return statement
    }

    private func scalarText(_ sql: String) throws(PersistenceError) -> String {
        let statement = try prepare(sql)
        defer { sqlite3_finalize(statement) }
        let step = sqlite3_step(statement)
        guard step == SQLITE_ROW, let text = sqlite3_column_text(statement, 0) else { throw failure(step, doing: sql) }
        return String(cString: text)
    }

    private func failure(_ code: Int32, doing what: String) -> PersistenceError {
        let detail = database.flatMap { sqlite3_errmsg($0) }.map { String(cString: $0) } ?? String(cString: sqlite3_errstr(code))
        switch code & 0xFF {
        case SQLITE_FULL: return PersistenceError(.diskFull, path: path, "the disk is full (\(detail)); free space, then retry")
        case SQLITE_READONLY:
            return PersistenceError(.readOnly, path: path, "the database is read-only (\(detail)); make the file and its folder writable")
        case SQLITE_NOTADB, SQLITE_CORRUPT:
            return PersistenceError(
                .corrupt, path: path, "not a database or damaged (\(detail)); move it aside (it is kept) and restart to begin empty")
        case SQLITE_BUSY, SQLITE_LOCKED: return PersistenceError(.locked, path: path, "the database is locked (\(detail)); another process holds it")
        case SQLITE_CANTOPEN: return PersistenceError(.cannotOpen, path: path, "cannot open (\(detail)); check the path and the folder's permissions")
        default: return PersistenceError(.other, path: path, "\(what) failed: \(detail)")
        }
    }
}
