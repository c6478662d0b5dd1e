import Foundation
import Logging
import StateBus
import StateBusEtcd
import Synchronization

/// A host in a high-availability group: it serves its objects while etcd says it leads the
/// group, and stands by otherwise, following the leader, until it takes over.
///
/// ```swift
/// var group = HighAvailability(etcdEndpoints: ["http://10.0.0.5:2379"], group: "orders")
/// group.announcedControlEndpoint = "tcp://10.0.0.7:7000"
/// let host = try await HighAvailabilityHost(
///     objects: [ObjectDefinition("Orders", properties: [PropertyDefinition("open", kind: .int, default: .int(0), persisted: true)])],
///     configuration: HostConfiguration(controlEndpoint: "tcp://0.0.0.0:7000"), highAvailability: group)
/// for await role in host.roleChanges() { print(role) }
/// ```
///
/// Views give every host's control endpoint (`"tcp://a:7000,tcp://b:7000"`) and follow the
/// leader by themselves. While it leads, the host takes writes only as long as its own clock
/// says its etcd lease holds, and commits persisted properties and durable writes' answers
/// to etcd behind a fencing check: a deposed leader can acknowledge nothing. A standby
/// that takes over starts from the state it followed and etcd's stored values, with a new
/// epoch, so views resynchronise as after a restart.
///
/// Thread safety: every member may be used from any thread or task.
public final class HighAvailabilityHost: Sendable {
    /// The control endpoint bound (the real port for `tcp://…:*`).
    public let controlEndpoint: String
    /// The updates endpoint bound.
    public let updatesEndpoint: String
    /// The control endpoint the group announces for this host when it leads.
    public let announcedControlEndpoint: String
    /// The group's name.
    public let group: String

    private let member: GroupMember
    private let roles: RoleBroadcast
    private let events: Task<Void, Never>

    /// Joins the group: binds the endpoints (refusing views until it leads), checks that etcd
    /// answers, and campaigns. Returns once the host knows its first role.
    /// - Parameters:
    ///   - objects: the objects to serve, the same in every host of the group.
    ///   - configuration: endpoints and behaviour, as for ``StateHost``. Its persistence is
    ///     replaced: a group keeps persisted properties in etcd.
    ///   - highAvailability: the etcd cluster and the group.
    /// - Throws: `StateBusError` (`badRequest`) for a bad group name, etcd endpoint or a
    ///   wildcard control endpoint without an announced one, for a group whose leader serves
    ///   other objects, or (`timeout`) when etcd does not answer; `ZeroMQError` when a bind
    ///   fails.
    public init(objects: [ObjectDefinition], configuration: HostConfiguration, highAvailability: HighAvailability) async throws {
        let logger = configuration.logger
        let client: EtcdClient
        do {
            client = try EtcdClient(endpoints: highAvailability.etcdEndpoints, requestTimeout: highAvailability.etcdRequestTimeout, logger: logger)
        } catch {
            throw StateBusError(.badRequest, "--ha: \(error)")
        }
        do {
            _ = try await client.health()
        } catch {
            await client.shutdown()
            throw StateBusError(
                .timeout,
                "no etcd answered at \(highAvailability.etcdEndpoints.joined(separator: ",")): \(error). "
                    + "Start etcd (deploy/setup.sh --etcd installs it) or correct --ha")
        }
        let gate = LeadershipGate()
        var serving = configuration
        serving.leadership = gate
        serving.persistence = .disabled
        let first: StateHost
        do {
            first = try await StateHost(objects: objects, configuration: serving)
        } catch {
            await client.shutdown()
            throw error
        }
        // Every later start (a takeover, a step-down) binds what this one bound.
        serving.controlEndpoint = first.controlEndpoint
        serving.updatesEndpoint = first.updatesEndpoint
        let announced = highAvailability.announcedControlEndpoint ?? first.controlEndpoint
        if AnnouncedEndpoint.isWildcard(announced) {
            first.stop()
            await client.shutdown()
            throw StateBusError(
                .badRequest,
                "the control endpoint \(announced) has a wildcard address, which nobody can connect to: announce the address "
                    + "views and the other hosts reach this host at (--ha-advertise-control tcp://10.0.0.7:7000)")
        }
        let record = LeaderRecord(control: announced, host: configuration.name, objects: objects.map(\.name), pid: getpid())
        let election: LeaderElection
        do {
            election = try LeaderElection(
                client: client, group: highAvailability.group, candidate: record.encoded(), leaseTTL: highAvailability.leaseTTL, logger: logger)
        } catch {
            first.stop()
            await client.shutdown()
            throw StateBusError(.badRequest, "--ha-group: \(error)")
        }
        let roles = RoleBroadcast(group: highAvailability.group)
        let member = GroupMember(
            objects: objects, configuration: serving, group: highAvailability.group, record: record, client: client, election: election,
            gate: gate, host: first, roles: roles, logger: logger)
        let stream = election.events()
        events = Task {
            for await event in stream { await member.handle(event) }
        }
        election.start()
        self.member = member
        self.roles = roles
        self.controlEndpoint = first.controlEndpoint
        self.updatesEndpoint = first.updatesEndpoint
        self.announcedControlEndpoint = announced
        self.group = highAvailability.group
        for await role in roles.changes() where role != .starting { break }
        if let mismatch = await member.mismatch {
            await stop()
            throw mismatch
        }
    }

    /// What the host does now.
    public var role: HighAvailabilityRole { roles.current }

    /// The host's role now and at every change, until it stops.
    public func roleChanges() -> AsyncStream<HighAvailabilityRole> { roles.changes() }

    /// The host serving views now (`nil` while it stands by).
    public var leadingHost: StateHost? {
        get async { await member.leadingHost }
    }

    /// Reads the authorized keys file again, as ``StateHost/reloadAuthorizedKeys()`` does,
    /// for the host bound now (the leader's or the standby's; every later one reads the file
    /// when it starts).
    /// - Returns: what changed.
    /// - Throws: as ``StateHost/reloadAuthorizedKeys()``; `StateBusError` (`closed`) after
    ///   ``stop()``.
    @discardableResult
    public func reloadAuthorizedKeys() async throws -> AuthorizedKeysReload {
        guard let host = await member.boundHost else { throw StateBusError(.closed, "the host has left its group") }
        return try await host.reloadAuthorizedKeys()
    }

    /// Leaves the group: stops taking writes, resigns (a standby takes over at once, without
    /// waiting for the lease to run out), and stops serving. Safe to call more than once.
    public func stop() async {
        await member.stop()
        events.cancel()
        roles.finish(with: .stopped)
    }
}

/// Whether an endpoint names a wildcard address.
enum AnnouncedEndpoint {
    static func isWildcard(_ endpoint: String) -> Bool {
        endpoint.hasPrefix("tcp://0.0.0.0:") || endpoint.hasPrefix("tcp://*:") || endpoint.hasPrefix("tcp://[::]:")
    }
}
