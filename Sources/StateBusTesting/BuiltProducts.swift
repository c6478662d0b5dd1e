import Foundation
import StateBusRuntime

/// Finds executables built by `swift build`/`swift test` next to the test bundle.
public enum BuiltProducts {
    /// The folder holding the built products (`.build/debug` or `.build/release`).
    public static var folder: URL {
        if let override = ProcessInfo.processInfo.environment[EnvironmentVariableName.binDirectory] {
            return URL(fileURLWithPath: override)
        }
        // The test runner is `<products>/StateBusPackageTests.xctest` on Linux.
        let runner = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        return runner.deletingLastPathComponent()
    }

    /// The path of a built executable, or a failure that says how to build it.
    public static func executable(_ name: String) throws -> URL {
        let url = folder.appendingPathComponent(name)
        guard FileManager.default.isExecutableFile(atPath: url.path) else {
            throw MissingProduct(name: name, folder: folder.path)
        }
        return url
    }

    /// A product that has not been built.
    public struct MissingProduct: Error, CustomStringConvertible {
        /// The executable's name.
        public let name: String
        /// Where it was looked for.
        public let folder: String
        /// What to do.
        public var description: String {
            "executable '\(name)' not found in \(folder): run `swift build` first, or set \(EnvironmentVariableName.binDirectory)"
        }
    }
}
