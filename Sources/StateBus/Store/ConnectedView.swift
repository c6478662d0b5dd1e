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
}
