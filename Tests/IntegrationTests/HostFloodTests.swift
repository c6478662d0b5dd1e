import Foundation
import StateBus
import StateBusTesting
import StateBusWire
import SwiftProtobuf
import Testing
import ZeroMQ

/// Issue 12, item 8: a real `statebus host` flooded by hostile peers stays up, answers,
/// keeps its state, and a view connected before the flood sees no gap.
@Suite("A host survives request floods, oversized frames and 1,000 connections", .serialized)
struct HostFloodTests {
    @Test("100,000 random and mutated requests and subscription frames change nothing")
    func randomAndMutatedRequests() async throws {
        let host = try await FloodHost()
        defer { #expect(host.stop(), "the host died") }
        let rssBefore = host.residentMiB
        var random = SystemRandomNumberGenerator()
        let dealers = try (0..<4).map { _ in try Socket(context: host.context, type: .dealer) }
        let subscriber = try Socket(context: host.context, type: .xsub)
        for socket in dealers + [subscriber] { try socket.set(.linger, 0) }
        for dealer in dealers { try dealer.connect(host.control) }
        try subscriber.connect(host.updates)
        let seeds = try FloodInputs.seeds()
        var counts = (requests: 0, subscriptions: 0, replies: 0, blocked: 0, probes: 0)
        let poller = Poller()
        for dealer in dealers { _ = poller.add(dealer, events: .readable) }
        func drain() throws {
            for dealer in dealers { while try dealer.tryReceive() != nil { counts.replies += 1 } }
            while try subscriber.tryReceive() != nil {}
        }
        for index in 0..<100_000 {
            let (toUpdates, frames) = FloodInputs.next(seeds: seeds, using: &random)
            let socket = toUpdates ? subscriber : dealers[index % dealers.count]
            // Without waiting for replies, but bounded: a full queue waits for replies to
            // be read for a moment, then the input is counted as blocked and skipped.
            if try !socket.send(multipart: frames, wait: false) {
                _ = try poller.poll(timeout: .milliseconds(100))
                try drain()
                if try !socket.send(multipart: frames, wait: false) { counts.blocked += 1 }
            }
            if toUpdates { counts.subscriptions += 1 } else { counts.requests += 1 }
            try drain()
            if index % 20_000 == 19_999 {
                #expect(try host.answersPing(), "no pong during the flood, after \(index + 1) inputs")
                counts.probes += 1
            }
            // Lets other tests' async code run on this thread now and then: the flood takes
            // most of a minute, and holding one of two such threads that long stalled the
            // others (a 30-second call deadline passed in one full run).
            if index % 500 == 499 { await Task.yield() }
        }
        try drain()
        #expect(try host.answersPing(timeout: .seconds(10)), "no pong after the flood")
        let detail = try await host.expectUnchanged()
        print(
            "flood: \(counts.requests) requests, \(counts.subscriptions) subscription frames, \(counts.replies) replies read, \(counts.blocked) blocked, \(counts.probes) pings answered during; host RSS \(rssBefore) -> \(host.residentMiB) MiB; \(detail)"
        )
        for socket in dealers + [subscriber] { socket.close() }
    }

    @Test("control frames at and above maxMessageBytes and libzmq's MAXMSGSIZE are answered or dropped")
    func controlFramesAtLimits() async throws {
        let host = try await FloodHost()
        defer { #expect(host.stop(), "the host died") }
        let limit = 4 << 20  // the host's default maxMessageBytes
        let rssBefore = host.residentMiB
        var outcomes: [String] = []
        // size -> what the host must answer: refused as read-only, too large, or nothing
        // (libzmq drops a frame above MAXMSGSIZE = 4 × limit + 4096 and the connection).
        let cases: [(Int, Statebus_V1_ErrorCode?)] = [
            (limit - 1, .readOnly), (limit, .readOnly), (limit + 1, .tooLarge),
            (4 * limit + 4096, .tooLarge), (4 * limit + 4097, nil), (64 << 20, nil)
        ]
        for (size, expected) in cases {
            let client = try Socket(context: host.context, type: .dealer)
            defer { client.close() }
            try client.set(.linger, 0)
            try client.connect(host.control)
            let frame = try FloodHost.write(size: size)
            _ = try client.send(frame)
            let reply = try Self.reply(on: client, timeout: expected == nil ? .seconds(2) : .seconds(20))
            let code: Statebus_V1_ErrorCode? = reply.map { reply in
                if case .error(let error) = reply.body { return error.code }
                return reply.writeReply.rejection.code
            }
            #expect(code == expected, "a \(frame.count)-byte request: expected \(String(describing: expected)), got \(String(describing: code))")
            #expect(try host.answersPing(), "no pong after a \(frame.count)-byte request")
            outcomes.append("\(frame.count)=\(code.map { "\($0)" } ?? "dropped")")
        }
        let detail = try await host.expectUnchanged()
        print("limits: \(outcomes.joined(separator: " ")); host RSS \(rssBefore) -> \(host.residentMiB) MiB; \(detail)")
    }

    @Test("200 subscriptions of 64 KiB and frames past MAXMSGSIZE on the updates socket cost the host no lasting memory")
    func updatesFramesAtLimits() async throws {
        let host = try await FloodHost()
        defer { #expect(host.stop(), "the host died") }
        let limit = 4 << 20
        let rssBefore = host.residentMiB
        // 0x01 + topic subscribes, to topics nobody publishes (the host must not keep what it
        // cannot use); 0x02 + bytes is a message to the publisher, which the host reads and
        // drops. Why subscriptions stay at 64 KiB: `FloodHost.sendOnUpdates`.
        let subscriptions = (0..<200).map { index in [UInt8(1)] + Array("t\(index)/".utf8) + [UInt8](repeating: 0x41, count: 64 << 10) }
        try host.sendOnUpdates(subscriptions)
        #expect(try host.answersPing(timeout: .seconds(10)), "no pong after 200 subscriptions of 64 KiB")
        let rssSubscribed = host.residentMiB
        let large = [limit, 4 * limit + 4096, 4 * limit + 4097, 32 << 20].map { [UInt8(2)] + [UInt8](repeating: 0x41, count: $0 - 1) }
        try host.sendOnUpdates(large)
        #expect(try host.answersPing(timeout: .seconds(10)), "no pong after frames of up to 32 MiB on the updates socket")
        let detail = try await host.expectUnchanged()
        let rssAfter = host.residentMiB  // after a round trip of `statebus get`: the frames are read by now
        #expect(
            rssAfter - rssBefore < 64,
            "host RSS grew from \(rssBefore) to \(rssAfter) MiB (\(rssSubscribed) MiB after the subscriptions), and stayed after the sender left")
        print(
            "updates socket: 200 subscriptions of 64 KiB, then frames of 4 MiB to 32 MiB; host RSS \(rssBefore) -> \(rssSubscribed) (subscribed) -> \(rssAfter) MiB (sender gone); \(detail)"
        )
    }

    @Test("1,000 connections at once: each gets its welcome; the host and its view carry on")
    func thousandConnections() async throws {
        // Two sockets per connection on this machine (ours and the host's accepted one),
        // plus libzmq's own: raise the descriptor limit for this process and the host it
        // starts. libzmq also caps sockets per context (1,023): two contexts of 500.
        Self.raiseDescriptorLimit(to: 8192)
        let host = try await FloodHost()
        defer { #expect(host.stop(), "the host died") }
        let rssBefore = host.residentMiB
        let contexts = try [Context(), Context()]
        var sockets: [Socket] = []
        defer { for socket in sockets { socket.close() } }
        let hello = { (index: Int) throws -> [UInt8] in
            var body = Statebus_V1_Hello()
            body.viewID = "flood-\(index)"
            return try FloodHost.request(id: UInt64(index + 1), .hello(body)).serializedBytes()
        }
        for index in 0..<1000 {
            let socket = try Socket(context: contexts[index % 2], type: .dealer)
            try socket.set(.linger, 0)
            try socket.connect(host.control)
            _ = try socket.send(try hello(index))
            sockets.append(socket)
        }
        var welcomed = Set<Int>()
        let deadline = ContinuousClock.now + .seconds(30)
        while welcomed.count < sockets.count, ContinuousClock.now < deadline {
            let poller = Poller()
            let waiting = sockets.indices.filter { !welcomed.contains($0) }
            for index in waiting { _ = poller.add(sockets[index], events: .readable) }
            for slot in try poller.poll(timeout: .milliseconds(200)) {
                let index = waiting[slot]
                if let message = try sockets[index].tryReceive(), let reply = try? Statebus_V1_Reply(serializedBytes: message.bytes),
                    case .welcome = reply.body
                {
                    welcomed.insert(index)
                }
            }
        }
        let rssDuring = host.residentMiB
        #expect(welcomed.count == 1000, "\(welcomed.count) of 1000 connections were welcomed within 30 s")
        #expect(try host.answersPing(), "no pong with 1,000 connections open")
        for socket in sockets { socket.close() }
        sockets.removeAll()
        #expect(try host.answersPing(), "no pong after 1,000 connections closed")
        let detail = try await host.expectUnchanged()
        print(
            "connections: \(welcomed.count) of 1000 welcomed; host RSS \(rssBefore) -> \(rssDuring) (1,000 open) -> \(host.residentMiB) MiB (closed); \(detail)"
        )
    }

    /// The next reply on `socket`, or `nil` when none came within `timeout`.
    static func reply(on socket: Socket, timeout: Duration) throws -> Statebus_V1_Reply? {
        let poller = Poller()
        _ = poller.add(socket, events: .readable)
        guard try !poller.poll(timeout: timeout).isEmpty, let message = try socket.tryReceive() else { return nil }
        return try Statebus_V1_Reply(serializedBytes: message.bytes)
    }

    static func raiseDescriptorLimit(to wanted: rlim_t) {
        var limit = rlimit()
        guard getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit) == 0, limit.rlim_cur < wanted else { return }
        limit.rlim_cur = min(wanted, limit.rlim_max)
        _ = setrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit)
    }
}
