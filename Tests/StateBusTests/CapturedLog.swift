import Logging
import StateBusRuntime

/// A logger whose messages a test can read back (a library takes a `Logger`, so a test
/// hands it this one to check what it reports).
final class CapturedLog: Sendable {
    struct Entry: Sendable {
        let level: Logger.Level
        let message: String
    }

    private let entries = Locked<[Entry]>([])

    /// Everything logged so far, in order.
    var messages: [Entry] { entries.withLock { $0 } }

    /// A logger that records into this log.
    var logger: Logger {
        Logger(label: "test") { _ in Handler(log: self) }
    }

    fileprivate func append(_ entry: Entry) { entries.withLock { $0.append(entry) } }

    private struct Handler: LogHandler {
        let log: CapturedLog
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .trace

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            log.append(Entry(level: event.level, message: event.message.description))
        }
    }
}
