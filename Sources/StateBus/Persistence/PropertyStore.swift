import StateBusWire

/// One stored property value.
public struct StoredProperty: Sendable, Hashable {
    /// The object's name.
    public var object: String
    /// The property's name.
    public var property: String
    /// The value.
    public var value: Value
    /// The host sequence at which it was written (informational).
    public var version: UInt64

    /// Creates a stored property.
    public init(object: String, property: String, value: Value, version: UInt64) {
        self.object = object
        self.property = property
        self.value = value
        self.version = version
    }
}

/// Where a host keeps its persisted properties.
///
/// A store belongs to one host at a time and is used from the host's I/O loop thread only.
public protocol PropertyStore: AnyObject {
    /// Every stored property (also those the model no longer has: they are kept).
    func loadAll() throws(PersistenceError) -> [StoredProperty]
    /// Writes properties durably, all or none, in one transaction: when it returns, they
    /// survive a killed process and a power cut.
    func save(_ properties: [StoredProperty]) throws(PersistenceError)
    /// How many transactions (each one fsync) have been committed.
    var commitCount: Int { get }
    /// Where the values live, for messages (a file path).
    var location: String { get }
    /// Releases the store (and its lock) for another host; later calls fail.
    func close()
}

/// A persistence failure, naming the file and what to do.
public struct PersistenceError: Error, Sendable, CustomStringConvertible, Equatable {
    /// What kind of failure.
    public enum Kind: String, Sendable {
        /// The file or its folder cannot be created or opened.
        case cannotOpen
        /// The file or its folder is read-only.
        case readOnly
        /// Another host holds the database.
        case locked
        /// The file is not a database or is damaged.
        case corrupt
        /// The disk is full.
        case diskFull
        /// Anything else SQLite reported.
        case other
    }

    /// What kind of failure.
    public let kind: Kind
    /// The database file.
    public let path: String
    /// What happened and what to do.
    public let message: String

    /// Creates an error.
    public init(_ kind: Kind, path: String, _ message: String) {
        self.kind = kind
        self.path = path
        self.message = message
    }

    /// "database <path>: <message>".
    public var description: String { "database \(path): \(message)" }
}
