import ArgumentParser
import Foundation
import StateBus
import StateBusCommandLine
import ZeroMQ

/// `statebus keygen`: makes a CURVE key pair for a host or a view.
struct KeygenCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "keygen",
        abstract: "Make a CURVE key pair: NAME.key (secret, mode 0600) and NAME.pub.",
        discussion: """
            Prints the public key. Give a host's .pub to its views (--host-key); list each \
            view's public key in the host's authorized keys file, one line per key: \
            ROLE PUBLIC-KEY NAME, ROLE one of read, write, write:Obj1,Obj2. An existing file \
            is never replaced unless --force is given.

            Examples:
              statebus keygen host --out /etc/statebus
              statebus keygen dashboard
              echo "read $(tail -1 dashboard.pub) dashboard" >> authorized.keys
            """
    )

    @Argument(help: "The key's name: the files are NAME.key and NAME.pub.")
    var name: String

    @Option(name: .long, help: "The folder to write to (made, mode 0700, when missing).")
    var out: String = "."

    @Flag(name: .long, help: "Replace existing key files (whoever used the old key is locked out).")
    var force = false

    func validate() throws {
        guard !name.isEmpty, !name.contains("/"), name != ".", name != ".." else {
            throw ValidationError("the name '\(name)' cannot be a file name: use letters, digits, - or _, for example `host`")
        }
    }

    func run() throws {
        let keys = try CurveKeyPair.generate()
        do {
            let written = try CurveKeyFile.write(keys, name: name, in: out, overwrite: force)
            FileHandle.standardError.write(Data("wrote \(written.secret) (secret, mode 0600) and \(written.public)\n".utf8))
        } catch {
            throw ValidationError("\(error)")
        }
        emit(keys.publicKey)
    }
}
