// Message shapes every gateway answer shares: the header, a key-value, and the two error
// shapes. Every field is optional because the gateway omits fields holding default values.

/// `etcdserverpb.ResponseHeader`.
struct WireHeader: Decodable, Sendable {
    var revision: WireInt64?

    enum CodingKeys: String, CodingKey {
        case revision
    }
}

/// `mvccpb.KeyValue`.
struct WireKeyValue: Decodable, Sendable {
    var key: WireBytes?
    var createRevision: WireInt64?
    var modRevision: WireInt64?
    var version: WireInt64?
    var value: WireBytes?
    var lease: WireInt64?

    enum CodingKeys: String, CodingKey {
        case key
        case createRevision = "create_revision"
        case modRevision = "mod_revision"
        case version
        case value
        case lease
    }

    var domain: EtcdKeyValue {
        EtcdKeyValue(
            key: key.orEmpty, value: value.orEmpty, createRevision: createRevision.orZero, modRevision: modRevision.orZero,
            version: version.orZero, lease: lease.orZero)
    }
}

/// The body of a failed unary call: `{"error":"…","message":"…","code":N}`.
struct WireUnaryError: Decodable, Sendable {
    var error: String?
    var message: String?
    var code: Int?

    enum CodingKeys: String, CodingKey {
        case error, message, code
    }
}

/// The error of a streaming call, inside `{"error":{…}}`.
struct WireStreamError: Decodable, Sendable {
    var grpcCode: Int?
    var httpCode: Int?
    var message: String?
    var httpStatus: String?

    enum CodingKeys: String, CodingKey {
        case grpcCode = "grpc_code"
        case httpCode = "http_code"
        case message
        case httpStatus = "http_status"
    }
}

/// One line of a streaming call's answer: `{"result":{…}}` or `{"error":{…}}`.
struct WireStreamLine<Result: Decodable & Sendable>: Decodable, Sendable {
    var result: Result?
    var error: WireStreamError?

    enum CodingKeys: String, CodingKey {
        case result, error
    }
}

/// An empty request body, `{}`.
struct WireEmpty: Codable, Sendable {}
