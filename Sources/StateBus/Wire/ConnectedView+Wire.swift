import StateBusWire

// The list of connected views, to and from the wire.

extension ClientTable {
    /// The reply to a views request (its request id is set when it is sent).
    func viewListReply() -> Statebus_V1_Reply {
        var reply = Statebus_V1_Reply()
        reply.viewList = viewList()
        return reply
    }

    /// ``connectedViews(now:limit:)`` on the wire.
    func viewList(now: ContinuousClock.Instant = .now) -> Statebus_V1_ViewList {
        let (listed, omitted) = connectedViews(now: now, limit: ConnectedView.listLimit)
        var list = Statebus_V1_ViewList()
        list.views = listed.map { client in
            var view = Statebus_V1_ConnectedView()
            view.viewID = client.viewID
            view.nodeName = client.nodeName
            view.relay = client.isRelay
            view.connectedMs = client.connectedFor.wholeMilliseconds
            view.silentMs = client.silentFor.wholeMilliseconds
            view.keyName = client.keyName
            return view
        }
        list.omitted = UInt32(clamping: omitted)
        return list
    }
}

extension ConnectedView {
    init(wire: Statebus_V1_ConnectedView) {
        self.init(
            viewID: wire.viewID, nodeName: wire.nodeName, isRelay: wire.relay, connectedFor: .milliseconds(Int64(clamping: wire.connectedMs)),
            silentFor: .milliseconds(Int64(clamping: wire.silentMs)), keyName: wire.keyName)
    }
}

extension Duration {
    /// The duration in whole milliseconds, never negative.
    fileprivate var wholeMilliseconds: UInt64 {
        let (seconds, attoseconds) = components
        return UInt64(clamping: max(0, seconds * 1_000 + attoseconds / 1_000_000_000_000_000))
    }
}
