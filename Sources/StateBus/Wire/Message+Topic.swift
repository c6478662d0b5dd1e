import ZeroMQ

extension ZeroMQ.Message {
    /// Whether the frame holds exactly `bytes` (a topic), compared in place.
    func holds(_ bytes: [UInt8]) -> Bool {
        withUnsafeBytes { $0.elementsEqual(bytes) }
    }
}
