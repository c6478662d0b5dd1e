/// StateBusWire: the StateBus protocol's messages, generated from `proto/statebus.proto`,
/// and the language-neutral ``Value`` with its Codable encoder and decoder.
///
/// Nothing here knows about sockets; the `StateBus` module moves these messages over ZeroMQ.
public enum StateBusProtocol {
    /// The protocol version every message carries. See `proto/PROTOCOL.md`.
    public static let version: UInt32 = 1
}
