// statebus-bench-view: the joining view of `statebus bench`'s late-join and memory figures.
//
//   statebus-bench-view join --control ENDPOINT --properties N
//
// Joins the host's object "Bench" with a Replica, then prints one line for the bench:
// `bench result ok=… count=… elapsed=NANOSECONDS baseline=BYTES peak=BYTES resident=BYTES shared=true|false|unknown`
// (the resident set before joining, the peak and the current one after; whether it loaded the
// Swift runtime as shared libraries or has it linked in, `--static-swift-stdlib`). A view links the
// StateBus library and its own code, nothing else; so does this program, so its memory is a
// view's. `statebus bench` starts it and ends it; a person never needs to.

import StateBus
import StateBusRuntime

/// What went wrong, printed as the bench's `failed` line.
struct Failure: Error, CustomStringConvertible {
    let description: String
}

func option(_ name: String, in arguments: [String]) throws -> String {
    guard let index = arguments.firstIndex(of: name), index + 1 < arguments.count else {
        throw Failure(description: "missing \(name); usage: statebus-bench-view join --control ENDPOINT --properties N")
    }
    return arguments[index + 1]
}

func join(_ arguments: [String]) async throws {
    let control = try option("--control", in: arguments)
    guard let properties = Int(try option("--properties", in: arguments)), properties > 0 else {
        throw Failure(description: "--properties needs a positive number")
    }
    let before = ProcessMemory.read()
    let started = MonotonicClock.now()
    let replica = try Replica(object: "Bench", controlEndpoint: control, configuration: ReplicaConfiguration(nodeName: "bench-join"))
    try await replica.waitUntilLive(timeout: .seconds(120))
    let joined = MonotonicClock.now()
    defer { replica.close() }
    // Read before the check below, whose list of names is the bench's own cost.
    let after = ProcessMemory.read()
    // Every property is there: a replica goes live only with a value for each property of
    // the schema (a snapshot short of one is asked for again).
    let names = replica.propertyNames
    let held = names.count == properties
    print(
        "bench result ok=\(held) count=\(names.count) elapsed=\(joined - started) baseline=\(before?.residentBytes ?? -1) peak=\(after?.peakBytes ?? -1) resident=\(after?.residentBytes ?? -1) shared=\(ProcessMemory.loadsSharedSwiftRuntime.map(String.init) ?? "unknown")"
    )
}

let arguments = Array(CommandLine.arguments.dropFirst())
do {
    guard arguments.first == "join" else { throw Failure(description: "usage: statebus-bench-view join --control ENDPOINT --properties N") }
    try await join(arguments)
} catch {
    print("bench failed reason=\("\(error)".split(separator: " ").joined(separator: "_"))")
}
