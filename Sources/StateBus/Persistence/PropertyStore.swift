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
    /// For a keyed collection stored element by element: what to write, instead of the
    /// whole value (`nil`: the whole value, one row).
    public var elements: [StoredElementChange]?
    /// For a keyed collection read from its element rows: each element's stored position,
    /// in the order of `value`'s elements.
    public var positions: [Double]?

    /// Creates a stored property.
    public init(object: String, property: String, value: Value, version: UInt64, elements: [StoredElementChange]? = nil) {
        self.object = object
        self.property = property
        self.value = value
        self.version = version
        self.elements = elements
    }
}

/// One row's change of a keyed collection stored element by element: a write of one element
/// of a 100,000-item collection writes one row, not the collection.
public enum StoredElementChange: Sendable, Hashable {
    /// Writes the element with this id, at this position (elements load in position order).
    case upsert(id: Value, position: Double, value: Value)
    /// Deletes the element with this id.
    case delete(id: Value)
    /// Replaces every element row of the collection with these elements, in order.
    case replaceAll([Value])
}

/// A stored row that could not be read (damaged, or written by an incompatible version):
/// reported and skipped, never a reason to refuse the rest of the file.
public struct UnreadableProperty: Sendable, Hashable {
    /// The object's name.
    public var object: String
    /// The property's name.
    public var property: String
    /// Why it cannot be read.
    public var reason: String

    /// Creates a report of an unreadable row.
    public init(object: String, property: String, reason: String) {
        self.object = object
        self.property = property
        self.reason = reason
    }
}

/// Everything a store holds for a host.
public struct StoredContents: Sendable {
    /// The properties that could be read.
    public var properties: [StoredProperty]
    /// The rows that could not be read, skipped.
    public var unreadable: [UnreadableProperty]
    /// The answers to durable view writes the file remembers.
    public var answers: [StoredAnswer]

    /// Creates contents.
    public init(properties: [StoredProperty], unreadable: [UnreadableProperty] = [], answers: [StoredAnswer] = []) {
        self.properties = properties
        self.unreadable = unreadable
        self.answers = answers
    }
}

/// The host's acceptance of a view's durable write, stored in the same transaction as the
/// values it wrote, so that a host started after a crash answers a copy of the write (sent
/// again by its view, which never heard the answer) instead of applying it a second time.
public struct StoredAnswer: Sendable, Hashable {
    /// The view that wrote.
    public var view: String
    /// The view's id for the write.
    public var writeID: UInt64
    /// A digest of the write's object and changes, to tell a copy from a new write with the
    /// same ids (``WriteDigest``).
    public var digest: UInt64
    /// The object written.
    public var object: String

    /// Creates a stored answer.
    public init(view: String, writeID: UInt64, digest: UInt64, object: String) {
        self.view = view
        self.writeID = writeID
        self.digest = digest
        self.object = object
    }
}

/// Where a host keeps its persisted properties.
///
/// A store belongs to one host at a time. The host opens it and reads it on its I/O loop
/// thread before serving, then hands it to its commit thread (``DurableWriter``), which
/// makes every later call.
public protocol PropertyStore: AnyObject {
    /// Every stored property (also those the model no longer has: they are kept), the rows
    /// that cannot be read, and the stored answers.
    func load() throws(PersistenceError) -> StoredContents
    /// Writes properties and answers durably, all or none, in one transaction: when it
    /// returns, they survive a killed process and a power cut. Keeps at most
    /// ``StoredAnswerLimits/perView`` answers per view and ``StoredAnswerLimits/total`` in all,
    /// the oldest forgotten first.
    func save(_ properties: [StoredProperty], answers: [StoredAnswer]) throws(PersistenceError)
    /// How many transactions (each one fsync) have been committed.
    var commitCount: Int { get }
    /// Where the values live, for messages (a file path).
    var location: String { get }
    /// Releases the store (and its lock) for another host; later calls fail.
    func close()
}

extension PropertyStore {
    /// Every stored property that can be read.
    public func loadAll() throws(PersistenceError) -> [StoredProperty] { try load().properties }

    /// Writes properties durably, in one transaction.
    public func save(_ properties: [StoredProperty]) throws(PersistenceError) { try save(properties, answers: []) }
}

/// How many answers a store remembers: far more than a view has in flight (a copy is sent
/// again only for a write still unanswered), and a bounded table.
public enum StoredAnswerLimits {
    /// Answers kept per view.
    public static let perView = 1024
    /// Answers kept in all.
    public static let total = 100_000
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
