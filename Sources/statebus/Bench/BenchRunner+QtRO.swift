/// The Qt Remote Objects peer of one bench run: its copy, the raw lines of the join rounds it
/// ran in turns with StateBus's, and why it stopped, if it did.
struct QtROPeerRun {
    let peer: QtROPeer
    var copy: QtROPeer.Copy?
    var joinRounds: [String] = []
    /// Why the peer does not run (any more); its figures are then left out.
    var failure: String?
}

extension BenchRunner {
    // MARK: The peer

    /// Readies the peer before StateBus's figures: a copy of its folder, built. A peer that
    /// cannot run here is a note, not a failed check: StateBus's figures stand without it.
    mutating func prepare(_ peer: QtROPeer) async {
        var run = QtROPeerRun(peer: peer)
        defer { qtroPeer = run }
        if let reason = peer.unavailability() {
            run.failure = reason
            return
        }
        let copy: QtROPeer.Copy
        do {
            copy = try QtROPeer.Copy(of: peer.directory)
        } catch {
            run.failure = "its folder could not be copied: \(error)"
            return
        }
        run.copy = copy
        say("building the Qt Remote Objects benchmark")
        do {
            try await peer.build(in: copy)
        } catch {
            run.failure = "\(error)"
        }
    }

    /// One round of the peer's joins, at the plan's sizes (`round` counts from 0).
    mutating func qtroJoinRound(_ round: Int) async {
        guard var run = qtroPeer, run.failure == nil, let copy = run.copy else { return }
        say("Qt Remote Objects' joins, round \(round + 1) of \(plan.joinRounds)")
        do {
            run.joinRounds.append(try await run.peer.joinRound(in: copy, sizes: plan.joinSizes))
        } catch {
            run.failure = "its joins, round \(round + 1) of \(plan.joinRounds): \(error)"
        }
        qtroPeer = run
    }

    /// Whether the peer's joins took turns with StateBus's and the peer still runs.
    var qtroJoinsTookTurns: Bool { qtroPeer.map { $0.failure == nil && !$0.joinRounds.isEmpty } ?? false }

    /// Runs the rest of Qt Remote Objects' benchmark and sets its figures beside StateBus's;
    /// its join figures are those of the rounds that took turns with StateBus's joins, when
    /// the join part ran.
    mutating func qtro() async {
        guard let run = qtroPeer else { return }
        defer { run.copy?.remove() }
        guard run.failure == nil, let copy = run.copy else {
            report.peer = "not run: \(run.failure ?? "no copy of its folder")"
            return
        }
        say("the Qt Remote Objects benchmark (a few minutes)")
        do {
            let figures = try await run.peer.run(in: copy, joinRounds: run.joinRounds)
            for index in report.rows.indices {
                guard let key = report.rows[index].key else { continue }
                if let figure = figures.byKey[key] { report.rows[index].setQtRO(figure) }
                if let note = figures.notesByKey[key] {
                    report.rows[index].note = [report.rows[index].note, note].compactMap { $0 }.joined(separator: "; ")
                }
            }
            report.peer = figures.summary
        } catch {
            report.peer = "not run: \(error)"
        }
    }
}
