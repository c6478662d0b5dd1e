import ArgumentParser
import Foundation
import StateBusEtcd
import StateBusHA
import StateBusRuntime

/// `statebus host`'s options for a high-availability group: `--ha`, `--ha-group`,
/// `--ha-advertise-control`, `--ha-lease-seconds`.
struct HighAvailabilityOptions: ParsableArguments {
    @Option(
        name: .customLong("ha"),
        help: ArgumentHelp(
            "etcd's client URLs, separated by commas (default: $STATEBUS_HA): the host joins a high-availability group that etcd's election leads.",
            valueName: "etcd-endpoints"))
    var etcdOption: String?

    @Option(
        name: .customLong("ha-group"),
        help: "The group's name (default: $STATEBUS_HA_GROUP): letters, digits, '.', '_', '-'; every host of a group serves the same objects.")
    var groupOption: String?

    @Option(
        name: .customLong("ha-advertise-control"),
        help:
            "The control endpoint views and the other hosts reach this host at, when it differs from the bound one (required with a wildcard address)."
    )
    var advertiseControl: String?

    @Option(
        name: .customLong("ha-lease-seconds"),
        help: "How long the leader's lease outlives a leader that stopped renewing it: about a failover's time.")
    var leaseSeconds: Int = 2

    /// `--ha`, else `STATEBUS_HA` (a launch file's `ha:` section sets it).
    private var etcdEndpoints: String? {
        etcdOption ?? ProcessInfo.processInfo.environment[EnvironmentVariableName.highAvailabilityEtcd].flatMap { $0.isEmpty ? nil : $0 }
    }

    /// `--ha-group`, else `STATEBUS_HA_GROUP`.
    private var group: String? {
        groupOption ?? ProcessInfo.processInfo.environment[EnvironmentVariableName.highAvailabilityGroup].flatMap { $0.isEmpty ? nil : $0 }
    }

    /// Checks the options go together.
    func validate() throws {
        guard let etcdEndpoints else {
            if group != nil || advertiseControl != nil {
                throw ValidationError("--ha-group and --ha-advertise-control need --ha ETCD_ENDPOINTS")
            }
            return
        }
        do {
            _ = try EtcdEndpoints.parse(etcdEndpoints)
        } catch {
            throw ValidationError("--ha '\(etcdEndpoints)': \(error)")
        }
        guard group != nil else { throw ValidationError("--ha needs --ha-group NAME: the group whose leader etcd elects") }
        guard (1...3600).contains(leaseSeconds) else { throw ValidationError("--ha-lease-seconds must be 1 to 3600, got \(leaseSeconds)") }
    }

    /// The group to join, or `nil` without `--ha`.
    func highAvailability() throws -> HighAvailability? {
        guard let etcdEndpoints, let group else { return nil }
        var settings = HighAvailability(etcdEndpoints: try EtcdEndpoints.parse(etcdEndpoints), group: group)
        settings.announcedControlEndpoint = advertiseControl
        settings.leaseTTL = .seconds(leaseSeconds)
        return settings
    }
}
