import Foundation
import StateBus
import Testing
import ZeroMQ

/// Issue 13, keys: what `statebus keygen` writes and what a host or view accepts to load.
@Suite("CURVE key files and the authorized keys file")
struct KeyFileTests {
    @Test("a key pair written as NAME.key (0600) and NAME.pub loads back, and is never overwritten unless asked")
    func writeAndLoad() throws {
        let folder = Fixtures.temporaryFolder()
        let keys = try CurveKeyPair.generate()
        let written = try CurveKeyFile.write(keys, name: "host", in: folder)
        #expect(written.secret == "\(folder)/host.key")
        #expect(try mode(of: written.secret) == 0o600)
        #expect(try CurveKeyFile.loadSecret(at: written.secret) == keys)
        #expect(try CurveKeyFile.loadPublic(at: written.public) == keys.publicKey)
        #expect(try CurveKeyFile.loadPublic(at: keys.publicKey) == keys.publicKey, "a public key may be given as text")

        let other = try CurveKeyPair.generate()
        #expect(throws: KeyFileError.self) { try CurveKeyFile.write(other, name: "host", in: folder) }
        #expect(try CurveKeyFile.loadSecret(at: written.secret) == keys, "the refused write changed nothing")
        try CurveKeyFile.write(other, name: "host", in: folder, overwrite: true)
        #expect(try CurveKeyFile.loadSecret(at: written.secret) == other)
    }

    @Test("a secret key file its group or others may read is refused, naming the mode and the fix")
    func looseModeRefused() throws {
        let folder = Fixtures.temporaryFolder()
        let written = try CurveKeyFile.write(try CurveKeyPair.generate(), name: "view", in: folder)
        chmod(written.secret, 0o644)
        let error = try #require(throws: KeyFileError.self) { try CurveKeyFile.loadSecret(at: written.secret) }
        #expect(error.description.contains("0644"), "\(error)")
        #expect(error.description.contains("chmod 600"), "\(error)")
        chmod(written.secret, 0o640)
        #expect(throws: KeyFileError.self) { try CurveKeyFile.loadSecret(at: written.secret) }
        chmod(written.secret, 0o400)
        _ = try CurveKeyFile.loadSecret(at: written.secret)
    }

    @Test("the authorized keys file: roles, comments, and each malformed line refused with file:line and what is wrong")
    func authorizedKeys() throws {
        let (a, b, c) = (try CurveKeyPair.generate().publicKey, try CurveKeyPair.generate().publicKey, try CurveKeyPair.generate().publicKey)
        let file = """
            # who may come in
            read \(a) dashboard

            write:Profile,SharedData \(b) profile app
            write\t\(c) editor
            """
        let keys = try AuthorizedKeys(parsing: file, file: "authorized.keys")
        #expect(keys.entries.count == 3)
        #expect(keys.entry(for: a)?.role == .read)
        #expect(keys.entry(for: b)?.name == "profile app")
        #expect(keys.entry(for: b)?.role.mayWrite("Profile") == true)
        #expect(keys.entry(for: b)?.role.mayWrite("Other") == false)
        #expect(keys.entry(for: c)?.role.mayWrite("Anything") == true)
        #expect(keys.entry(for: a)?.role.mayWrite("Profile") == false)

        let cases: [(String, String)] = [
            ("read \(a)", "expected ROLE PUBLIC-KEY NAME"),
            ("admin \(a) root", "unknown role 'admin'"),
            ("read notakey dashboard", "is not a CURVE public key"),
            ("write: \(a) x", "names no object"),
            ("write:A,,B \(a) x", "names no object"),
            ("read \(a) one\nwrite \(a) two", "listed already on line 2")
        ]
        for (text, message) in cases {
            let error = try #require(throws: AuthorizedKeysError.self) { try AuthorizedKeys(parsing: "# header\n" + text, file: "auth.keys") }
            #expect(error.description.hasPrefix("auth.keys:"), "\(error)")
            #expect(error.line >= 2, "\(error)")
            #expect(error.description.contains(message), "\(error)")
        }
    }

    private func mode(of path: String) throws -> mode_t {
        var status = stat()
        try #require(stat(path, &status) == 0)
        return status.st_mode & 0o777
    }
}
