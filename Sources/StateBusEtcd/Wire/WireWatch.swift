// The request and answer lines of /v3/watch.

/// `etcdserverpb.WatchRequest` with its `create_request`.
struct WireWatchRequest: Encodable, Sendable {
    var createRequest: WireWatchCreateRequest

    enum CodingKeys: String, CodingKey {
        case createRequest = "create_request"
    }
}

/// `etcdserverpb.WatchCreateRequest`.
struct WireWatchCreateRequest: Encodable, Sendable {
    var key: WireBytes
    var rangeEnd: WireBytes?
    var startRevision: WireInt64?

    enum CodingKeys: String, CodingKey {
        case key
        case rangeEnd = "range_end"
        case startRevision = "start_revision"
    }
}

/// `etcdserverpb.WatchResponse`.
struct WireWatchResponse: Decodable, Sendable {
    var header: WireHeader?
    var created: Bool?
    var canceled: Bool?
    var compactRevision: WireInt64?
    var cancelReason: String?
    var events: [WireEvent]?

    enum CodingKeys: String, CodingKey {
        case header, created, canceled
        case compactRevision = "compact_revision"
        case cancelReason = "cancel_reason"
        case events
    }
}

/// `mvccpb.Event`: `type` is absent for a put and `"DELETE"` for a delete.
struct WireEvent: Decodable, Sendable {
    var type: String?
    var kv: WireKeyValue?

    enum CodingKeys: String, CodingKey {
        case type, kv
    }

    var domain: EtcdWatchEvent {
        EtcdWatchEvent(kind: type == "DELETE" ? .delete : .put, keyValue: kv?.domain ?? EtcdKeyValue(key: [], value: []))
    }
}
