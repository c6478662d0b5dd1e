import Foundation
import Testing

@testable import StateBusEtcd

@Suite("EtcdClient endpoints and errors", .timeLimit(.minutes(2)))
struct EtcdClientErrorTests {
    @Test(
        "a bad endpoint is refused with a message naming it",
        arguments: ["ftp://127.0.0.1:2379", "http://127.0.0.1", "127.0.0.1:2379", "http://127.0.0.1:2379/v3", "http://:2379", "http://h:99999", ""])
    func badEndpoint(_ endpoint: String) throws {
        do {
            _ = try EtcdClient(endpoints: [endpoint], logger: testLogger)
            Issue.record("\(endpoint) was accepted")
        } catch {
            #expect(error.kind == .badEndpoint)
            #expect(error.description.contains("\"\(endpoint)\""))
            #expect(error.description.contains("http://HOST:PORT"))
        }
    }

    @Test("no endpoint at all is refused")
    func noEndpoint() {
        #expect(throws: EtcdError.self) { try EtcdClient(endpoints: [], logger: testLogger) }
        #expect(throws: EtcdError.self) { try EtcdEndpoints.parse(" ") }
    }

    @Test("a comma-separated list parses into validated endpoints, without duplicates")
    func parseList() throws {
        #expect(
            try EtcdEndpoints.parse("http://10.0.0.1:2379, https://etcd.example:2379/,http://10.0.0.1:2379")
                == ["http://10.0.0.1:2379", "https://etcd.example:2379"])
        #expect(try EtcdEndpoints.parse("http://[::1]:2379") == ["http://[::1]:2379"])
        #expect(throws: EtcdError.self) { try EtcdEndpoints.parse("http://a:1,,http://b:2") }
    }

    @Test("an etcd that is not there gives an unreachable error naming the endpoint, not a timeout")
    func unreachable() async throws {
        let endpoint = "http://127.0.0.1:\(try pickFreeLoopbackPorts(1)[0])"
        let client = try EtcdClient(endpoints: [endpoint], requestTimeout: .seconds(1), logger: testLogger)
        do {
            _ = try await client.put(key: "k", value: "v")
            Issue.record("a put to nothing succeeded")
        } catch {
            #expect(error.kind == .unreachable)
            #expect(error.endpoints == [endpoint])
            #expect(error.description.contains(endpoint))
            #expect(error.description.contains("Check that etcd is running"))
        }
        // Refused at once, not waited out: the error is `unreachable`, not `timeout`.
        await client.shutdown()
    }

    @Test("a paused etcd gives a timeout error within the request timeout")
    func pausedTimesOut() async throws {
        try await withEtcdClient(requestTimeout: .milliseconds(500)) { server, client in
            try await client.put(key: "k", value: "v")
            server.pause()
            defer { server.resume() }
            let started = ContinuousClock.now
            do {
                _ = try await client.get(key: "k")
                Issue.record("a read from a paused etcd succeeded")
            } catch let error as EtcdError {
                #expect(error.kind == .timeout)
                #expect(error.endpoints == [server.endpoint])
            }
            let took = ContinuousClock.now - started
            #expect(took >= .milliseconds(500), "took \(took)")
        }
    }

    @Test("a call moves on to the next endpoint, and fails naming every endpoint tried")
    func failover() async throws {
        try await EtcdTestServer.withEtcd(logger: testLogger) { server in
            let deadPorts = try pickFreeLoopbackPorts(2)
            let dead = "http://127.0.0.1:\(deadPorts[0])"
            let client = try EtcdClient(endpoints: [dead, server.endpoint], requestTimeout: .seconds(1), logger: testLogger)
            try await client.put(key: "k", value: "v")
            #expect(try await client.get(key: "k").keyValue?.valueString == "v")
            #expect(try await client.health())
            await client.shutdown()

            let otherDead = "http://127.0.0.1:\(deadPorts[1])"
            let none = try EtcdClient(endpoints: [dead, otherDead], requestTimeout: .seconds(1), logger: testLogger)
            do {
                _ = try await none.get(key: "k")
                Issue.record("a read from two dead endpoints succeeded")
            } catch let error as EtcdError {
                #expect(error.kind == .unreachable)
                #expect(Set(error.endpoints) == [dead, otherDead])
                #expect(error.description.contains(dead) && error.description.contains(otherDead))
            }
            await none.shutdown()
        }
    }

    @Test("waitBlocking runs a call from a plain thread and hands back its result or error")
    func blockingBridge() async throws {
        try await withEtcdClient { _, client in
            let outcome: (Int64, EtcdError?) = await withCheckedContinuation { continuation in
                let thread = Thread {
                    let revision = (try? EtcdClient.waitBlocking { try await client.put(key: "b", value: "1") }) ?? -1
                    do throws(EtcdError) {
                        _ = try EtcdClient.waitBlocking { () async throws(EtcdError) in try await client.revoke(lease: 42) }
                        continuation.resume(returning: (revision, nil))
                    } catch {
                        continuation.resume(returning: (revision, error))
                    }
                }
                thread.start()
            }
            #expect(outcome.0 == 2)
            #expect(outcome.1?.kind == .leaseNotFound)
        }
    }
}
