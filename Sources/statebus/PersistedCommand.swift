import ArgumentParser
import Foundation
import StateBus
import StateBusCommandLine
import StateBusWire

/// `statebus persisted`: prints a host's stored values from its database, without starting it.
struct PersistedCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "persisted",
        abstract: "Print the persisted properties stored in a host's database file.",
        discussion: """
            Reads the file without starting the host (and without taking its lock), so it also \
            works while the host runs.

            Examples:
              statebus persisted --database ~/.local/state/statebus/profile.sqlite
              statebus persisted --database /var/lib/app/settings.sqlite --json
            """
    )

    @Option(name: .long, help: "The host's database file.")
    var database: String

    @OptionGroup var output: OutputOptions

    func run() throws {
        let contents: StoredContents
        do {
            contents = try SQLitePropertyStore(path: database, readOnly: true).load()
        } catch {
            throw ValidationError(error.description)
        }
        let stored = contents.properties.sorted { ($0.object, $0.property) < ($1.object, $1.property) }
        // A damaged row is named, not fatal: the host skips it the same way.
        for row in contents.unreadable {
            FileHandle.standardError.write(
                Data(
                    "warning: \(row.object).\(row.property) in \(database) cannot be read (\(row.reason)); a host starts it from its default and overwrites the row at its next write\n"
                        .utf8))
        }
        if output.json {
            var objects: [String: [String: Value]] = [:]
            for row in stored { objects[row.object, default: [:]][row.property] = row.value }
            emit(ValueText.json(.map(objects.mapValues(Value.map))))
        } else if stored.isEmpty {
            emit("no persisted properties in \(database)")
        } else {
            for row in stored { emit("\(row.object).\(row.property) = \(row.value)  (version \(row.version))") }
        }
    }
}
