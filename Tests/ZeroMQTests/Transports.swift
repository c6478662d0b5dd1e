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

/// Publishes numbered probes until `subscriber` sees one (PUB/SUB's slow-joiner problem: a
/// subscription takes a moment to reach the publisher), then takes the probes after it up to
/// the last one sent: each was sent once the subscription was in place, so each arrives, and
/// none is left to be read in place of the test's own messages.
func awaitSubscription(publisher: Socket, subscriber: Socket, deadline: Duration = .seconds(10)) throws -> Bool {
    let clock = ContinuousClock()
    let end = clock.now.advanced(by: deadline)
    var sent = 0
    while clock.now < end {
        sent += 1
        try publisher.send("probe \(sent)")
        guard let frames = try receive(subscriber, within: .milliseconds(20)), var seen = frames.first.map({ String(decoding: $0, as: UTF8.self) }),
            seen.hasPrefix("probe ")
        else { continue }
        while seen != "probe \(sent)" {
            guard let frame = try receive(subscriber, within: deadline)?.first else { return false }
            seen = String(decoding: frame, as: UTF8.self)
        }
        return true
    }
    return false
}
