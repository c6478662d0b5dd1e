import Foundation
import StateBus
import StateBusCommandLine
import StateBusDemo
import StateBusWire

/// The `--edits` input of `statebus watch`: each line on standard input is a command for the
/// watching replica, so a script or a test can drive a view process through a pipe.
///
/// - `PROPERTY JSON` (the property optionally with a path, `user.email "b@c.d"`) writes
///   through the replica, as a view's binding would; the outcome is printed as a line.
/// - `:reconnect` drops the replica's connection and joins again.
///
/// Outcome lines, with `--json`:
/// `{"event":"write","line":N,"property":"user.email","accepted":true,"sequence":S}` or
/// `{"event":"write","line":N,"property":"…","accepted":false,"code":"validationFailed","message":"…"}`;
/// `N` counts input lines from 1, so a caller can match an outcome to its edit.
enum WatchEdits {
    /// Reads standard input until it ends, applying each line to `replica`.
    static func run(on replica: Replica, json: Bool) async {
        var number = 0
        for await line in DemoNode.standardInputLines() {
            number += 1
            let text = line.trimmingCharacters(in: .whitespaces)
            guard !text.isEmpty else { continue }
            if text == ":reconnect" {
                replica.reconnect()
                report(line: number, json: json, fields: [("event", "\"reconnect\"")], text: "reconnecting")
                continue
            }
            do {
                let (target, value) = try parse(text)
                guard case .key(let property)? = target.components.first else { continue }
                let receipt = replica.write(property, to: value, at: ValuePath(Array(target.components.dropFirst())))
                // The outcome is awaited concurrently: edits keep their order on the wire,
                // and a slow verdict does not hold the next line back.
                Task { [number, target = target.description] in
                    do {
                        let sequence = try await receipt.accepted()
                        report(
                            line: number, json: json,
                            fields: [
                                ("event", "\"write\""), ("property", ValueText.json(.string(target))), ("accepted", "true"),
                                ("sequence", "\(sequence)")
                            ],
                            text: "\(target): accepted at sequence \(sequence)")
                    } catch let error as StateBusError {
                        report(
                            line: number, json: json,
                            fields: [
                                ("event", "\"write\""), ("property", ValueText.json(.string(target))), ("accepted", "false"),
                                ("code", "\"\(error.code)\""), ("message", ValueText.json(.string(error.message)))
                            ],
                            text: "\(target): rejected: \(error)")
                    } catch {
                        report(
                            line: number, json: json,
                            fields: [
                                ("event", "\"write\""), ("accepted", "false"), ("code", "\"other\""), ("message", ValueText.json(.string("\(error)")))
                            ],
                            text: "\(target): failed: \(error)")
                    }
                }
            } catch {
                report(
                    line: number, json: json, fields: [("event", "\"error\""), ("message", ValueText.json(.string("\(error)")))],
                    text: "error on input line \(number): \(error)")
            }
        }
    }

    /// Splits `PROPERTY[.path] JSON` into the target (property first) and the value.
    static func parse(_ text: String) throws -> (target: ValuePath, value: Value) {
        guard let space = text.firstIndex(of: " ") else {
            throw EditLineError("'\(text)' has no value: write `PROPERTY JSON`, for example `count 3` or `user.email \"b@example.org\"`")
        }
        let target = try ValuePath(parsing: String(text[..<space]))
        guard case .key? = target.components.first else {
            throw EditLineError("'\(text[..<space])' does not start with a property name")
        }
        let value = try ValueText.parse(String(text[text.index(after: space)...]), asString: false)
        return (target, value)
    }

    private static func report(line: Int, json: Bool, fields: [(String, String)], text: String) {
        if json {
            let body = ([("line", "\(line)")] + fields).map { "\"\($0.0)\":\($0.1)" }
            emit("{" + body.joined(separator: ",") + "}")
        } else {
            emit("edit \(line): \(text)")
        }
    }
}

/// An input line of `statebus watch --edits` that is not an edit.
struct EditLineError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
