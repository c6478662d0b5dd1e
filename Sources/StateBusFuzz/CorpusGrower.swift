import Foundation

/// Grows the corpus with what a run reaches first (`--grow-corpus`).
///
/// The harness has no coverage feedback, so novelty is what the target says: the gists of
/// its log messages (``LogCounter``) and the kinds of its replies or of what the stand-in
/// served. When a key appears that neither the corpus, nor the target's start, nor an
/// earlier input of the run reached, the last few inputs (the answer to an input can arrive
/// a few inputs later, and a refusal may need the input before it) are saved as one corpus
/// file named after the key. A key that already has a file in the folder is known, so the
/// workers of a run, and later runs, do not save it again.
///
/// Bounded: at most `limit` files per worker (the supervisor hands each worker what the run
/// has left) and at most ``maxFileBytes`` per file. Used by one worker's fuzzing thread only.
final class CorpusGrower {
    /// The largest file kept: older inputs of the window are left out to fit, and a single
    /// input larger than this is not kept at all.
    static let maxFileBytes = 16 * 1024
    /// How many of the latest inputs a file holds at most.
    static let window = 4
    /// The file name prefix of grown files (``CorpusWriter`` keeps them when it rewrites
    /// the seed corpus).
    static let prefix = "grown-"

    let folder: String
    let target: Worker.Target
    private var remaining: Int
    private var known: Set<String> = []
    private var recent: [FuzzInput] = []
    /// The cheap count of distinct keys at the last look: keys are collected only when it
    /// changes, not after every input.
    private var lastCount = -1
    /// The files this worker saved.
    private(set) var saved = 0

    /// - Parameters:
    ///   - folder: the corpus folder to save to (created if missing).
    ///   - target: the target whose keys these are, part of each file's name.
    ///   - limit: how many files this worker may save.
    /// - Throws: when the folder cannot be created or read.
    init(folder: String, target: Worker.Target, limit: Int) throws {
        self.folder = folder
        self.target = target
        remaining = limit
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    }

    /// Records an input about to be sent, for the window of the next saved file.
    func record(_ input: FuzzInput) {
        recent.append(input)
        if recent.count > Self.window { recent.removeFirst() }
    }

    /// Marks everything reached so far as known without saving: what the target's start,
    /// the corpus and the checks reach is not news.
    func prime(_ keys: Set<String>, count: Int) {
        known.formUnion(keys)
        lastCount = count
        recent = []
    }

    /// Looks for keys not reached before and saves the recent inputs for each (once).
    ///
    /// - Parameters:
    ///   - count: a cheap count of the distinct keys reached; when it has not changed since
    ///     the last look, `keys` is not called.
    ///   - keys: every key reached so far.
    func observe(count: Int, keys: () -> Set<String>) {
        guard count != lastCount else { return }
        lastCount = count
        for key in keys().subtracting(known).sorted() {
            known.insert(key)
            save(key)
        }
    }

    private func save(_ key: String) {
        let name = "\(Self.prefix)\(target)-\(Self.slug(key)).bin"
        let path = "\(folder)/\(name)"
        guard remaining > 0, !FileManager.default.fileExists(atPath: path) else { return }
        // The newest inputs first, as many as fit.
        var kept: [FuzzInput] = []
        var size = 0
        for input in recent.reversed() {
            var bytes: [UInt8] = []
            input.encode(into: &bytes)
            guard size + bytes.count <= Self.maxFileBytes else { break }
            kept.insert(input, at: 0)
            size += bytes.count
        }
        guard !kept.isEmpty else {
            print("CORPUS target=\(target) reached '\(key)' first with an input over \(Self.maxFileBytes) bytes: not kept")
            return
        }
        var bytes: [UInt8] = []
        for input in kept { input.encode(into: &bytes) }
        guard (try? Data(bytes).write(to: URL(fileURLWithPath: path))) != nil else {
            print("CORPUS target=\(target) could not write \(path)")
            return
        }
        remaining -= 1
        saved += 1
        print("CORPUS target=\(target) reached '\(key)' first: \(kept.count) inputs, \(bytes.count) bytes to \(path)")
    }

    /// A key as a file name: lowercase letters and digits, the rest one dash, at most 80.
    static func slug(_ key: String) -> String {
        var out = ""
        for character in key.lowercased() {
            if character.isASCII, character.isLetter || character.isNumber {
                out.append(character)
            } else if !out.isEmpty, out.last != "-" {
                out.append("-")
            }
        }
        while out.last == "-" { out.removeLast() }
        return String(out.prefix(80))
    }
}
