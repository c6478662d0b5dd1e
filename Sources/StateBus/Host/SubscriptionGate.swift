/// Which subscriptions the host's updates socket admits (it runs in libzmq's manual mode,
/// `ZMQ_XPUB_MANUAL`, so nothing is admitted unless the host says so).
///
/// Admitted: each served object's update topics (`u/<object>\0` for version 1,
/// `u2/<object>\0` for version 2) and the heartbeat topic, which bounds what one connection
/// can make the socket match against to two entries per served object plus one; and a join
/// topic (`j/<view id>\0`) only long enough to publish its marker. Everything else is refused
/// and counted. A pure value: the socket calls stay in ``HostServer``.
struct SubscriptionGate: Sendable {
    /// What a served topic is.
    enum Served: Equatable, Sendable {
        case heartbeat
        /// The updates of the object with this index, in this protocol version.
        case updates(object: Int, version: UInt32)
    }

    /// What to do with one message read from the updates socket.
    enum Decision: Equatable {
        /// Subscribe the sender to this topic.
        case admit([UInt8], Served)
        /// Subscribe the sender to its join topic, publish the join marker, unsubscribe.
        case join([UInt8], viewID: String)
        /// The sender dropped this topic: remove it.
        case unsubscribe([UInt8])
        /// Not a topic this host serves; the reason says why, for the log.
        case refuse(String)
        /// An unsubscription of a topic that was never admitted: nothing to do.
        case ignore
    }

    /// The served objects, by the index ``Served/updates(object:version:)`` gives.
    let objects: [String]
    private let served: [[UInt8]: Served]
    private let maxSubscriptionBytes: Int

    init(objects: [String], maxSubscriptionBytes: Int) {
        self.objects = objects
        var served: [[UInt8]: Served] = [Topic.heartbeat: .heartbeat]
        for (index, name) in objects.enumerated() {
            served[Topic.updates(name)] = .updates(object: index, version: 1)
            served[Topic.runs(name)] = .updates(object: index, version: 2)
        }
        self.served = served
        self.maxSubscriptionBytes = maxSubscriptionBytes
    }

    /// Decides about one message: 0x01 + topic subscribes, 0x00 + topic unsubscribes.
    func decide(_ message: [UInt8]) -> Decision {
        guard let flag = message.first, flag <= 1 else {
            return .refuse("not a subscription (first byte \(message.first.map(String.init) ?? "none"))")
        }
        guard message.count <= maxSubscriptionBytes else {
            return .refuse("\(message.count) bytes; at most \(maxSubscriptionBytes)")
        }
        let topic = Array(message.dropFirst())
        let viewID = Self.joinViewID(topic)
        let known = served[topic]
        guard known != nil || viewID != nil else {
            return flag == 1 ? .refuse("a topic this host does not serve") : .ignore
        }
        if flag == 0 { return .unsubscribe(topic) }
        if let viewID { return .join(topic, viewID: viewID) }
        return .admit(topic, known!)
    }

    /// The view id of a well-formed join topic (`j/`, at least one byte of UTF-8 without
    /// NUL, NUL), or `nil`.
    static func joinViewID(_ topic: [UInt8]) -> String? {
        guard topic.count > Topic.joinPrefix.count + 1, topic.starts(with: Topic.joinPrefix), topic.last == 0 else { return nil }
        let name = topic[Topic.joinPrefix.count..<(topic.count - 1)]
        guard !name.contains(0) else { return nil }
        return String(validating: name, as: UTF8.self)
    }
}
