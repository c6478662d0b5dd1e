import Foundation

/// Finds executables built by `swift build`/`swift test` next to the test bundle.
enum BuiltProducts {
    /// The folder holding the built products (`.build/debug` or `.build/release`).
    static var folder: URL {
        if let override = ProcessInfo.processInfo.environment["STATEBUS_BIN_DIR"] {
            return URL(fileURLWithPath: override)
        }
        // The test runner is `<products>/StateBusPackageTests.xctest` on Linux.
        let runner = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        return runner.deletingLastPathComponent()
    }

    /// The path of a built executable, or a failure that says how to build it.
    static func executable(_ name: String) throws -> URL {
        let url = folder.appendingPathComponent(name)
        guard FileManager.default.isExecutableFile(atPath: url.path) else {
            throw MissingProduct(name: name, folder: folder.path)
        }
        return url
    }

    struct MissingProduct: Error, CustomStringConvertible {
        let name: String
        let folder: String
        var description: String {
            "executable '\(name)' not found in \(folder): run `swift build` first, or set STATEBUS_BIN_DIR"
        }
    }
}
