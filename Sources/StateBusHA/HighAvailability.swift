/// How a host joins a high-availability group: the etcd cluster that elects the group's
/// leader and keeps its durable state, and the group's name.
///
/// Several hosts of one group (on one machine or several) serve the same objects; etcd
/// elects one leader, which serves views and takes writes, while the others stand by,
/// follow it as views do, and refuse views with `NOT_LEADER`, naming the leader. When the
/// leader's lease runs out (its process or machine died, or it lost etcd), a standby takes
/// over within about the lease's time (Deployment article, "High availability").
public struct HighAvailability: Sendable {
    /// etcd's client URLs (`http://10.0.0.5:2379`), one or more members of one cluster.
    public var etcdEndpoints: [String]
    /// The group's name: letters, digits, `.`, `_` and `-`. Hosts of one group must serve the
    /// same objects.
    public var group: String
    /// How long the leader's lease outlives a leader that stopped renewing it (default 2 s,
    /// whole seconds; etcd may raise it to its minimum): a failover after a crash takes about
    /// this long, and a leader cut off from etcd stops taking writes a little before it ends.
    public var leaseTTL: Duration = .seconds(2)
    /// The control endpoint views and the other hosts reach this host at, when it differs from
    /// the bound one (a wildcard address, NAT). Required when the bound endpoint's address is
    /// a wildcard (`tcp://0.0.0.0:7000`, `tcp://*:7000`): nobody can connect to that.
    public var announcedControlEndpoint: String?
    /// How long one etcd request may take before the next member is tried (default 500 ms).
    public var etcdRequestTimeout: Duration = .milliseconds(500)

    /// Creates a group membership.
    /// - Parameters:
    ///   - etcdEndpoints: etcd's client URLs.
    ///   - group: the group's name.
    public init(etcdEndpoints: [String], group: String) {
        self.etcdEndpoints = etcdEndpoints
        self.group = group
    }
}
