// swift-tools-version: 6.1
//
// StateBus: SwiftUI's state model across process boundaries, over ZeroMQ.
// The dependency arrows point one way: CZeroMQ <- ZeroMQ <- StateBus, StateBusWire <- StateBus.

import CompilerPluginSupport
import PackageDescription

#if canImport(Glibc)
    import Glibc
#endif

/// `STATEBUS_STRICT=1` (set by `deploy/check.sh` and CI) turns every warning of this package's
/// own targets into an error. Off by default, so a newer compiler's new warnings never break
/// a user's build of StateBus as a dependency.
let strict: [SwiftSetting] = Context.environment["STATEBUS_STRICT"] == "1" ? [.unsafeFlags(["-warnings-as-errors"])] : []

/// How the bench's application-sized view (`statebus-bench-view`) is linked on Linux, so that
/// the process keeps fewer of its executable's pages resident:
/// - with the toolchain's lld;
/// - exporting no symbols (`--no-export-dynamic`): the standard library's link arguments
///   export every symbol of the package's objects, and the loader reads the exports'
///   tables each time it binds a shared library's symbol;
/// - with relative relocations packed (`-z pack-relative-relocs`) where the C library can
///   load them (glibc 2.36 and later; Ubuntu 22.04's 2.35 cannot), so that the loader reads
///   kilobytes of relocations at startup instead of megabytes.
/// Performance.md ("Joining and memory") gives the same flags for an application's views.
/// Only for a target in no product: SwiftPM refuses unsafe flags in a product that another
/// package depends on by version, and `statebus` is one. Without lld on the `PATH`, or off
/// Linux, the view links the default way.
let leanExecutable: [LinkerSetting] = {
    #if canImport(Glibc)
        // Swift's toolchains for Linux ship lld beside `swift`; without it, link the default way.
        let path = Context.environment["PATH"] ?? ""
        guard path.split(separator: ":").contains(where: { access("\($0)/ld.lld", X_OK) == 0 }) else { return [] }
        var flags = ["-use-ld=lld", "-Xlinker", "--no-export-dynamic"]
        var name = [CChar](repeating: 0, count: 64)  // "glibc 2.36"
        _ = confstr(Int32(_CS_GNU_LIBC_VERSION), &name, name.count)
        let text = String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        let version = text.split(separator: " ").last?.split(separator: ".").compactMap { Int($0) } ?? []
        if version.count >= 2, (version[0], version[1]) >= (2, 36) {
            flags += ["-Xlinker", "-z", "-Xlinker", "pack-relative-relocs"]
        }
        return [.unsafeFlags(flags, .when(platforms: [.linux]))]
    #else
        return []
    #endif
}()

let package = Package(
    name: "StateBus",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "ZeroMQ", targets: ["ZeroMQ"]),
        .library(name: "StateBusWire", targets: ["StateBusWire"]),
        .library(name: "StateBus", targets: ["StateBus"]),
        .library(name: "StateBusTerminalUI", targets: ["StateBusTerminalUI"]),
        .library(name: "StateBusTesting", targets: ["StateBusTesting"]),
        .library(name: "StateBusPrometheus", targets: ["StateBusPrometheus"]),
        .library(name: "StateBusEtcd", targets: ["StateBusEtcd"]),
        .library(name: "StateBusHA", targets: ["StateBusHA"]),
        .executable(name: "statebus", targets: ["statebus"])
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-protobuf", exact: "1.39.0"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/x-sheep/swift-property-based", from: "2.0.1"),
        .package(url: "https://github.com/swiftlang/swift-syntax", from: "603.0.1"),
        .package(url: "https://github.com/jpsim/Yams", from: "6.2.2"),
        .package(url: "https://github.com/HdrHistogram/hdrhistogram-swift", from: "0.2.0"),
        .package(url: "https://github.com/pointfreeco/swift-identified-collections", from: "1.1.1"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1")
    ],
    targets: [
        // libzmq, found with pkg-config; `deploy/setup.sh` installs it.
        .systemLibrary(
            name: "CZeroMQ",
            pkgConfig: "libzmq",
            providers: [.apt(["libzmq3-dev"]), .brew(["zeromq"])]
        ),
        // SQLite, for the host's persisted properties; `deploy/setup.sh` installs it.
        .systemLibrary(
            name: "CSQLite",
            pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"]), .brew(["sqlite"])]
        ),
        // libcurl, the etcd client's HTTP: a library the system has, so that no HTTP or TLS
        // stack is compiled with StateBus; `deploy/setup.sh` installs its headers.
        .systemLibrary(
            name: "CCurl",
            pkgConfig: "libcurl",
            providers: [.apt(["libcurl4-openssl-dev"]), .brew(["curl"])]
        ),
        // libmicrohttpd, the HTTP server of the metrics endpoint; `deploy/setup.sh` installs it.
        .systemLibrary(
            name: "CMicroHTTPD",
            pkgConfig: "libmicrohttpd",
            providers: [.apt(["libmicrohttpd-dev"]), .brew(["libmicrohttpd"])]
        ),
        // fork and exec with a parent-death signal, which posix_spawn cannot ask for: the
        // launcher's children end when it does, however it ends.
        .target(name: "CChildSpawn"),
        // The safe Swift wrapper of libzmq. Knows nothing about state sync.
        .target(
            name: "ZeroMQ",
            dependencies: ["CZeroMQ", "StateBusRuntime"], swiftSettings: strict
        ),
        // Wire messages generated from proto/statebus.proto, and the Value codec.
        // Knows nothing about sockets.
        .target(
            name: "StateBusWire",
            dependencies: [.product(name: "SwiftProtobuf", package: "swift-protobuf")],
            exclude: ["Generated/statebus.proto.sha256"], swiftSettings: strict
        ),
        // The conventions every StateBus process shares: the runtime folder and the names of
        // the environment variables the launcher injects. Depends on nothing of StateBus, so
        // the launcher does not need the engine.
        .target(name: "StateBusRuntime", swiftSettings: strict),
        // How @SharedModel and its markers expand: a library of its own, so that the macro
        // tests depend on it and not on the macro target. A test target that depends on a
        // macro target makes SwiftPM build the whole test product, and every library under it,
        // a second time for the host ("-tool" variants).
        .target(
            name: "StateBusMacroExpansion",
            dependencies: [
                .product(name: "SwiftSyntaxMacros", package: "swift-syntax"),
                .product(name: "SwiftSyntax", package: "swift-syntax"),
                .product(name: "SwiftSyntaxBuilder", package: "swift-syntax"),
                .product(name: "SwiftDiagnostics", package: "swift-syntax")
            ], swiftSettings: strict
        ),
        // The compiler plugin that serves those expansions.
        .macro(
            name: "StateBusMacros",
            dependencies: [
                "StateBusMacroExpansion",
                .product(name: "SwiftSyntaxMacros", package: "swift-syntax"),
                .product(name: "SwiftCompilerPlugin", package: "swift-syntax")
            ], swiftSettings: strict
        ),
        // Host, replica, the model macro's runtime, bindings, environment, views.
        .target(
            name: "StateBus",
            dependencies: [
                "ZeroMQ", "StateBusWire", "StateBusRuntime", "StateBusMacros", "CSQLite",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "IdentifiedCollections", package: "swift-identified-collections"),
                .product(name: "SwiftProtobuf", package: "swift-protobuf"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "CoreMetrics", package: "swift-metrics")
            ], swiftSettings: strict
        ),
        // etcd's v3 API (its JSON gateway, over libcurl) and a leader election on it. Knows
        // nothing of StateBus.
        .target(
            name: "StateBusEtcd",
            dependencies: ["StateBusRuntime", "CCurl", .product(name: "Logging", package: "swift-log")], swiftSettings: strict
        ),
        // High availability: hosts of a group, one leading through etcd's election, the others
        // standing by; persisted state in etcd behind a fencing check.
        .target(
            name: "StateBusHA",
            dependencies: [
                "StateBus", "StateBusEtcd", "StateBusRuntime", "StateBusWire", "ZeroMQ", .product(name: "Logging", package: "swift-log"),
                .product(name: "CoreMetrics", package: "swift-metrics")
            ], swiftSettings: strict
        ),
        // A small HTTP/1.1 server on libmicrohttpd, a C library every Debian machine has, so
        // that neither the metrics endpoint nor the inspector compiles a web framework.
        .target(name: "StateBusHTTP", dependencies: ["StateBusRuntime", "CMicroHTTPD"], swiftSettings: strict),
        // The Prometheus exporter: bootstraps swift-prometheus as the swift-metrics backend and
        // serves `/metrics` over HTTP (StateBusHTTP). Its own module, so that a view process
        // that records metrics does not carry an HTTP server unless it asks for one.
        .target(
            name: "StateBusPrometheus",
            dependencies: [
                "StateBusRuntime", "StateBusHTTP",
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle")
            ], swiftSettings: strict
        ),
        // The live inspector: a web page, served by StateBusHTTP, that is itself a view of a
        // host's objects (values live as server-sent events, edits posted with the host's
        // verdict, the connected views, small charts). Its own module, out of the StateBus
        // library.
        .target(
            name: "StateBusInspector",
            dependencies: [
                "StateBus", "StateBusWire", "StateBusRuntime", "StateBusHTTP", "ZeroMQ",
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle")
            ], swiftSettings: strict
        ),
        // The terminal view runtime: `View`, `Text`, `VStack`, `State`, `ViewRenderer`. Its own
        // module so that those SwiftUI-like names never collide with SwiftUI's in a program
        // that imports StateBus only.
        .target(name: "StateBusTerminalUI", dependencies: ["StateBus"], swiftSettings: strict),
        // Process supervision, shared by the CLI (demo, launch) and the testing product.
        // Knows processes, not the protocol: a host's readiness check is injected.
        .target(
            name: "StateBusLaunch",
            dependencies: [
                "StateBusRuntime", "CChildSpawn", .product(name: "Yams", package: "Yams")
            ], swiftSettings: strict),
        // Helpers for integration tests: child processes, waits with deadlines.
        .target(
            name: "StateBusTesting",
            dependencies: [
                "StateBus", "StateBusLaunch", "StateBusRuntime", "StateBusWire", "StateBusEtcd", .product(name: "Logging", package: "swift-log")
            ],
            swiftSettings: strict),
        // The demo's models, views and nodes (the SwiftUI examples of shared/seeds).
        .target(
            name: "StateBusDemo",
            dependencies: ["StateBus", "StateBusTerminalUI", .product(name: "IdentifiedCollections", package: "swift-identified-collections")],
            swiftSettings: strict),
        // The command line's plumbing, apart from its commands: signal handling, the
        // connection options, waits, services, recordings.
        .target(
            name: "StateBusCommandLine",
            dependencies: [
                "StateBus", "StateBusRuntime", "StateBusWire",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "SwiftProtobuf", package: "swift-protobuf"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle")
            ], swiftSettings: strict
        ),
        // The command-line tool: every command, the inspector's web page too (on
        // libmicrohttpd, so that building it compiles no web framework).
        .executableTarget(
            name: "statebus",
            dependencies: [
                "StateBus", "StateBusLaunch", "StateBusDemo", "StateBusRuntime", "StateBusWire", "ZeroMQ", "StateBusPrometheus",
                "StateBusCommandLine", "StateBusHA", "StateBusEtcd", "StateBusInspector",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Histogram", package: "hdrhistogram-swift"),
                .product(name: "IdentifiedCollections", package: "swift-identified-collections"),
                .product(name: "SwiftProtobuf", package: "swift-protobuf"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle")
            ], swiftSettings: strict
        ),
        // A view process as small as an application's (the StateBus library and nothing else),
        // for `statebus bench`'s late-join and memory figures: the `statebus` tool carries the
        // launcher, the bench, etcd's client, an HTTP server and more, whose code alone makes
        // its resident set larger.
        .executableTarget(
            name: "statebus-bench-view", dependencies: ["StateBus", "StateBusRuntime"], path: "Sources/StateBusBenchView", swiftSettings: strict,
            linkerSettings: leanExecutable),
        // The fuzz harness of a host's request handling and a replica's publication handling
        // (issue 12, item 9). Not a product: `deploy/fuzz.sh` builds and runs it.
        .executableTarget(
            name: "statebus-fuzz",
            dependencies: [
                "StateBus", "StateBusRuntime", "StateBusWire", "ZeroMQ",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "SwiftProtobuf", package: "swift-protobuf")
            ], path: "Sources/StateBusFuzz", swiftSettings: strict
        ),
        .testTarget(
            name: "ZeroMQTests",
            dependencies: ["ZeroMQ", "StateBusRuntime", .product(name: "PropertyBased", package: "swift-property-based")], swiftSettings: strict
        ),
        .testTarget(
            name: "StateBusMacrosTests",
            dependencies: [
                "StateBusMacroExpansion",
                .product(name: "SwiftSyntaxMacroExpansion", package: "swift-syntax"),
                .product(name: "SwiftSyntaxMacros", package: "swift-syntax"),
                .product(name: "SwiftSyntax", package: "swift-syntax"),
                .product(name: "SwiftDiagnostics", package: "swift-syntax"),
                .product(name: "SwiftParser", package: "swift-syntax")
            ], swiftSettings: strict
        ),
        .testTarget(
            name: "StateBusWireTests",
            dependencies: [
                "StateBusWire",
                .product(name: "PropertyBased", package: "swift-property-based"),
                .product(name: "SwiftProtobuf", package: "swift-protobuf")
            ], swiftSettings: strict
        ),
        .testTarget(
            name: "StateBusTests",
            dependencies: [
                "StateBus", "StateBusTerminalUI", "ZeroMQ", "StateBusWire", "StateBusRuntime", "StateBusHTTP",
                .product(name: "SwiftProtobuf", package: "swift-protobuf"), .product(name: "Logging", package: "swift-log"),
                .product(name: "IdentifiedCollections", package: "swift-identified-collections"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "PropertyBased", package: "swift-property-based")
            ], swiftSettings: strict
        ),
        // A test helper, not a product: a raw view that floods a host with writes until it
        // is killed, with ZMTP heartbeats on request (the libzmq abort regression test).
        .executableTarget(
            name: "statebus-flood",
            dependencies: ["ZeroMQ", "StateBusWire", .product(name: "SwiftProtobuf", package: "swift-protobuf")],
            path: "Tests/Helpers/statebus-flood", swiftSettings: strict
        ),
        // A test helper, not a product: a process that starts a host and a view through
        // StateBusTesting, as a test does, for the test that kills it with SIGKILL.
        .executableTarget(
            name: "statebus-test-parent", dependencies: ["StateBusTesting"], path: "Tests/Helpers/statebus-test-parent", swiftSettings: strict),
        .testTarget(
            name: "IntegrationTests",
            dependencies: [
                "StateBus", "StateBusLaunch", "StateBusTesting", "StateBusDemo", "ZeroMQ", "statebus", "statebus-flood",
                "statebus-test-parent",
                "StateBusWire", "StateBusEtcd", .product(name: "Logging", package: "swift-log"),
                "StateBusRuntime", .product(name: "SwiftProtobuf", package: "swift-protobuf")
            ], swiftSettings: strict
        ),
        // The etcd client and election against real etcd members the tests start.
        .testTarget(
            name: "StateBusEtcdTests",
            dependencies: [
                "StateBusEtcd", "StateBusLaunch", "StateBusRuntime", .product(name: "Logging", package: "swift-log")
            ], swiftSettings: strict
        ),
        // The testing product's own tests: they run the built `statebus` for process nodes.
        .testTarget(
            name: "StateBusTestingTests", dependencies: ["StateBusTesting", "StateBus", "StateBusRuntime", "statebus"], swiftSettings: strict)
    ],
    swiftLanguageModes: [.v6]
)
