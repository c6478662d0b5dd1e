import Foundation
import ZeroMQ

#if canImport(Glibc)
    import Glibc
#endif

/// CURVE key files, as `statebus keygen NAME` writes them: `NAME.key` holds the secret key
/// (mode 0600, like an ssh private key) and `NAME.pub` the public key, each as 40
/// characters of Z85 on a line of its own, after `#` comment lines.
///
/// A secret key file that its group or others may read, or that another user owns, is
/// refused as ssh refuses one: a key others could read proves nothing about who holds it.
public enum CurveKeyFile {
    /// Loads a key pair from a secret key file (the public key is derived from it).
    /// - Parameter path: the `.key` file.
    /// - Returns: the key pair.
    /// - Throws: ``KeyFileError`` when the file is missing, readable by others, owned by
    ///   another user, or holds no valid key.
    public static func loadSecret(at path: String) throws(KeyFileError) -> CurveKeyPair {
        var status = stat()
        guard stat(path, &status) == 0 else {
            throw KeyFileError(path: path, "cannot read it: \(String(cString: strerror(errno))) (make a key pair with `statebus keygen NAME`)")
        }
        guard status.st_uid == geteuid() else {
            throw KeyFileError(path: path, "it belongs to another user (uid \(status.st_uid)); a secret key must be owned by the user who uses it")
        }
        let mode = status.st_mode & 0o777
        guard mode & 0o077 == 0 else {
            throw KeyFileError(
                path: path,
                "its mode is 0\(String(mode, radix: 8)): a secret key must be readable by its owner only, or others could pose as this key; run `chmod 600 \(path)`"
            )
        }
        let secret = try keyText(at: path)
        do {
            return try CurveKeyPair(publicKey: try CurveKeyPair.publicKey(forSecretKey: secret), secretKey: secret)
        } catch {
            throw KeyFileError(path: path, "it holds no valid CURVE secret key (\(error))")
        }
    }

    /// Loads a public key: from a `.pub` file (or a `.key` file, whose public half is
    /// derived), or, when `pathOrKey` is no file but 40 characters of Z85, the key itself (a
    /// public key is no secret).
    /// - Parameter pathOrKey: a file path, or a Z85 public key.
    /// - Returns: the Z85 public key.
    /// - Throws: ``KeyFileError`` when it is neither.
    public static func loadPublic(at pathOrKey: String) throws(KeyFileError) -> String {
        if !FileManager.default.fileExists(atPath: pathOrKey) {
            guard (try? Z85.decode(pathOrKey))?.count == 32 else {
                throw KeyFileError(path: pathOrKey, "no such file, and not a 40-character Z85 public key either")
            }
            return pathOrKey
        }
        if pathOrKey.hasSuffix(".key") { return try loadSecret(at: pathOrKey).publicKey }
        let text = try keyText(at: pathOrKey)
        guard (try? Z85.decode(text))?.count == 32 else {
            throw KeyFileError(path: pathOrKey, "it holds no valid CURVE public key (expected 40 characters of Z85)")
        }
        return text
    }

    /// Writes a new key pair as `NAME.key` (mode 0600) and `NAME.pub` (mode 0644).
    /// - Parameters:
    ///   - keys: the key pair.
    ///   - name: the base name of both files.
    ///   - folder: where to write them (made, mode 0700, if missing).
    ///   - overwrite: replace existing files; without it an existing file is an error.
    /// - Returns: the paths written.
    /// - Throws: ``KeyFileError`` when a file exists (without `overwrite`) or cannot be written.
    @discardableResult
    public static func write(_ keys: CurveKeyPair, name: String, in folder: String, overwrite: Bool = false) throws(KeyFileError) -> (
        secret: String, public: String
    ) {
        let base = (folder as NSString).appendingPathComponent(name)
        let secretPath = base + ".key"
        let publicPath = base + ".pub"
        if !overwrite {
            for path in [secretPath, publicPath] where FileManager.default.fileExists(atPath: path) {
                throw KeyFileError(
                    path: path, "it exists already; keygen never replaces a key unless told --force (a replaced key locks out whoever uses it)")
            }
        }
        do {
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        } catch {
            throw KeyFileError(path: folder, "cannot make the folder: \(error)")
        }
        let header = "# StateBus CURVE secret key '\(name)': keep it private (mode 0600)\n# public key: \(keys.publicKey)\n"
        try create(secretPath, contents: header + keys.secretKey + "\n", mode: 0o600)
        try create(publicPath, contents: "# StateBus CURVE public key '\(name)'\n" + keys.publicKey + "\n", mode: 0o644)
        return (secretPath, publicPath)
    }

    /// Creates a file afresh with `mode` from the start (never a moment with wider rights),
    /// replacing an existing one.
    private static func create(_ path: String, contents: String, mode: mode_t) throws(KeyFileError) {
        unlink(path)
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode)
        guard descriptor >= 0 else { throw KeyFileError(path: path, "cannot create it: \(String(cString: strerror(errno)))") }
        defer { close(descriptor) }
        // The umask may have narrowed the mode; a public key must stay readable.
        fchmod(descriptor, mode)
        let bytes = Array(contents.utf8)
        let written = bytes.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
        guard written == bytes.count else { throw KeyFileError(path: path, "cannot write it: \(String(cString: strerror(errno)))") }
    }

    /// The key's line: the first that is 40 characters of Z85, else the first that is
    /// neither empty nor a `#` comment (reported invalid by the caller). A key never starts
    /// with `#`: it is the last of Z85's 85 characters, and the first of each group of five
    /// stands for at most the 83rd.
    private static func keyText(at path: String) throws(KeyFileError) -> String {
        let text: String
        do {
            text = try String(contentsOfFile: path, encoding: .utf8)
        } catch {
            throw KeyFileError(path: path, "cannot read it: \(error.localizedDescription)")
        }
        for line in text.split(whereSeparator: \.isNewline) {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed.utf8.count == 40, (try? Z85.decode(trimmed))?.count == 32 { return trimmed }
            if trimmed.isEmpty || trimmed.hasPrefix("#") { continue }
            return trimmed
        }
        throw KeyFileError(path: path, "it holds no key (only comments or nothing)")
    }
}

/// A key file that cannot be used: which file and why.
public struct KeyFileError: Error, Sendable, CustomStringConvertible {
    /// The file (or the text given as a key).
    public let path: String
    /// What is wrong and what to do.
    public let message: String

    /// Creates an error.
    public init(path: String, _ message: String) {
        self.path = path
        self.message = message
    }

    /// "key file PATH: MESSAGE".
    public var description: String { "key file \(path): \(message)" }
}
