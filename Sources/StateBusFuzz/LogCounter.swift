import Logging
import StateBusRuntime

/// A log handler that counts messages by their gist instead of printing them: a fuzzed
/// replica logs each input it refuses ("dropped a publication that is not a valid run",
/// "a snapshot part of another host epoch", ...), so the counts show which of its paths
/// the inputs reached, without the cost of printing millions of lines.
struct LogCounter: LogHandler {
    /// The counts, shared by every copy of the handler (a `Logger` copies its handler), and
    /// the latest messages whole, for a finding's report.
    final class Counts: Sendable {
        private let state = Locked<(counts: [String: Int], recent: [String])>(([:], []))
        private let origin = ContinuousClock.now

        /// Time since the counting began, which the recent messages are stamped with.
        var elapsed: Duration { .now - origin }

        /// The counts so far, by gist.
        var snapshot: [String: Int] { state.withLock { $0.counts } }

        /// How many gists have been counted: cheap to ask after every input, unlike `snapshot`.
        var distinct: Int { state.withLock { $0.counts.count } }

        /// The last 20 messages, oldest first.
        var recent: [String] { state.withLock { $0.recent } }

        func add(_ message: String) {
            let gist = LogCounter.gist(of: message)
            let stamped = "\(elapsed) \(message.prefix(300))"
            state.withLock { state in
                state.counts[gist, default: 0] += 1
                state.recent.append(stamped)
                if state.recent.count > 20 { state.recent.removeFirst() }
            }
        }
    }

    let counts: Counts
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .info

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        counts.add("\(event.message)")
    }

    /// A message's gist: the words before its first detail (a parenthesis, a colon, a
    /// semicolon), numbers (whole or decimal) replaced by `#`, so that messages of one kind
    /// count together, and a corpus grown by gist (``CorpusGrower``) sees one kind once.
    static func gist(of message: String) -> String {
        let head = message.prefix { $0 != "(" && $0 != ":" && $0 != ";" }
        let words = head.split(separator: " ").map { word in
            word.contains(where: \.isNumber) && word.allSatisfy({ $0.isNumber || $0 == "." }) ? "#" : String(word)
        }
        return String(words.joined(separator: " ").prefix(72))
    }
}
