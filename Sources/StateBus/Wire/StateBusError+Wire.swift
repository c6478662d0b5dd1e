import StateBusWire

// Errors to and from the wire: the host sends a `StateBusError` as a `Statebus_V1_Error`;
// codes that only a view raises (closed, timeout) travel as unspecified.

extension StateBusError.Code {
    init(wire: Statebus_V1_ErrorCode) {
        switch wire {
        case .badRequest: self = .badRequest
        case .unsupportedVersion: self = .unsupportedVersion
        case .unknownObject: self = .unknownObject
        case .unknownProperty: self = .unknownProperty
        case .readOnly: self = .readOnly
        case .typeMismatch: self = .typeMismatch
        case .invalidPath: self = .invalidPath
        case .validationFailed: self = .validationFailed
        case .versionConflict: self = .versionConflict
        case .tooLarge: self = .tooLarge
        case .persistenceFailed: self = .persistenceFailed
        case .notJoined: self = .notJoined
        case .viewIDInUse: self = .viewIDInUse
        case .forbidden: self = .forbidden
        case .unknownAction: self = .unknownAction
        case .actionFailed: self = .actionFailed
        case .overloaded: self = .overloaded
        case .interrupted: self = .interrupted
        case .notLeader: self = .notLeader
        default: self = .other
        }
    }

    var wire: Statebus_V1_ErrorCode {
        switch self {
        case .badRequest: .badRequest
        case .unsupportedVersion: .unsupportedVersion
        case .unknownObject: .unknownObject
        case .unknownProperty: .unknownProperty
        case .readOnly: .readOnly
        case .typeMismatch: .typeMismatch
        case .invalidPath: .invalidPath
        case .validationFailed: .validationFailed
        case .versionConflict: .versionConflict
        case .tooLarge: .tooLarge
        case .persistenceFailed: .persistenceFailed
        case .notJoined: .notJoined
        case .viewIDInUse: .viewIDInUse
        case .forbidden: .forbidden
        case .unknownAction: .unknownAction
        case .actionFailed: .actionFailed
        case .overloaded: .overloaded
        case .interrupted: .interrupted
        case .notLeader: .notLeader
        case .closed, .timeout, .unsafeEndpoint, .handshakeFailed, .other: .unspecified
        }
    }
}

extension StateBusError {
    init(wire: Statebus_V1_Error) {
        self.init(
            Code(wire: wire.code), wire.message,
            object: wire.object.isEmpty ? nil : wire.object,
            property: wire.property.isEmpty ? nil : wire.property
        )
    }

    var wire: Statebus_V1_Error {
        var wire = Statebus_V1_Error()
        wire.code = code.wire
        wire.message = message
        wire.object = object ?? ""
        wire.property = property ?? ""
        return wire
    }
}
