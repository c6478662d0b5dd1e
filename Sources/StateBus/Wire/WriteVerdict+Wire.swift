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
