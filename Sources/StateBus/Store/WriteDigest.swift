import StateBusWire

/// A digest of a write's object and changes that tells a copy of a write (the same view
/// sending it again) from a different write that reuses its ids (a process that restarted
/// with the same view id).
///
/// Stable across processes, because the host stores it beside a durable write's answer and
/// a host started after a crash compares it with the copy the view sends again: FNV-1a
/// (64-bit) over the object's name and each change in protobuf's deterministic encoding
/// (map entries sorted by key, `value` always present), as ``ChangeCodec`` writes it. Not a defence against a forger: a view can only confuse its
/// own writes, since its view id is bound to its connection.
enum WriteDigest {
    /// The digest of a write of `changes` to `object`.
    static func of(object: String, changes: [PropertyChange]) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        func mix<Bytes: Sequence<UInt8>>(_ bytes: Bytes) {
            for byte in bytes {
                hash ^= UInt64(byte)
                hash &*= 0x0000_0100_0000_01b3
            }
        }
        mix(object.utf8)
        for change in changes {
            // A separator that no encoding starts with keeps ["ab"] apart from ["a", "b"].
            mix(CollectionOfOne(0xFF))
            mix(ChangeCodec.deterministicBytes(change))
        }
        return hash
    }
}
