import ArgumentParser
import Foundation

/// `statebus-fuzz`: a standalone fuzz harness for a host's request handling and a
/// replica's publication handling. Not a product: `deploy/fuzz.sh` runs it.
@main
struct FuzzCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "statebus-fuzz",
        abstract: "Feed a real StateHost and a real Replica random, mutated and hostile messages, and check them.",
        discussion: """
            Runs workers (child processes) one after another, alternating targets, each for \
            --slice seconds with its own seed; checks every --check-every inputs. A failed \
            check or a crash saves the inputs since the last passed check to --crash-dir; \
            replay one with --replay FILE --target TARGET. With --grow-corpus, an input that \
            reaches a log message or reply kind first (one neither the corpus nor an earlier \
            input reached) is saved to that folder as a corpus file named after it.

            Examples:
              statebus-fuzz --duration 1800 --corpus deploy/fuzz/corpus --crash-dir fuzz-crashes
              statebus-fuzz --duration 1800 --corpus deploy/fuzz/corpus --grow-corpus deploy/fuzz/corpus
              statebus-fuzz --write-corpus deploy/fuzz/corpus
              statebus-fuzz --replay fuzz-crashes/failure-host-7-2000.bin --target host
            """
    )

    @Option(help: "The first worker's seed (default: from the clock); worker k uses seed + k.")
    var seed: UInt64 = UInt64(Date().timeIntervalSince1970 * 1000)

    @Option(help: "How long to fuzz, in seconds.")
    var duration: Double = 60

    @Option(help: "How long each worker runs, in seconds.")
    var slice: Double = 60

    @Option(help: "A folder of corpus files (real encoded messages) to mutate.")
    var corpus: String?

    @Option(help: "Where failing inputs are saved.")
    var crashDir = "fuzz-crashes"

    @Option(help: "host, replica or both (alternating).")
    var target = "both"

    @Option(help: "Check the invariants after this many inputs.")
    var checkEvery = 2000

    @Option(help: "Write the seed corpus to this folder and exit.")
    var writeCorpus: String?

    @Option(help: "Send the inputs of this file (a corpus or crash file) to --target, then check.")
    var replay: String?

    @Option(help: "A finding already reported (text in its message): counted, not stopped at. Repeatable.")
    var known: [String] = []

    @Option(help: "Save inputs that reach a log message or reply kind first to this folder, as corpus files.")
    var growCorpus: String?

    @Option(help: "The most files --grow-corpus saves in one run.")
    var growLimit = 20

    @Flag(help: .hidden) var worker = false
    @Option(help: .hidden) var inputLog: String?

    func validate() throws {
        guard target == "both" || Worker.Target(rawValue: target) != nil else {
            throw ValidationError("--target must be host, replica or both, got '\(target)'")
        }
        guard duration > 0, slice > 0 else { throw ValidationError("--duration and --slice must be positive") }
        guard growLimit >= 0 else { throw ValidationError("--grow-limit must not be negative") }
        guard checkEvery > 0 else { throw ValidationError("--check-every must be positive") }
        guard replay == nil || target != "both" else { throw ValidationError("--replay needs --target host or --target replica") }
    }

    func run() async throws {
        if let writeCorpus {
            let count = try await CorpusWriter.write(to: writeCorpus)
            print("wrote \(count) corpus files to \(writeCorpus)")
            return
        }
        try FileManager.default.createDirectory(atPath: crashDir, withIntermediateDirectories: true)
        let corpusInputs = try loadCorpus()
        if worker || replay != nil {
            let replayed = try replay.map { FuzzInput.decodeAll(Array(try Data(contentsOf: URL(fileURLWithPath: $0)))) }
            let workerTarget = Worker.Target(rawValue: target) ?? .host
            // A replay reproduces; it grows nothing.
            let grower = try growCorpus.flatMap { folder in
                replay == nil && growLimit > 0 ? try CorpusGrower(folder: folder, target: workerTarget, limit: growLimit) : nil
            }
            let status = try await Worker(
                target: workerTarget, seed: seed, duration: .milliseconds(Int(duration * 1000)),
                checkEvery: checkEvery, corpus: corpusInputs, crashFolder: crashDir,
                logPath: inputLog ?? "\(crashDir)/replay-inputs.log", replay: replayed, known: known, grower: grower
            ).run()
            if status != 0 { throw ExitCode(status) }
            return
        }
        print("fuzzing for \(Int(duration)) s from seed \(seed), corpus \(corpusInputs.count) inputs, failures to \(crashDir)")
        // Out before the workers write to the same output, which a pipe (CI's tee) would
        // otherwise buffer past them; all streams, as strict concurrency refuses `stdout`.
        fflush(nil)
        var passOn = ["--check-every", String(checkEvery), "--crash-dir", crashDir]
        if let corpus { passOn += ["--corpus", corpus] }
        for pattern in known { passOn += ["--known", pattern] }
        let status = try Supervisor(
            targets: target == "both" ? Worker.Target.allCases : [Worker.Target(rawValue: target)!], seed: seed,
            duration: .milliseconds(Int(duration * 1000)), slice: .milliseconds(Int(slice * 1000)),
            workerArguments: passOn, crashFolder: crashDir, growCorpus: growCorpus, growLimit: growLimit
        ).run()
        if status != 0 { throw ExitCode(status) }
    }

    private func loadCorpus() throws -> [FuzzInput] {
        guard let corpus else { return [] }
        // Grown files (`--grow-corpus`) are corpus files like the others.
        let files = try FileManager.default.contentsOfDirectory(atPath: corpus).filter { $0.hasSuffix(".bin") }.sorted()
        return try files.flatMap { FuzzInput.decodeAll(Array(try Data(contentsOf: URL(fileURLWithPath: "\(corpus)/\($0)")))) }
    }
}
