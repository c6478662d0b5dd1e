import StateBus

// The wire schemas of the fuzzed objects, for the replica side's stand-in host: the host's
// own conversions (package API of StateBus), so the stand-in cannot drift from a real host.

extension FuzzObjects {
    /// The version-2 schema hash of a host serving `objects` in this order.
    static func schemaHash(of objects: [ObjectDefinition]) -> UInt64 {
        // Encoding a schema message cannot fail; 1 is a hash no real host has, were it to.
        (try? ObjectDefinition.schemaHash(of: objects)) ?? 1
    }
}
