// statebus-flood: a raw view that floods a host with well-formed writes until it is killed.
//
// A test helper (not a product): the libzmq abort regression test starts it as a child
// process and kills it with SIGKILL mid-flood. It is a process of its own, not a task of the
// test, because only a process that dies without closing its sockets leaves the host's stream
// engine with the dead peer that libzmq 4.3.4 trips over; and it is not a hidden `statebus`
// subcommand, because it does what StateBus never does: with `--zmtp-heartbeats` it turns on
// ZMTP heartbeats on its own DEALER, as a third-party client may.
//
//   statebus-flood CONTROL OBJECT PROPERTY [--zmtp-heartbeats] [--unread]
//
// It prints `flooding` once the host has accepted its first write (the test's readiness
// line), then keeps up to 1,000 writes in flight for ever.
//
// With --unread it is the hostile client of libzmq's stream-engine abort: ZMTP heartbeats
// every 10 ms with a 100 ms timeout, a hello, then writes as fast as the socket takes them,
// never reading a reply. It prints `flooding` once the welcome is in.
import Foundation
import StateBusWire
import SwiftProtobuf
import ZeroMQ

let arguments = CommandLine.arguments.dropFirst()
let positional = arguments.filter { !$0.hasPrefix("--") }
guard positional.count == 3 else {
    FileHandle.standardError.write(Data("usage: statebus-flood CONTROL OBJECT PROPERTY [--zmtp-heartbeats]\n".utf8))
    exit(2)
}
let (control, object, property) = (positional[positional.startIndex], positional[positional.startIndex + 1], positional[positional.startIndex + 2])
let unread = arguments.contains("--unread")
let heartbeats = unread || arguments.contains("--zmtp-heartbeats")
let viewID = "flood-\(UUID().uuidString)"

/// One well-formed write of `value` to the property, as PROTOCOL.md section 8 describes.
func writeRequest(id: UInt64, value: Int64) throws -> [UInt8] {
    var change = Statebus_V1_Change()
    change.property = property
    change.value = Value.int(value).wire
    var write = Statebus_V1_WriteRequest()
    write.object = object
    write.writeID = id
    write.viewID = viewID
    write.changes = [change]
    var request = Statebus_V1_Request()
    request.protocolVersion = StateBusProtocol.version
    request.requestID = id
    request.body = .write(write)
    return try request.serializedBytes()
}

do {
    let context = try Context()
    let dealer = try Socket(context: context, type: .dealer)
    try dealer.set(.routingID, Array(viewID.utf8))
    if heartbeats {
        // Short, so that many PINGs are on the wire whenever the process is killed.
        try dealer.set(.heartbeatInterval, unread ? 10 : 50)
        try dealer.set(.heartbeatTimeout, unread ? 100 : 200)
    }
    try dealer.connect(control)
    // A write naming a view id is applied only from the connection its hello bound; the
    // welcome comes back first and is counted below like an answer.
    var hello = Statebus_V1_Hello()
    hello.viewID = viewID
    var helloRequest = Statebus_V1_Request()
    helloRequest.protocolVersion = StateBusProtocol.version
    helloRequest.body = .hello(hello)
    guard try dealer.send(try helloRequest.serializedBytes() as [UInt8], wait: false) else {
        FileHandle.standardError.write(Data("statebus-flood: the control socket would not take the hello\n".utf8))
        exit(1)
    }
    let poller = Poller()
    _ = poller.add(dealer, events: .readable)
    if unread {
        // The welcome, then never a read again.
        guard try !poller.poll(timeout: .seconds(60)).isEmpty, try dealer.tryReceive() != nil else {
            FileHandle.standardError.write(Data("statebus-flood: no welcome within 60 s\n".utf8))
            exit(1)
        }
        FileHandle.standardOutput.write(Data("flooding (ZMTP heartbeats on, replies unread)\n".utf8))
        let writable = Poller()
        _ = writable.add(dealer, events: .writable)
        var id: UInt64 = 0
        while true {
            id += 1
            while try !dealer.send(try writeRequest(id: id, value: Int64(id)), wait: false) {
                _ = try writable.poll(timeout: .milliseconds(50))
            }
        }
    }
    var sent = 0
    var answered = -1  // the welcome is not an answer to a write
    var announced = false
    while true {
        // Keep the pipe full: up to 1,000 writes in flight, without blocking.
        while sent - answered < 1_000 {
            guard try dealer.send(try writeRequest(id: UInt64(sent + 1), value: Int64(sent + 1)), wait: false) else { break }
            sent += 1
        }
        _ = try poller.poll(timeout: .milliseconds(50))
        while let message = try dealer.tryReceive() {
            answered += 1
            guard !announced, let reply = try? Statebus_V1_Reply(serializedBytes: message.bytes),
                case .writeReply(let answer) = reply.body, answer.accepted
            else { continue }
            announced = true
            // Unbuffered: the test waits for this line while the flood goes on.
            FileHandle.standardOutput.write(Data("flooding (ZMTP heartbeats \(heartbeats ? "on" : "off"))\n".utf8))
        }
    }
} catch {
    FileHandle.standardError.write(Data("statebus-flood: \(error)\n".utf8))
    exit(1)
}
