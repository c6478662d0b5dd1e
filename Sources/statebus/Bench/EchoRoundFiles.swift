/// Where the processes of one echo round write their times, in the round's folder, and for
/// the echo at another view the pipe on which the observer reports to the writer
/// (``ObserverReports``).
struct EchoRoundFiles {
    /// The writer's send times.
    let sent: String
    /// The observer's arrival times (the echo at another view).
    let arrived: String
    /// When the writer had its own copy of each write (the echo at another view).
    let ownCopies: String
    /// The observer's named pipe of reports (the echo at another view).
    let reports: String
    let path: EchoBench.Path

    /// Names the files in `folder`, and makes the pipe for the echo at another view.
    /// - Throws: `BenchError` when the pipe cannot be made.
    init(folder: ScratchFolder, path: EchoBench.Path) throws {
        sent = folder.path("sent.times")
        arrived = folder.path("arrived.times")
        ownCopies = folder.path("own.times")
        reports = folder.path("reports")
        self.path = path
        if path == .other { try ObserverReports.create(at: reports) }
    }

    /// The writing worker's options.
    var writerArguments: [String] {
        ["--out", sent] + (path == .other ? ["--own-copies", ownCopies, "--reports", reports] : [])
    }

    /// The observing worker's options.
    var observerArguments: [String] { ["--out", arrived, "--reports", reports] }
}
