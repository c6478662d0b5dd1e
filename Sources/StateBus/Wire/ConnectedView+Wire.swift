import StateBusWire

// The list of connected views, to and from the wire.

extension Statebus_V1_Reply {
    /// The reply to a views request (its request id is set when it is sent).
    init(viewList: ConnectedView.ViewList) {
        self.init()
        self.viewList = Statebus_V1_ViewList(viewList)
    }
}

extension Statebus_V1_ViewList {
    /// A list of connected views on the wire.
    init(_ list: ConnectedView.ViewList) {
        self.init()
        views = list.views.map { client in
            var view = Statebus_V1_ConnectedView()
            view.viewID = client.viewID
            view.nodeName = client.nodeName
            view.relay = client.isRelay
            view.connectedMs = client.connectedFor.wholeMilliseconds
            view.silentMs = client.silentFor.wholeMilliseconds
            view.keyName = client.keyName
            return view
        }
        omitted = UInt32(clamping: list.omitted)
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
    /// The duration in whole milliseconds, never negative: how the wire carries durations
    /// (a view's connection and silence, a welcome's heartbeat interval).
    var wholeMilliseconds: UInt64 {
        let (seconds, attoseconds) = components
        return UInt64(clamping: max(0, seconds * 1_000 + attoseconds / 1_000_000_000_000_000))
    }
}
