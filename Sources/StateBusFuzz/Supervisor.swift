import Foundation

/// Runs workers one after another, each a child process of this executable on its own
/// seed, so a crash (an abort in libzmq, a trap in Swift) ends one worker, not the run:
/// the supervisor saves the inputs that led to it and goes on with the next seed.
struct Supervisor {
    let targets: [Worker.Target]
    let seed: UInt64
    let duration: Duration
    let slice: Duration
    let workerArguments: [String]
    let crashFolder: String
    /// Where workers save what they reach first (`--grow-corpus`), if anywhere.
    var growCorpus: String? = nil
    /// The most files the whole run saves there: each worker gets what is left.
    var growLimit = 0

    /// The grown files in `growCorpus` now.
    private func grownFiles() -> Int {
        guard let growCorpus, let files = try? FileManager.default.contentsOfDirectory(atPath: growCorpus) else { return 0 }
        return files.filter { $0.hasPrefix(CorpusGrower.prefix) && $0.hasSuffix(".bin") }.count
    }

    func run() throws -> Int32 {
        let start = ContinuousClock.now
        let scratch = try FuzzSupport.temporaryFolder("sbfuzz-run")
        defer { try? FileManager.default.removeItem(atPath: scratch) }
        var findings: [String: Int] = [:]
        var workers = 0
        var seed = seed
        let grownBefore = grownFiles()
        while ContinuousClock.now - start < duration {
            let target = targets[workers % targets.count]
            let remaining = duration - (ContinuousClock.now - start)
            let length = min(slice, remaining)
            let log = "\(scratch)/inputs-\(workers).log"
            let errors = "\(scratch)/stderr-\(workers).log"
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
            var growing: [String] = []
            if let growCorpus, growLimit - (grownFiles() - grownBefore) > 0 {
                growing = ["--grow-corpus", growCorpus, "--grow-limit", String(growLimit - (grownFiles() - grownBefore))]
            }
            process.arguments =
                workerArguments + growing + [
                    "--worker", "--target", target.rawValue, "--seed", String(seed),
                    "--duration", String(Double(length.components.seconds) + 1), "--input-log", log
                ]
            _ = FileManager.default.createFile(atPath: errors, contents: nil)
            process.standardError = FileHandle(forWritingAtPath: errors)
            var environment = ProcessInfo.processInfo.environment
            environment["SWIFT_BACKTRACE"] = "enable=no"  // a crash report of minutes helps nobody here
            process.environment = environment
            try process.run()
            process.waitUntilExit()
            workers += 1
            let stderr = (try? String(contentsOfFile: errors, encoding: .utf8)) ?? ""
            switch (process.terminationReason, process.terminationStatus) {
            case (.exit, 0):
                break
            case (.exit, 2):
                findings["invariant failed (see FAILURE above)", default: 0] += 1
            default:
                let file = "\(crashFolder)/crash-\(target)-\(seed).bin"
                try? FileManager.default.copyItem(atPath: log, toPath: file)
                let ended = "\(process.terminationReason == .uncaughtSignal ? "signal" : "status") \(process.terminationStatus)"
                let lines = stderr.split(separator: "\n")
                // The runtime's message ("Fatal error: …") comes first and the backtrace after
                // it: the message and the backtrace's first frames say where, its last lines
                // only which thread.
                let cause = lines.filter { $0.contains("Fatal error") || $0.contains("fatal error") || $0.contains("Crash") }.prefix(4)
                let frames = lines.filter { $0.range(of: #"^\s*\d+\s"#, options: .regularExpression) != nil }.prefix(24)
                let excerpt = (cause + (frames.isEmpty ? lines.suffix(8) : frames)).joined(separator: "\n")
                try? "exit \(ended)\n\(stderr)\n".write(
                    toFile: file + ".txt", atomically: true, encoding: .utf8)
                print(
                    "CRASH target=\(target) seed=\(seed): \(ended); inputs since the last check: \(file)\n\(excerpt)"
                )
                findings["crash: \(cause.first ?? excerpt.split(separator: "\n").last ?? "no message")", default: 0] += 1
            }
            seed &+= 1
        }
        print("fuzzing finished: \(workers) workers, \(findings.values.reduce(0, +)) findings")
        if let growCorpus { print("corpus: \(grownFiles() - grownBefore) new files in \(growCorpus)") }
        for (finding, count) in findings.sorted(by: { $0.key < $1.key }) { print("  \(count)x \(finding)") }
        return findings.isEmpty ? 0 : 1
    }
}
