import StateBusWire

/// A view (or relay) connected to a host or relay: one entry of its list of connected views.
///
/// A connection counts once its hello bound a view id, until it says goodbye or stays silent
/// for the view-id lease (``HostConfiguration/viewIDLease``; views ping when idle). The views
/// joined through a relay are not on the host's list: the relay is, and the relay's own list
/// has its views.
///
/// ```swift
/// for view in try await ConnectedView.list(controlEndpoint: "ipc:///tmp/demo/control") {
///     print(view.viewID, view.nodeName, view.connectedFor)
/// }
/// ```
public struct ConnectedView: Sendable, Hashable {
    /// The view id its hello bound.
    public var viewID: String
    /// The node name its hello gave ("" when it gave none).
    public var nodeName: String
    /// Whether it is a relay, writing for the views joined to it.
    public var isRelay: Bool
    /// How long ago its hello bound the view id.
    public var connectedFor: Duration
    /// How long ago it last sent anything.
    public var silentFor: Duration
    /// The name the authorized keys file gives its key, on a host with keys ("" otherwise).
    public var keyName: String

    /// Creates an entry (for tests and tools that show one).
    public init(viewID: String, nodeName: String, isRelay: Bool, connectedFor: Duration, silentFor: Duration, keyName: String) {
        self.viewID = viewID
        self.nodeName = nodeName
        self.isRelay = isRelay
        self.connectedFor = connectedFor
        self.silentFor = silentFor
        self.keyName = keyName
    }

    /// The most views one answer lists; ``ViewList/omitted`` counts the rest.
    public static let listLimit = 1_000

    /// A host's (or relay's) connected views, as it answers them.
    public struct ViewList: Sendable, Hashable {
        /// The views, longest connected first.
        public var views: [ConnectedView]
        /// Views beyond ``ConnectedView/listLimit``, not listed.
        public var omitted: Int
    }

    /// Asks a host or relay which views are connected to it.
    /// - Parameters:
    ///   - controlEndpoint: its control endpoint.
    ///   - timeout: how long to wait for the answer.
    ///   - security: CURVE keys, for a host with keys (any authorized key may ask).
    /// - Throws: `StateBusError.timeout` when nothing answers in time, or the host's error
    ///   (`badRequest` from a host older than this request, say).
    public static func list(controlEndpoint: String, timeout: Duration = .seconds(5), security: ReplicaSecurity? = nil) async throws
        -> ViewList
    {
        let reply = try await ControlProbe.ask(
            controlEndpoint: controlEndpoint, timeout: timeout, security: security, body: .views(Statebus_V1_ViewsRequest()))
        switch reply?.body {
        case .viewList(let list):
            return ViewList(views: list.views.map(ConnectedView.init(wire:)), omitted: Int(list.omitted))
        case .error(let error):
            throw StateBusError(wire: error)
        default:
            throw ControlProbe.silence(at: controlEndpoint, timeout: timeout, security: security)
        }
    }
}
