/// StateBusWire: the StateBus protocol's messages, generated from `proto/statebus.proto`,
/// and the language-neutral ``Value`` with its Codable encoder and decoder.
///
/// Nothing here knows about sockets; the `StateBus` module moves these messages over ZeroMQ.
public enum StateBusProtocol {
    /// Version 1: every object and property by name, one update batch per message entry.
    public static let version1: UInt32 = 1
    /// Version 2: version 1's messages plus a schema sent once, packed snapshots and packed
    /// runs of updates addressed by index. What Swift views and relays speak.
    public static let version2: UInt32 = 2
    /// The versions a host answers in (each request is answered in its own version).
    public static let versions: ClosedRange<UInt32> = 1...2
    /// The version Swift views and relays speak: the newest.
    public static let version: UInt32 = version2
}
