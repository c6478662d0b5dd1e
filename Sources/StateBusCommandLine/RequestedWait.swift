import ArgumentParser
import Foundation
import StateBusRuntime

/// How long a command waits for each thing it waits on: its own option (`--timeout`,
/// `--start-timeout`), else `STATEBUS_TIMEOUT` from the environment, else the command's
/// default. One rule for every command, so that a script or a test on a busy machine
/// lengthens every wait with one variable.
package struct RequestedWait {
    /// Where the wait came from: the option's name, the variable's, or "the default".
    package let source: String
    /// The value as written there.
    package let text: String
    /// The value in seconds, or `nil` when what is written there is not a number.
    package let seconds: Double?

    /// The wait a command asks for.
    /// - Parameters:
    ///   - option: the option's value, when given on the command line.
    ///   - optionName: the option's name, for messages (`--timeout`).
    ///   - defaultSeconds: the wait when neither the option nor `STATEBUS_TIMEOUT` gives one.
    package init(option: Double?, named optionName: String = "--timeout", default defaultSeconds: Double) {
        if let option {
            (source, text, seconds) = (optionName, "\(option)", option)
        } else if let text = ProcessInfo.processInfo.environment[EnvironmentVariableName.timeout] {
            (source, self.text, seconds) = (EnvironmentVariableName.timeout, text, Double(text.trimmingCharacters(in: .whitespaces)))
        } else {
            (source, text, seconds) = ("the default", "\(defaultSeconds)", defaultSeconds)
        }
    }

    /// Refuses a wait that is not a positive, finite number of seconds, naming where it came
    /// from.
    /// - Throws: `ValidationError`.
    package func validate() throws {
        guard let seconds, seconds > 0, seconds.isFinite else {
            throw ValidationError("\(source) must be a positive number of seconds (such as 30 or 2.5), got '\(text)'")
        }
    }

    /// The wait as a `Duration` (zero when ``validate()`` would refuse it).
    package var duration: Duration { .milliseconds(Int(((seconds ?? 0).isFinite ? max(0, seconds ?? 0) : 0) * 1000)) }
}
