import Logging
import StateBus
import StateBusEtcd
import StateBusWire

/// The part of a ``HighAvailabilityHost`` that reacts to the election, one event at a time:
/// it stands by (refusing views, following the leader), takes over, and steps down.
actor GroupMember {
    private let objects: [ObjectDefinition]
    /// The host's configuration with its bound endpoints and its leadership gate.
    private let configuration: HostConfiguration
    private let group: String
    private let record: LeaderRecord
    private let client: EtcdClient
    private let election: LeaderElection
    private let gate: LeadershipGate
    private let roles: RoleBroadcast
    private let logger: Logger
    /// The host bound now: a standby's (refusing views) or the leader's.
    private var host: StateHost?
    /// Whether `host` serves the leader's state: while this host leads, and after it stepped
    /// down until another leader is known (its views stay live, read-only, meanwhile).
    private var servesState = false
    private var leads = false
    private var follower: StandbyFollower?
    private var stopped = false
    /// Why this host cannot be in the group (its leader serves other objects).
    private(set) var mismatch: StateBusError?

    init(
        objects: [ObjectDefinition], configuration: HostConfiguration, group: String, record: LeaderRecord, client: EtcdClient,
        election: LeaderElection, gate: LeadershipGate, host: StateHost, roles: RoleBroadcast, logger: Logger
    ) {
        self.objects = objects
        self.configuration = configuration
        self.group = group
        self.record = record
        self.client = client
        self.election = election
        self.gate = gate
        self.host = host
        self.roles = roles
        self.logger = logger
    }

    /// The leader's host, while this one leads.
    var leadingHost: StateHost? { leads ? host : nil }

    /// The host bound now, leading or standing by (`nil` once stopped).
    var boundHost: StateHost? { host }

    /// Reacts to one election event.
    func handle(_ event: LeaderElection.Event) async {
        guard !stopped else { return }
        switch event {
        case .leading(let term): await takeOver(term)
        case .following(let leader, _): await follow(leader.flatMap(LeaderRecord.init))
        case .steppedDown(let reason): await stepDown(reason)
        }
    }

    /// Starts serving as the leader: from the state followed, etcd's stored values on top,
    /// with a new epoch; the gate opens while the election's clock says the lease holds.
    private func takeOver(_ term: LeaderElection.Leadership) async {
        // What it followed, or what it served itself before it stepped down.
        let followed = follower?.followedValues() ?? (servesState ? servedValues() : [:])
        follower?.close()
        follower = nil
        var leading = configuration
        let fence = election.fencingCompare(for: term)
        let (client, group) = (self.client, self.group)
        leading.propertyStore = PropertyStoreOpener(
            location: "etcd \(client.endpoints.joined(separator: ",")) group \(group) term \(term.createRevision)"
        ) {
            EtcdPropertyStore(client: client, group: group, fence: fence)
        }
        host?.stop()
        host = nil
        do {
            let started = try await Self.start(objects.map { $0.startingFrom(followed[$0.name] ?? [:]) }, leading, logger: logger)
            host = started
            leads = true
            servesState = true
            let election = self.election
            gate.lead { election.isLeader(at: $0) }
            await announce(epoch: started.epoch, of: term)
            logger.notice("leading group \(group) (term \(term.createRevision), epoch \(started.epoch))")
            roles.publish(.leader(epoch: started.epoch, term: term.createRevision))
        } catch {
            logger.error("won group \(group)'s election but could not start serving: \(error); standing by")
            await standBy(leader: "")
        }
    }

    /// Writes the epoch the leader serves with into its leader key (behind the fence, with
    /// the term's lease), so that what the key says is what views will be welcomed with.
    private func announce(epoch: UInt64, of term: LeaderElection.Leadership) async {
        var announced = record
        announced.epoch = epoch
        let update = EtcdTransaction(
            compares: [election.fencingCompare(for: term)],
            success: [.put(key: election.leaderKey, value: announced.encoded(), lease: term.leaseID)])
        do {
            if try await !client.txn(update).succeeded { logger.warning("the leader key changed before its epoch was written into it") }
        } catch {
            logger.warning("could not write the epoch into the leader key: \(error)")
        }
    }

    /// The values the host bound now serves, by object.
    private func servedValues() -> [String: [String: Value]] {
        var values: [String: [String: Value]] = [:]
        for object in objects { values[object.name] = host?.values(of: object.name) }
        return values
    }

    /// Another host leads: refuse views, naming it, and follow it.
    private func follow(_ leader: LeaderRecord?) async {
        if let leader, leader.objects != record.objects {
            let error = StateBusError(
                .badRequest,
                "group '\(group)' is led by \(leader.host) at \(leader.control), which serves \(leader.objects.joined(separator: ", ")); "
                    + "this host serves \(record.objects.joined(separator: ", ")). Hosts of one group serve the same objects: "
                    + "give this host another --ha-group")
            logger.error("\(error.message)")
            mismatch = mismatch ?? error
            roles.publish(.standby(leader: leader.control))
            return
        }
        // Our own record: a term of this host that ended before it restarted, whose lease
        // has not run out yet. Nobody leads meanwhile.
        let control = leader.map(\.control).flatMap { $0 == record.control ? nil : $0 }
        gate.standBy(leader: control ?? "")
        if control != nil, servesState {
            // A host that stepped down serves its views until another leads: then a new
            // epoch sends them looking for it.
            await standBy(leader: control ?? "")
        }
        if follower?.leaderControl != control {
            follower?.close()
            follower = nil
            if let control {
                do {
                    follower = try StandbyFollower(
                        objects: record.objects, leaderControl: control, hostName: configuration.name, security: configuration.security)
                } catch {
                    logger.warning("cannot follow the leader at \(control): \(error); taking over from etcd's stored state only")
                }
            }
        }
        roles.publish(.standby(leader: control))
    }

    /// This host led and no longer does: it refuses writes at once. Its views stay live,
    /// read-only, until another host leads (etcd may be down for every host): then
    /// ``follow(_:)`` serves again as a standby, with a new epoch, so that they go looking
    /// for the leader.
    private func stepDown(_ reason: String) async {
        gate.serveReadOnly(reason: "this host no longer leads group '\(group)' (\(reason)), and etcd names no other leader yet")
        leads = false
        logger.warning("no longer leading group \(group): \(reason); taking no writes")
        roles.publish(.standby(leader: nil))
    }

    /// Serves as a standby: a new epoch, refusing views.
    private func standBy(leader: String) async {
        gate.standBy(leader: leader)
        if servesState || host == nil {
            host?.stop()
            host = nil
            leads = false
            servesState = false
            var standby = configuration
            standby.persistence = .disabled
            do {
                host = try await Self.start(objects, standby, logger: logger)
            } catch {
                logger.error("cannot bind the standby's endpoints again: \(error)")
            }
        }
        roles.publish(.standby(leader: leader.isEmpty ? nil : leader))
    }

    /// Leaves the group: refuses writes, resigns, stops serving.
    func stop() async {
        guard !stopped else { return }
        stopped = true
        gate.standBy(leader: "")
        await election.resign()
        follower?.close()
        follower = nil
        host?.stop()
        host = nil
        leads = false
        servesState = false
        await client.shutdown()
    }

    /// Starts a host on endpoints a host of this process bound a moment ago: libzmq may not
    /// have released them yet, so a bind that fails is tried again for up to 5 s.
    private static func start(_ objects: [ObjectDefinition], _ configuration: HostConfiguration, logger: Logger) async throws -> StateHost {
        let deadline = ContinuousClock.now + .seconds(5)
        while true {
            do {
                return try await StateHost(objects: objects, configuration: configuration)
            } catch let error as StateBusError {
                throw error
            } catch {
                guard ContinuousClock.now < deadline else { throw error }
                logger.debug("binding again: \(error)")
                try await Task.sleep(for: .milliseconds(20))
            }
        }
    }
}
