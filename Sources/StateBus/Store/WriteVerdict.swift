/// What the host answers a view's write: accepted, at the sequence of the batch it made (or,
/// for a copy of a durable write answered from a previous host's database, the object's
/// sequence when this host started), or refused, and why.
///
/// The domain's verdict; only the write path's encoder (`Wire/`) turns it into a
/// `WriteReply` on the wire.
typealias WriteVerdict = Result<UInt64, StateBusError>
