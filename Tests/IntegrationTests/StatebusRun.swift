import StateBusTesting

/// Runs a `statebus` command to its end (up to 60 s), for tests that check what a user
/// would see. - Returns: its exit status and output lines.
func runStatebus(_ arguments: [String]) async throws -> (status: Int32, output: [String]) {
    let run = try await OneShotCommand.run(try BuiltProducts.executable("statebus"), arguments)
    return (run.status, run.output)
}
