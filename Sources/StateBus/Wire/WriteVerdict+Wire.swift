import StateBusWire

extension WriteCodec.Outcome {
    /// A write's verdict as the write path's encoder writes it into a `WriteReply`.
    init(_ verdict: WriteVerdict) {
        switch verdict {
        case .success(let sequence):
            self = .accepted(sequence: sequence)
        case .failure(let error):
            self = .rejected(code: error.code.wire.rawValue, message: error.message, object: error.object ?? "", property: error.property ?? "")
        }
    }
}

extension Result where Success == UInt64, Failure == StateBusError {
    /// A write's verdict as the write path's decoder read it from a `WriteReply`.
    init(_ outcome: WriteCodec.Outcome) {
        switch outcome {
        case .accepted(let sequence):
            self = .success(sequence)
        case .rejected(let code, let message, let object, let property):
            self = .failure(
                StateBusError(
                    StateBusError.Code(wire: Statebus_V1_ErrorCode(rawValue: code) ?? .unspecified), message, object: object.isEmpty ? nil : object,
                    property: property.isEmpty ? nil : property))
        }
    }
}
