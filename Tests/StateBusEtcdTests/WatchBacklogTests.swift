import Testing

@testable import StateBusEtcd

/// The bound between a watch's reader and its consumer, without etcd.
@Suite("Watch backlog", .timeLimit(.minutes(1)))
struct WatchBacklogTests {
    static func event(_ key: String, revision: Int64, value: Int = 100) -> EtcdWatchEvent {
        EtcdWatchEvent(
            kind: .put,
            keyValue: EtcdKeyValue(
                key: Array(key.utf8), value: Array(repeating: 0, count: value), createRevision: revision, modRevision: revision, version: 1,
                lease: 0))
    }

    @Test("an event larger than the bound still goes through an empty backlog")
    func largeEventAlone() async throws {
        let backlog = WatchBacklog(limit: 10)
        #expect(backlog.add(Self.event("/big", revision: 1, value: 1000)))
        #expect(!backlog.add(Self.event("/big", revision: 2, value: 1)))
        #expect(try await backlog.next()?.keyValue.modRevision == 1)
    }

    @Test("events past the bound are refused; the consumer gets the kept ones in order, then the error")
    func boundThenError() async throws {
        let one = Self.event("/a", revision: 1)
        let backlog = WatchBacklog(limit: 3 * WatchBacklog.size(of: one))
        for revision in Int64(1)...3 { #expect(backlog.add(Self.event("/a", revision: revision))) }
        #expect(!backlog.add(Self.event("/a", revision: 4)))
        #expect(backlog.waitingBytes == 3 * WatchBacklog.size(of: one))
        backlog.finish(throwing: EtcdError(.fellBehind, endpoints: [], message: "behind"))
        var revisions: [Int64] = []
        await #expect(throws: EtcdError.self) {
            while let event = try await backlog.next() { revisions.append(event.keyValue.modRevision) }
        }
        #expect(revisions == [1, 2, 3])
        #expect(try await backlog.next() == nil, "the error comes once; the stream then ends")
        #expect(backlog.waitingBytes == 0)
        #expect(!backlog.add(Self.event("/a", revision: 5)), "a watch that ended takes no more events")
    }

    @Test("a consumer waiting for the next event gets it, or the end, whichever comes")
    func waitingConsumer() async throws {
        let backlog = WatchBacklog(limit: 1 << 20)
        let first = Task { try await backlog.next() }
        await backlog.waitUntilConsumerWaits()
        #expect(backlog.add(Self.event("/b", revision: 7)))
        #expect(try await first.value?.keyValue.modRevision == 7)
        let second = Task { try await backlog.next() }
        await backlog.waitUntilConsumerWaits()
        backlog.finish(throwing: nil)
        #expect(try await second.value == nil)
        #expect(backlog.waitingBytes == 0)
    }

    @Test("cancelling the consuming task ends its iteration without an error")
    func cancellation() async throws {
        let backlog = WatchBacklog(limit: 1 << 20)
        let consumer = Task { try await backlog.next() }
        await backlog.waitUntilConsumerWaits()
        consumer.cancel()
        #expect(try await consumer.value == nil)
        #expect(!backlog.add(Self.event("/c", revision: 1)), "a cancelled consumer takes no more events")
    }
}
