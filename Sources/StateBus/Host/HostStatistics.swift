import CoreMetrics
import Synchronization

/// What a host has handled since it started: for tools, tests and monitoring.
public struct HostStatistics: Sendable, Hashable, CustomStringConvertible {
    /// Requests received on the control socket.
    public let requests: Int
    /// View writes accepted and applied.
    public let writesAccepted: Int
    /// View writes rejected (validation, type, read-only, unknown names, conflicts).
    public let writesRejected: Int
    /// Messages that were not valid StateBus requests (garbage, wrong version, too large):
    /// answered with an error where possible, never applied.
    public let badMessages: Int
    /// Replies or publications libzmq could not take (a vanished or stalled peer).
    public let droppedMessages: Int
    /// Publications sent on the updates socket (each holds one or more batches).
    public let publications: Int
    /// Their bytes (topic and message, as each subscriber receives them, before ZeroMQ's
    /// framing).
    public let publicationBytes: Int
    /// Transactions committed for persisted properties (one fsync each; group commit puts
    /// many writes in one).
    public let persistenceCommits: Int
    /// Clients dropped because they did not read their replies (their backlog passed
    /// ``HostConfiguration/maxClientBacklogBytes``).
    public let droppedClients: Int
    /// Writes that arrived again (sent again after a reconnect) and were answered with
    /// their first answer instead of being applied twice.
    public let duplicateWrites: Int
    /// Subscriptions the updates socket refused: topics this host does not serve, or
    /// malformed ones (see ``HostLimits/maxSubscriptionBytes``).
    public let refusedSubscriptions: Int
    /// Connections refused during the CURVE handshake by a host with keys: no CURVE, or a
    /// key not in the authorized keys file.
    public let refusedHandshakes: Int
    /// Requests refused with `forbidden`: a write outside the key's role, a view id of
    /// another key, or a key removed from the authorized keys file.
    public let forbiddenRequests: Int
    /// Action calls whose action started running.
    public let callsStarted: Int
    /// Calls whose action returned (and was answered with its result).
    public let callsSucceeded: Int
    /// Calls whose action threw, or whose result was too large to send.
    public let callsFailed: Int
    /// Calls refused before running: unknown object or action, wrong argument count, a
    /// connection that did not say hello, a key that may not write the object, or too many
    /// calls running (``HostConfiguration/maxRunningCalls``).
    public let callsRefused: Int

    /// One line with every counter.
    public var description: String {
        "requests=\(requests) accepted=\(writesAccepted) rejected=\(writesRejected) bad=\(badMessages) dropped=\(droppedMessages) publications=\(publications) commits=\(persistenceCommits) duplicates=\(duplicateWrites) droppedClients=\(droppedClients) refusedSubscriptions=\(refusedSubscriptions) refusedHandshakes=\(refusedHandshakes) forbidden=\(forbiddenRequests) calls=\(callsStarted) callsSucceeded=\(callsSucceeded) callsFailed=\(callsFailed) callsRefused=\(callsRefused)"
    }
}

/// The counters behind ``HostStatistics``, updated on the loop thread, read anywhere.
final class HostCounters: Sendable {
    let requests = MetricCounter("statebus_host_requests_total")
    let writesAccepted = MetricCounter("statebus_host_writes_total", [("outcome", "accepted")])
    let writesRejected = MetricCounter("statebus_host_writes_total", [("outcome", "rejected")])
    let badMessages = MetricCounter("statebus_host_bad_messages_total")
    let droppedMessages = MetricCounter("statebus_host_dropped_messages_total")
    let publications = MetricCounter("statebus_host_publications_total")
    let publicationBytes = MetricCounter("statebus_host_published_bytes_total")
    let persistenceCommits = MetricCounter("statebus_host_commits_total")
    let duplicateWrites = MetricCounter("statebus_host_writes_total", [("outcome", "duplicate")])
    let droppedClients = MetricCounter("statebus_host_dropped_clients_total")
    let refusedSubscriptions = MetricCounter("statebus_host_refused_subscriptions_total")
    let refusedHandshakes = MetricCounter("statebus_host_refused_handshakes_total")
    let forbiddenRequests = MetricCounter("statebus_host_forbidden_requests_total")
    let callsStarted = MetricCounter("statebus_host_calls_started_total")
    let callsSucceeded = MetricCounter("statebus_host_calls_total", [("outcome", "succeeded")])
    let callsFailed = MetricCounter("statebus_host_calls_total", [("outcome", "failed")])
    let callsRefused = MetricCounter("statebus_host_calls_total", [("outcome", "refused")])
    /// Request bytes received on the control socket (metrics only).
    let receivedBytes = MetricCounter("statebus_host_received_bytes_total")
    /// Reply bytes sent on the control socket: welcomes, snapshot chunks, answers (metrics only).
    let replyBytes = MetricCounter("statebus_host_reply_bytes_total")
    /// Snapshots served: a view's join or resynchronisation (metrics only).
    let snapshotsServed = MetricCounter("statebus_host_snapshots_served_total")
    /// Update batches published (one per applied change set; metrics only).
    let publishedUpdates = MetricCounter("statebus_host_published_updates_total")
    /// Fault injection for tests: update publications to drop on purpose.
    let publicationsToDrop = Atomic<Int>(0)
    /// Fault injection for tests: write and other replies to drop on purpose.
    let repliesToDrop = Atomic<Int>(0)

    /// Views whose hello bound a view id and that were heard within the lease.
    let connectedViews = Gauge(label: "statebus_host_connected_views")
    /// Bytes of replies and requests waiting for clients that do not read, and the bound of
    /// one client's (``HostConfiguration/maxClientBacklogBytes``).
    let clientBacklogBytes = Gauge(label: "statebus_host_client_backlog_bytes")
    let clientBacklogLimitBytes = Gauge(label: "statebus_host_client_backlog_limit_bytes")

    var snapshot: HostStatistics {
        HostStatistics(
            requests: requests.load(ordering: .relaxed),
            writesAccepted: writesAccepted.load(ordering: .relaxed),
            writesRejected: writesRejected.load(ordering: .relaxed),
            badMessages: badMessages.load(ordering: .relaxed),
            droppedMessages: droppedMessages.load(ordering: .relaxed),
            publications: publications.load(ordering: .relaxed),
            publicationBytes: publicationBytes.load(ordering: .relaxed),
            persistenceCommits: persistenceCommits.load(ordering: .relaxed),
            droppedClients: droppedClients.load(ordering: .relaxed),
            duplicateWrites: duplicateWrites.load(ordering: .relaxed),
            refusedSubscriptions: refusedSubscriptions.load(ordering: .relaxed),
            refusedHandshakes: refusedHandshakes.load(ordering: .relaxed),
            forbiddenRequests: forbiddenRequests.load(ordering: .relaxed),
            callsStarted: callsStarted.load(ordering: .relaxed),
            callsSucceeded: callsSucceeded.load(ordering: .relaxed),
            callsFailed: callsFailed.load(ordering: .relaxed),
            callsRefused: callsRefused.load(ordering: .relaxed)
        )
    }
}
