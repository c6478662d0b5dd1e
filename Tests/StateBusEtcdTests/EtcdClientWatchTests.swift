import Synchronization
import Testing

@testable import StateBusEtcd

@Suite("EtcdClient watch", .timeLimit(.minutes(2)))
struct EtcdClientWatchTests {
    @Test("a watch sees a put and a delete, in order, from its start revision")
    func putAndDelete() async throws {
        try await withEtcdClient { _, client in
            let start = try await client.get(key: "/w/k").revision + 1
            let events = client.watch(key: bytes("/w/k"), startRevision: start)
            let put = try await client.put(key: "/w/k", value: "v1")
            try await client.put(key: "/w/other", value: "ignored")
            try await client.delete(key: "/w/k")
            var seen: [EtcdWatchEvent] = []
            for try await event in events {
                seen.append(event)
                if seen.count == 2 { break }
            }
            #expect(seen.map(\.kind) == [.put, .delete])
            #expect(seen.first?.keyValue.valueString == "v1")
            #expect(seen.first?.keyValue.createRevision == put)
            #expect(seen.last?.keyValue.keyString == "/w/k")
            #expect(seen.last?.keyValue.modRevision == put + 2)
        }
    }

    @Test("a watch from an earlier revision replays what happened since")
    func replay() async throws {
        try await withEtcdClient { _, client in
            let first = try await client.put(key: "/w/p/a", value: "1")
            try await client.put(key: "/w/p/b", value: "2")
            var keys: [String] = []
            for try await event in client.watch(prefix: bytes("/w/p/"), startRevision: first) {
                keys.append(event.keyValue.keyString)
                if keys.count == 2 { break }
            }
            #expect(keys == ["/w/p/a", "/w/p/b"])
        }
    }

    @Test("a watch from a compacted revision ends with etcd's cancellation")
    func compactedStart() async throws {
        try await withEtcdClient { server, client in
            let first = try await client.put(key: "/w/k", value: "1")
            let latest = try await client.put(key: "/w/k", value: "2")
            let response = try await etcdHTTP(server.endpoint + "/v3/kv/compaction", post: "{\"revision\":\"\(latest)\",\"physical\":true}")
            #expect(response.status == 200)
            do {
                for try await event in client.watch(key: bytes("/w/k"), startRevision: first) {
                    Issue.record("a compacted revision was replayed: \(event)")
                }
                Issue.record("the watch ended without an error")
            } catch let error as EtcdError {
                guard case .rejected(let code, let message) = error.kind else {
                    Issue.record("expected rejected, got \(error)")
                    return
                }
                #expect(code == 11)
                #expect(message.contains("compacted"))
            }
        }
    }

    @Test("a watch ends with an error when etcd goes away")
    func endsWhenEtcdDies() async throws {
        try await EtcdTestServer.withEtcd(logger: testLogger) { server in
            let client = try EtcdClient(endpoints: [server.endpoint], logger: testLogger)
            let start = try await client.get(key: "/w/k").revision + 1
            let events = client.watch(key: bytes("/w/k"), startRevision: start)
            try await client.put(key: "/w/k", value: "v")
            var iterator = events.makeAsyncIterator()
            #expect(try await iterator.next()?.keyValue.valueString == "v")
            await server.kill()
            do {
                let event = try await iterator.next()
                Issue.record("the watch went on after etcd died: \(String(describing: event))")
            } catch let error as EtcdError {
                #expect(error.kind == .unreachable)
                #expect(error.endpoints == [server.endpoint])
            }
            await client.shutdown()
        }
    }

    @Test("shutting the client down ends its open watch, and its later calls, as cancelled")
    func shutdownEndsWatches() async throws {
        try await EtcdTestServer.withEtcd(logger: testLogger) { server in
            let client = try EtcdClient(endpoints: [server.endpoint], logger: testLogger)
            let start = try await client.get(key: "/w/s").revision + 1
            var iterator = client.watch(key: bytes("/w/s"), startRevision: start).makeAsyncIterator()
            try await client.put(key: "/w/s", value: "v")
            #expect(try await iterator.next()?.keyValue.valueString == "v")
            await client.shutdown()
            do {
                let event = try await iterator.next()
                Issue.record("the watch went on after the client was shut down: \(String(describing: event))")
            } catch let error as EtcdError {
                #expect(error.kind == .cancelled)
                #expect(error.message.contains("shut down"))
            }
            do {
                let value = try await client.get(key: "/w/s")
                Issue.record("a call after shutdown was answered: \(value)")
            } catch let error as EtcdError {
                #expect(error.kind == .cancelled)
            }
        }
    }

    @Test("cancelling the task that consumes a watch closes it in etcd")
    func cancellingClosesTheWatch() async throws {
        try await withEtcdClient { server, client in
            func openWatchStreams() async throws -> Int {
                let text = String(decoding: try await etcdHTTP(server.endpoint + "/metrics").body, as: UTF8.self)
                let line = text.split(separator: "\n").first { $0.hasPrefix("etcd_debugging_mvcc_watch_stream_total ") }
                return line.flatMap { Double($0.split(separator: " ").last ?? "") }.map { Int($0) } ?? -1
            }
            #expect(try await openWatchStreams() == 0)
            let received = Atomic<Int>(0)
            let start = try await client.get(key: "/w/c").revision + 1
            let consumer = Task {
                for try await _ in client.watch(key: bytes("/w/c"), startRevision: start) {
                    received.add(1, ordering: .relaxed)
                }
            }
            try await waitUntil("the watch to open in etcd") { try await openWatchStreams() == 1 }
            try await client.put(key: "/w/c", value: "1")
            try await waitUntil("the event to arrive") { received.load(ordering: .relaxed) == 1 }
            consumer.cancel()
            try await waitUntil("the watch to close in etcd") { try await openWatchStreams() == 0 }
        }
    }

    @Test(
        "a consumer that takes nothing ends its watch at the backlog's bound: the events kept come first, then fellBehind, and watching again from there misses nothing"
    )
    func backlogBound() async throws {
        let limit = 8 * 1024
        try await withEtcdClient(maximumWatchBacklogBytes: limit) { _, client in
            let value = String(repeating: "v", count: 1024)
            let names = (0..<40).map { String(format: "/w/b/%02d", $0) }
            let first = try await client.put(key: names[0], value: value)
            for name in names.dropFirst() { try await client.put(key: name, value: value) }

            // Nobody takes the events: the reader keeps what fits, then ends the watch.
            let (events, backlog) = client.watchWithBacklog(prefix: bytes("/w/b/"), startRevision: first)
            await backlog.waitUntilEnded()
            #expect(backlog.waitingBytes > limit / 2, "the backlog filled up before the watch ended: \(backlog.waitingBytes) bytes")
            var seen: [String] = []
            var lastRevision = first - 1
            do {
                for try await event in events {
                    seen.append(event.keyValue.keyString)
                    lastRevision = event.keyValue.modRevision
                }
                Issue.record("the watch ended without an error after \(seen.count) events")
            } catch let error as EtcdError {
                #expect(error.kind == .fellBehind, "\(error)")
                #expect(error.message.contains("watch backlog of \(limit) bytes"), "\(error)")
            }
            #expect(!seen.isEmpty && seen.count < names.count, "\(seen.count) events kept")

            // Watching again from the revision after the last event taken gives the rest (a
            // replay larger than the backlog may end the same way again: watch on from there).
            var rounds = 0
            while seen.count < names.count, rounds < names.count {
                rounds += 1
                do {
                    for try await event in client.watch(prefix: bytes("/w/b/"), startRevision: lastRevision + 1) {
                        seen.append(event.keyValue.keyString)
                        lastRevision = event.keyValue.modRevision
                        if seen.count == names.count { break }
                    }
                } catch let error as EtcdError where error.kind == .fellBehind {
                    continue
                }
            }
            #expect(seen == names)
        }
    }

    @Test("a watch backlog that is not positive is refused when the client is made")
    func backlogMustBePositive() throws {
        #expect(throws: EtcdError.self) { try EtcdClient(endpoints: ["http://127.0.0.1:2379"], logger: testLogger, maximumWatchBacklogBytes: 0) }
    }
}
