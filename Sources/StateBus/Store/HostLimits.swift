/// The bounds that keep a host's memory fixed whatever its peers send: how large a property,
/// an object and a publication may be, how many bytes a subscriber that stopped reading can
/// hold up, and how large a subscription may be.
///
/// Every bound has a defined outcome (see the "Limits" section of SyncSemantics.md): a write
/// past a size bound is rejected with ``StateBusError/Code/tooLarge``; a subscriber past its
/// queue loses publications and resynchronises; a subscription past its size bound closes
/// that subscriber's connection.
public struct HostLimits: Sendable, Hashable {
    /// The largest encoded value of one property (default 1 MiB). A write, from a view or
    /// from ``StateHost/update(_:_:)``, that would make a property larger is rejected with
    /// `tooLarge`. It also bounds path writes that add keys to a map.
    public var maxPropertyBytes: Int
    /// The largest encoded size of one object, all its properties together, and of one
    /// write's changes (default 4 MiB). A write that would pass it is rejected with `tooLarge`.
    public var maxObjectBytes: Int
    /// The largest message the host (or relay) packs batches or properties into, counting
    /// the whole encoded message (default 256 KiB): a publication's `Publication` frame
    /// (not its topic), a version-2 snapshot part's `Reply`. Past it, the next batch or
    /// property goes in the next message; a single batch or property larger than this
    /// travels alone.
    public var maxPublicationBytes: Int
    /// What a subscriber that stops reading may hold up at the host, in bytes (default
    /// 64 MiB). libzmq counts its queue in messages, so the host sets the updates socket's
    /// send high-water mark to this ÷ the larger of ``maxPublicationBytes`` and
    /// ``maxPropertyBytes`` (``subscriberQueueMessages``). Past it the subscriber loses
    /// publications, sees a sequence gap and resynchronises.
    public var subscriberQueueBytes: Int
    /// The largest subscription frame the updates socket reads (default 256 bytes: the
    /// 0x01 flag and the topic). libzmq closes the connection of a peer that sends a larger
    /// one, before reading it. A view id must therefore fit in `maxSubscriptionBytes - 4`
    /// bytes of UTF-8 (`j/`, NUL and the flag take the rest).
    public var maxSubscriptionBytes: Int
    /// What the host's changes may hold before they are published, in bytes (default
    /// 8 MiB): those queued for its loop, and those its group commit holds back until
    /// their transaction ends; each batch counts its place in the queue and its values'
    /// encoded size. The host's own changes (``StateHost/update(_:to:at:in:)``,
    /// ``StateHost/apply(_:to:)``, ``StateHost/applyDurably(_:to:)``, a served model's
    /// changes) that find the bound reached wait until the loop has taken the queue or a
    /// commit has released its batches, at most ``unpublishedRoomWait``; past that the
    /// change is not made and throws `overloaded`. A stopped host refuses them with
    /// `closed`. Views' writes are applied on the loop and never wait: the loop takes the
    /// queue at the end of its turn, so the bound can be passed by one turn's writes, and
    /// the host holds up to about twice it while the loop publishes one full queue and the
    /// host's code fills the next.
    public var maxUnpublishedBytes: Int
    /// How long a change of the host's own waits for room under ``maxUnpublishedBytes``
    /// before it throws `overloaded` (default 10 s). The loop takes the whole queue on its
    /// next turn, so only a stuck loop makes a change wait that long.
    public var unpublishedRoomWait: Duration

    /// Creates limits; every parameter has the default documented on its property.
    public init(
        maxPropertyBytes: Int = 1 << 20,
        maxObjectBytes: Int = 4 << 20,
        maxPublicationBytes: Int = 256 << 10,
        subscriberQueueBytes: Int = 64 << 20,
        maxSubscriptionBytes: Int = 256,
        maxUnpublishedBytes: Int = 8 << 20,
        unpublishedRoomWait: Duration = .seconds(10)
    ) {
        self.maxPropertyBytes = maxPropertyBytes
        self.maxObjectBytes = maxObjectBytes
        self.maxPublicationBytes = maxPublicationBytes
        self.subscriberQueueBytes = subscriberQueueBytes
        self.maxSubscriptionBytes = maxSubscriptionBytes
        self.maxUnpublishedBytes = maxUnpublishedBytes
        self.unpublishedRoomWait = unpublishedRoomWait
    }

    /// The fewest publications a subscriber may have queued (1,000, libzmq's default): with
    /// fewer, a view that falls a few milliseconds behind a burst of small publications loses
    /// one and resynchronises, so the bound in bytes alone must not set a smaller queue.
    public static let minimumSubscriberQueueMessages = 1_000

    /// The updates socket's send high-water mark: how many publications one subscriber may
    /// have queued: ``subscriberQueueBytes`` ÷ the larger of ``maxPublicationBytes`` and
    /// ``maxPropertyBytes``, but at least ``minimumSubscriberQueueMessages``. So a stopped
    /// subscriber holds up at most this many publications: ``subscriberQueueBytes`` when
    /// they are small, and up to this × ``maxPropertyBytes`` when each carries one of the
    /// largest values (1,000 × 256 KB values: 256 MB); lower ``maxPropertyBytes`` to tighten it.
    public var subscriberQueueMessages: Int {
        max(Self.minimumSubscriberQueueMessages, subscriberQueueBytes / max(1, maxPublicationBytes, maxPropertyBytes))
    }
}
