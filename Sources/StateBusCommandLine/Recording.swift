import Foundation
import StateBusWire

/// A recording of one object's history (`statebus record`, `statebus replay`): JSON lines.
///
/// The first line is the header, `{"format":"statebus-recording","version":1,"object":…,
/// "control":…,"started":…}`. Every later line is one record, `{"t":NS,"kind":K,"bytes":B64}`:
/// `t` the nanoseconds since recording began, `bytes` the base64 of one protocol message as it
/// came from the host, whose type `kind` names: `welcome` (a `Welcome`), `chunk` (a
/// `SnapshotChunk`; the chunks of a snapshot follow each other, the last with `last`) or
/// `publication` (a `Publication` of the object's updates). A recording starts with a welcome
/// and a snapshot; a later snapshot (after a gap) replaces the state. Messages are kept as
/// the host sent them, so a replay is exact; the version changes when the layout does.
package enum Recording {
    package static let format = "statebus-recording"
    package static let version = 1

    /// The header line.
    package struct Header: Codable {
        package var format: String
        package var version: Int
        package var object: String
        package var control: String
        package var started: String

        package init(format: String, version: Int, object: String, control: String, started: String) {
            (self.format, self.version, self.object, self.control, self.started) = (format, version, object, control, started)
        }
    }

    /// One record line.
    package struct Record: Codable {
        package var t: UInt64
        package var kind: String
        package var bytes: String
    }

    /// Appends records to a file, one line each.
    package final class Writer {
        private let handle: FileHandle
        private let start = ContinuousClock.now
        private let encoder: JSONEncoder = {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys]
            return encoder
        }()
        package private(set) var publications = 0

        package init(path: String, header: Header) throws {
            guard FileManager.default.createFile(atPath: path, contents: nil) else {
                throw RecordingError("cannot create \(path): is the folder there and writable?")
            }
            handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
            try write(line: encoder.encode(header))
        }

        package func append(_ kind: String, _ bytes: [UInt8]) throws {
            let elapsed = start.duration(to: .now)
            let nanoseconds = UInt64(elapsed.components.seconds) * 1_000_000_000 + UInt64(elapsed.components.attoseconds / 1_000_000_000)
            try write(line: encoder.encode(Record(t: nanoseconds, kind: kind, bytes: Data(bytes).base64EncodedString())))
            if kind == "publication" { publications += 1 }
        }

        private func write(line: Data) throws {
            try handle.write(contentsOf: line + Data("\n".utf8))
        }

        package func close() { try? handle.close() }
    }

    /// Reads a recording whole.
    package static func read(path: String) throws -> (header: Header, records: [Record]) {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else {
            throw RecordingError("cannot read \(path): does it exist?")
        }
        let lines = text.split(separator: "\n", omittingEmptySubsequences: true)
        let decoder = JSONDecoder()
        guard let first = lines.first, let header = try? decoder.decode(Header.self, from: Data(first.utf8)), header.format == format
        else {
            throw RecordingError("\(path) is not a StateBus recording (its first line is not a statebus-recording header)")
        }
        guard header.version == version else {
            throw RecordingError("\(path) is a recording of format version \(header.version); this statebus reads version \(version)")
        }
        var records: [Record] = []
        for (index, line) in lines.dropFirst().enumerated() {
            guard let record = try? decoder.decode(Record.self, from: Data(line.utf8)), Data(base64Encoded: record.bytes) != nil else {
                throw RecordingError("\(path), line \(index + 2): not a record ({\"t\":…,\"kind\":…,\"bytes\":…}); the file is damaged")
            }
            records.append(record)
        }
        return (header, records)
    }
}

/// A recording that cannot be made or read, with what to do.
package struct RecordingError: Error, CustomStringConvertible {
    package let description: String
    package init(_ description: String) { self.description = description }
}
