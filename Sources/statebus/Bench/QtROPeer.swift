import Foundation
import StateBusLaunch

/// The peer in the same run: Qt Remote Objects 6.4's benchmark (a source object and replica
/// processes over a local socket, the same job as a host and its views over ipc://), measured
/// by `statebus bench --peer qtro` beside StateBus.
///
/// The peer's folder (its CMake project and `run.sh`, outside this repository) is copied to
/// a scratch folder (``Copy``), since `run.sh` builds and writes its results beside itself,
/// and built there before StateBus's figures (``build(in:)``). After them it runs there once
/// per case (`REPS=1`; `QUICK=1` for the quick and tiny plans). When the bench joins, the
/// peer's joins run in turns with StateBus's (``joinRound(in:sizes:)``, `ONLY=join`, one
/// round after or before each of StateBus's), so that a machine whose speed drifts slows
/// both alike, and its join figures are the median of those rounds. Its raw
/// lines (`case=… rep=… role=source|replica key=value …`) are read back into the figures
/// StateBus measures too.
struct QtROPeer {
    /// QtRO's figures, by the key of the StateBus row each one sits beside.
    struct Figures {
        var byKey: [String: Double] = [:]
        /// What to add to a row's note, by its key: each of the peer's joins when there
        /// were several.
        var notesByKey: [String: String] = [:]
        /// How the run went, for the report's notes.
        var summary: String
    }

    /// The peer's folder.
    let directory: String
    /// A smaller run (`QUICK=1`: counts / 10).
    let quick: Bool

    /// The peer's folder copied into a scratch folder, where its `run.sh` builds (at its
    /// first run) and writes its results; ``remove()`` deletes it.
    struct Copy: Sendable {
        /// The copy's path.
        let path: String
        private let scratch: ScratchFolder

        /// Copies `directory`, without a build or results folder copied from elsewhere
        /// (they point at their own paths).
        init(of directory: String) throws {
            let scratch = try ScratchFolder()
            path = "\(scratch.path)/qtro"
            do {
                try FileManager.default.copyItem(atPath: directory, toPath: path)
            } catch {
                scratch.remove()
                throw error
            }
            self.scratch = scratch
            try? FileManager.default.removeItem(atPath: "\(path)/build")
            try? FileManager.default.removeItem(atPath: "\(path)/results")
        }

        func remove() { scratch.remove() }
    }

    /// Where the peer is expected: `$STATEBUS_QTRO_DIR`, else `../shared/peers/qtro`.
    static var defaultDirectory: String {
        ProcessInfo.processInfo.environment["STATEBUS_QTRO_DIR"] ?? "../shared/peers/qtro"
    }

    /// Why the peer cannot run here, or `nil` when it may (whether Qt is installed shows
    /// when its build runs).
    func unavailability() -> String? {
        let files = FileManager.default
        guard files.fileExists(atPath: "\(directory)/run.sh") else {
            return "no QtRO benchmark at \(directory) (pass --peer-dir PATH or set STATEBUS_QTRO_DIR)"
        }
        return nil
    }

    /// Builds the peer in `copy` (`run.sh` builds before its cases; `ONLY=none` runs none),
    /// so that no build runs between figures.
    /// - Throws: ``BenchError`` when it fails (Qt or its build tools missing).
    func build(in copy: Copy) async throws {
        _ = try await Self.run(copy.path, environment: ["REPS": "1", "QUICK": quick ? "1" : "0", "ONLY": "none"])
    }

    /// One round of the peer's joins, a map of each of `sizes` entries (and its other join
    /// cases), for ``run(in:joinRounds:)``.
    /// - Returns: its raw lines.
    /// - Throws: ``BenchError`` when it fails.
    func joinRound(in copy: Copy, sizes: [Int]) async throws -> String {
        try await Self.run(
            copy.path,
            environment: ["REPS": "1", "QUICK": quick ? "1" : "0", "ONLY": "join", "JOIN_KS": sizes.map(String.init).joined(separator: " ")])
    }

    /// Runs every case of the peer's benchmark once and reads its figures.
    /// - Parameter joinRounds: the raw lines of the join rounds that ran in turns with
    ///   StateBus's (``joinRound(in:sizes:)``): the join figures are theirs, not this run's.
    ///   Empty: this run's.
    /// - Throws: ``BenchError`` when it fails or writes no figures.
    func run(in copy: Copy, joinRounds: [String] = []) async throws -> Figures {
        var environment = ["REPS": "1", "QUICK": quick ? "1" : "0"]
        // Joins the rounds measured already are not run again: a list of no sizes. A space,
        // since `run.sh` reads an empty JOIN_KS as unset and takes its default sizes.
        if !joinRounds.isEmpty { environment["JOIN_KS"] = " " }
        let raw = try await Self.run(copy.path, environment: environment)
        // Its own figures, not only the join rounds': a run of every case that gave none failed.
        guard !Self.figures(fromRaw: raw).byKey.isEmpty else { throw BenchError("the QtRO benchmark wrote no figures to results/raw.txt") }
        return Self.figures(fromRaw: raw, joinRounds: joinRounds)
    }

    /// Runs the peer's `run.sh` in `copy` and returns its `results/raw.txt`.
    /// - Throws: ``BenchError`` when it fails.
    private static func run(_ copy: String, environment: [String: String]) async throws -> String {
        let run = try await OneShotCommand.run(
            URL(fileURLWithPath: "/bin/bash"), ["\(copy)/run.sh"], environment: environment, timeout: .seconds(900))
        guard run.status == 0 else {
            throw BenchError(
                "the QtRO benchmark failed (exit status \(run.status)): \(run.output.suffix(5).joined(separator: " / ")); "
                    + "it needs Qt 6 Remote Objects and its build tools (apt-get install qt6-remoteobjects-dev libqt6remoteobjects6-bin qt6-base-dev cmake g++ time)"
            )
        }
        return try String(contentsOfFile: "\(copy)/results/raw.txt", encoding: .utf8)
    }

    /// The figures in the lines of `results/raw.txt`; a case run several times gives each
    /// figure's median (the lower middle one for an even count). The join cases' figures
    /// (join time, memory, a keyed collection's join) come from `joinRounds` (each round's
    /// raw lines) when there are any, and the summary then counts each size's valid joins
    /// against the rounds and names the rounds' cases that were not ok.
    static func figures(fromRaw raw: String, joinRounds: [String] = []) -> Figures {
        func casesByName(in raw: String) -> [String: [[String: String]]] {
            var cases: [String: [[String: String]]] = [:]
            for line in raw.split(separator: "\n") where line.hasPrefix("case=") {
                let fields = Dictionary(
                    line.split(separator: " ").compactMap { word -> (String, String)? in
                        guard let equals = word.firstIndex(of: "=") else { return nil }
                        return (String(word[..<equals]), String(word[word.index(after: equals)...]))
                    }, uniquingKeysWith: { _, last in last })
                cases[fields["case"] ?? "", default: []].append(fields)
            }
            return cases
        }
        let usesRounds = !joinRounds.isEmpty
        let cases = casesByName(in: raw)
        let joinCases = usesRounds ? casesByName(in: joinRounds.joined(separator: "\n")) : cases
        func number(_ text: String?) -> Double? { text.flatMap(Double.init) }
        func replicas(_ name: String, in cases: [String: [[String: String]]] = cases) -> [[String: String]] {
            (cases[name] ?? []).filter { $0["role"] == "replica" && $0["status"] == "ok" }
        }
        var figures = Figures(summary: "")
        // Throughput: the slowest replica, counted end to end from the source's first set.
        for (kind, name) in [("int", "counter"), ("string", "blob256")] {
            for views in [1, 3, 10] {
                let records = cases["tput_local_\(name)_x\(views)"] ?? []
                guard let source = records.first(where: { $0["role"] == "source" && $0["status"] == "ok" }),
                    let updates = number(source["n"]), let start = number(source["t_start_ns"])
                else { continue }
                let rates = replicas("tput_local_\(name)_x\(views)").compactMap { replica in
                    number(replica["t_last_ns"]).map { updates / (($0 - start) / 1e9) }
                }
                if rates.count == views, let slowest = rates.min() { figures.byKey["throughput.\(kind).\(views)"] = slowest }
            }
        }
        if let echo = replicas("lat_local").first {
            for (key, field) in [("echo.own.p50", "p50_us"), ("echo.own.p99", "p99_us"), ("echo.own.p999", "p999_us")] {
                if let micro = number(echo[field]) { figures.byKey[key] = micro * 1_000 }
            }
        }
        var joinCounts: [String] = []
        let joinPrefix = "join_local_map_k"
        let joinSizes = Set(joinCases.keys.compactMap { $0.hasPrefix(joinPrefix) ? Int($0.dropFirst(joinPrefix.count)) : nil }).sorted()
        for size in joinSizes where size > 0 {
            let joins = replicas("\(joinPrefix)\(size)", in: joinCases).filter { $0["valid"] == "1" }
            if usesRounds {
                joinCounts.append("\(joins.count) of \(joinRounds.count) rounds at \(size.formatted()) entries")
            } else if joins.count > 1 {
                joinCounts.append("\(joins.count) of \(size.formatted()) entries")
            }
            if joins.count > 1 {
                let each = joins.compactMap { number($0["main_to_valid_ms"]) }.map { String(format: "%.1f ms", $0) }
                figures.notesByKey["join.\(size)"] = "QtRO's joins: \(each.joined(separator: ", "))"
            }
            if let milli = joins.compactMap({ number($0["main_to_valid_ms"]) }).lowerMedian { figures.byKey["join.\(size)"] = milli * 1e6 }
            if let kilobytes = joins.compactMap({ number($0["rss_time_kb"]) }).lowerMedian { figures.byKey["memory.view.\(size)"] = kilobytes * 1024 }
        }
        // A keyed collection's join beside QtRO's list model (rows fetched into the cache).
        for size in [10_000, 100_000] {
            let joins = replicas("join_local_model_k\(size)", in: joinCases).filter { $0["valid"] == "1" }
            if let milli = joins.compactMap({ number($0["main_to_valid_ms"]) }).lowerMedian { figures.byKey["collection.join.\(size)"] = milli * 1e6 }
        }
        func notOK(_ cases: [String: [[String: String]]]) -> [String] {
            cases.filter { $0.value.contains { $0["status"] != "ok" && $0["status"] != "idle" } }.keys.sorted()
        }
        // With rounds, the run's own join cases count for nothing, so neither do their failures.
        let failed = notOK(usesRounds ? cases.filter { !$0.key.hasPrefix("join_") } : cases)
        let failedInRounds = usesRounds ? notOK(joinCases) : []
        figures.summary =
            "Qt Remote Objects 6.4 over a local socket, one repetition per case, same session; join = a QVariantMap of N entries, "
            + "from the replica's main() to initialized(); RSS = the replica's peak (/usr/bin/time)"
            + (joinCounts.isEmpty
                ? ""
                : "; join time and RSS: the median of the valid joins (\(joinCounts.joined(separator: ", ")))"
                    + (usesRounds ? ", in rounds taking turns with StateBus's joins" : ""))
            + (failed.isEmpty ? "" : "; cases not ok: \(failed.joined(separator: ", "))")
            + (failedInRounds.isEmpty ? "" : "; join cases not ok in a round: \(failedInRounds.joined(separator: ", "))")
        return figures
    }
}
