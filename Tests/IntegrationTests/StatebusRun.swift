import StateBusTesting

/// Runs a `statebus` command to its end (up to 60 s), for tests that check what a user
/// would see. - Returns: its exit status and output lines.
func runStatebus(_ arguments: [String]) throws -> (status: Int32, output: [String]) {
    let process = try NodeProcess(executable: try BuiltProducts.executable("statebus"), arguments: arguments, name: "statebus \(arguments[0])")
    defer { process.terminate() }
    let status = try process.waitForExit(timeout: .seconds(60))
    return (status, process.output)
}
