import CSQLite

/// Fault injection for tests: another process's write transaction on a host's database,
/// held until ``release()``, as a backup tool or a stray `sqlite3` shell would hold it. The
/// host's commits wait for it (SQLite's busy timeout) and then fail with `locked`.
@_spi(Testing)
public final class SQLiteWriteLock {
    private var database: OpaquePointer?

    /// Opens the file (without the host's `.lock` file) and begins a write transaction.
    /// - Throws: ``PersistenceError`` when the file cannot be opened or is already locked.
    public init(path: String) throws(PersistenceError) {
        guard sqlite3_open_v2(path, &database, SQLITE_OPEN_READWRITE, nil) == SQLITE_OK else {
            sqlite3_close_v2(database)
            throw PersistenceError(.cannotOpen, path: path, "cannot open the database to lock it")
        }
        guard sqlite3_exec(database, "BEGIN IMMEDIATE", nil, nil, nil) == SQLITE_OK else {
            let message = sqlite3_errmsg(database).map { String(cString: $0) } ?? "unknown"
            sqlite3_close_v2(database)
            database = nil
            throw PersistenceError(.locked, path: path, "cannot begin a write transaction: \(message)")
        }
    }

    /// Ends the transaction and closes the file. Safe to call more than once.
    public func release() {
        guard let database else { return }
        sqlite3_exec(database, "ROLLBACK", nil, nil, nil)
        sqlite3_close_v2(database)
        self.database = nil
    }

    deinit { release() }
}
