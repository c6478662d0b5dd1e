import Foundation
import ZeroMQ

/// The transports every pattern is tested over.
enum Transport: String, CaseIterable, CustomStringConvertible, Sendable {
    case inproc, ipc, tcp

    var description: String { rawValue }

    /// A fresh endpoint to bind: unique inproc name, ipc path in a new temporary folder,
    /// or an ephemeral loopback port.
    func bindEndpoint() -> String {
        switch self {
        case .inproc: "inproc://test-\(UUID().uuidString)"
        case .ipc: "ipc://\(TemporaryFolder.make().path)/socket"
        case .tcp: "tcp://127.0.0.1:*"
        }
    }
}

/// A temporary folder for ipc socket files (short paths: ipc paths are limited to ~107 bytes).
enum TemporaryFolder {
    static func make() -> URL {
        let url = URL(fileURLWithPath: "/tmp/zmqt-\(UUID().uuidString.prefix(8))")
        try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }
}

/// Receives one multipart message, waiting at most `deadline`.
func receive(_ socket: Socket, within deadline: Duration = .seconds(10)) throws -> [[UInt8]]? {
    let poller = Poller()
    poller.add(socket, events: .readable)
    guard try !poller.poll(timeout: deadline).isEmpty else { return nil }
    return try socket.tryReceiveMultipart()?.map(\.bytes)
}

/// Publishes probes until `subscriber` sees one (PUB/SUB's slow-joiner problem: a
/// subscription takes a moment to reach the publisher), then drains the probes.
func awaitSubscription(publisher: Socket, subscriber: Socket, deadline: Duration = .seconds(10)) throws -> Bool {
    let clock = ContinuousClock()
    let end = clock.now.advanced(by: deadline)
    while clock.now < end {
        try publisher.send("probe")
        if let frames = try receive(subscriber, within: .milliseconds(20)), frames == [Array("probe".utf8)] {
            while try subscriber.tryReceive() != nil {}
            return true
        }
    }
    return false
}
