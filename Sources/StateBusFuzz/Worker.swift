import Foundation
import StateBusRuntime

/// One fuzzing process: feeds one target for a while, checking it every `checkEvery`
/// inputs, and prints what it did. A failed check saves the inputs since the last passed
/// one to the crash folder and exits with status 2; a crash leaves them in the input log
/// for the supervisor to save.
struct Worker {
    enum Target: String, CaseIterable { case host, replica }

    let target: Target
    let seed: UInt64
    let duration: Duration
    let checkEvery: Int
    let corpus: [FuzzInput]
    let crashFolder: String
    let logPath: String
    /// Inputs to send instead of generated ones (`--replay`).
    let replay: [FuzzInput]?
    /// Findings already reported (`--known`): a failed check whose message contains one is
    /// saved once and counted, the target recovers, and the run goes on, so one frequent
    /// bug does not hide the rarer ones.
    let known: [String]
    /// Saves the inputs that reach something first (`--grow-corpus`); `nil`: no growing.
    var grower: CorpusGrower? = nil

    func run() async throws -> Int32 {
        var random = SeededRandom(seed: seed)
        let log = try InputLog(path: logPath)
        let start = ContinuousClock.now
        var sent = 0
        var bytes = 0
        var checks = 0
        var nextReport = start + .seconds(10)
        var knownSeen: [String: Int] = [:]
        // A worker whose supervisor was stopped stops too, rather than fuzz on as an orphan.
        let parent = getppid()
        let host: HostTarget?
        let replica: ReplicaTarget?
        switch target {
        case .host: (host, replica) = (try await HostTarget(), nil)
        case .replica: (host, replica) = (nil, try ReplicaTarget(corpus: corpus, using: &random))
        }
        try replica?.settle()
        let requests = RequestGenerator(
            corpus: corpus.filter { $0.channel == .request || $0.channel == .subscription }, maxMessageBytes: HostTarget.maxMessageBytes)
        let rssStart = FuzzSupport.residentMiB()
        defer {
            host?.close()
            replica?.close()
        }
        func report(_ label: String) {
            let elapsed = ContinuousClock.now - start
            let seconds = max(0.001, elapsed.inSeconds)
            let counts =
                host.map {
                    "replies \($0.replies.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")) blocked=\($0.blocked)"
                }
                ?? replica.map {
                    "served \($0.served.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")) unsent=\($0.unsent)"
                } ?? ""
            let knownCounts = knownSeen.isEmpty ? "" : " known=\(knownSeen.values.reduce(0, +))"
            print(
                "\(label) target=\(target) seed=\(seed) inputs=\(sent) (\(Int(Double(sent) / seconds))/s) bytes=\(bytes) checks=\(checks) rss=\(Int(rssStart))->\(Int(FuzzSupport.residentMiB()))MiB \(counts)\(knownCounts)"
            )
        }
        func checkTargets() async throws {
            do {
                try host?.check()
                try replica?.check(using: &random)
            } catch let finding as Finding {
                guard let pattern = known.first(where: { finding.description.contains($0) }) else { throw finding }
                if knownSeen[pattern, default: 0] == 0 {
                    log.save(to: "\(crashFolder)/known-\(target)-\(seed)-\(sent).bin")
                    print("KNOWN target=\(target) seed=\(seed) after \(sent) inputs: \(finding)")
                }
                knownSeen[pattern, default: 0] += 1
                try await host?.recover()
            }
        }
        func reachedCount() -> Int { host?.reachedCount ?? replica?.reachedCount ?? 0 }
        func reached() -> Set<String> { host?.reached ?? replica?.reached ?? [] }
        do {
            // What the target reaches without inputs, with the corpus and with a check is no
            // news: this target's corpus inputs are sent once and checked before growing starts.
            if let grower, replay == nil {
                let channels: Set<FuzzInput.Channel> = target == .host ? [.request, .subscription] : [.publication, .reply, .localWrite]
                for input in corpus where channels.contains(input.channel) {
                    log.record(input)
                    try host?.send(input, index: sent)
                    try replica?.send(input)
                }
                try await checkTargets()
                grower.prime(reached(), count: reachedCount())
            }
            while replay.map({ sent < $0.count }) ?? (ContinuousClock.now - start < duration && getppid() == parent) {
                let input: FuzzInput
                if let replay {
                    input = replay[sent]
                } else if let replica {
                    input = replica.generate(using: &random)
                } else {
                    input = requests.next(using: &random)
                }
                log.record(input)
                grower?.record(input)
                try host?.send(input, index: sent)
                try replica?.send(input)
                grower?.observe(count: reachedCount(), keys: reached)
                sent += 1
                bytes += input.size
                if sent % checkEvery == 0 || replay.map({ sent == $0.count }) == true {
                    try await checkTargets()
                    grower?.observe(count: reachedCount(), keys: reached)
                    if sent % (checkEvery * 10) == 0 { try host?.renewSubscriber() }
                    checks += 1
                    log.reset()
                    if ContinuousClock.now >= nextReport {
                        report("progress")
                        nextReport = ContinuousClock.now + .seconds(10)
                    }
                }
            }
            try await checkTargets()
            checks += 1
        } catch let finding as Finding {
            let file = "\(crashFolder)/failure-\(target)-\(seed)-\(sent).bin"
            log.save(to: file)
            try? "\(finding)\n".write(toFile: file + ".txt", atomically: true, encoding: .utf8)
            report("failed")
            print(
                "FAILURE target=\(target) seed=\(seed) after \(sent) inputs: \(finding)\n  the \(log.count) inputs since the last passed check: \(file) (replay: --replay \(file) --target \(target))"
            )
            return 2
        }
        report("done")
        if let grower { print("corpus grown by \(grower.saved) files in \(grower.folder) (target=\(target) seed=\(seed))") }
        if let replica { print("replica log of seed \(seed):\n  \(replica.logSummary)") }
        return 0
    }
}
