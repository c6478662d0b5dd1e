import Foundation
import StateBusTesting
import Testing

/// `--metrics HOST:PORT`: a scripted run against a host and a view, each scraped over HTTP;
/// the counters say what the run did.
@Suite("Metrics: /metrics in the Prometheus text format matches what a run did")
struct MetricsTests {
    /// One scrape of `url`, as `name value` pairs (`name{labels}` kept whole).
    static func scrape(_ url: String) async throws -> [String: Double] {
        let python = URL(fileURLWithPath: "/usr/bin/env")
        let run = try await OneShotCommand.run(
            python,
            ["python3", "-c", "import sys, urllib.request; sys.stdout.write(urllib.request.urlopen(sys.argv[1], timeout=10).read().decode())", url],
            timeout: .seconds(30))
        #expect(run.status == 0, "\(run.output)")
        var metrics: [String: Double] = [:]
        for line in run.output where !line.hasPrefix("#") {
            guard let space = line.lastIndex(of: " "), let value = Double(line[line.index(after: space)...]) else { continue }
            metrics[String(line[..<space])] = value
        }
        return metrics
    }

    /// The URL a process printed as `metrics=URL`.
    static func url(of process: NodeProcess) async throws -> String {
        let line = try await process.waitForLine("its metrics URL", timeout: .seconds(60)) { $0.hasPrefix("metrics=http://") }
        return String(line.dropFirst("metrics=".count))
    }

    @Test("a host's and a view's counters: writes by outcome, joins, updates, round trips, bytes")
    func scriptedRun() async throws {
        try await withTestSystem { system in
            let control = system.endpoint("metrics.control")
            let host = try system.startProcess(
                executable: system.statebus,
                arguments: [
                    "host", "--object", "Counter", "--property", "count:int=0", "--property", "label:string=a", "--control", control,
                    "--database", system.path("metrics.sqlite"), "--property", "total:int~=0", "--metrics", "127.0.0.1:0"
                ], name: "host")
            try await host.waitForLine("the host ready", timeout: .seconds(60)) { $0.hasPrefix("ready ") }
            let hostURL = try await Self.url(of: host)

            // A view that writes through standard input, with metrics of its own.
            let view = try system.startProcess(
                executable: system.statebus,
                arguments: ["watch", "--control", control, "--object", "Counter", "--edits", "--json", "--metrics", "127.0.0.1:0"], name: "view")
            let viewURL = try await Self.url(of: view)
            try await view.waitForLine("the view live") { $0.contains(#""connection":"live""#) }

            // The script: 3 writes accepted from the command line, 2 refused (a string for an
            // Int, an unknown property), 2 accepted from the view, one of them to a persisted
            // property (a commit).
            for value in ["1", "2", "3"] {
                let run = try await runStatebus(["set", "--control", control, "--object", "Counter", "count", value])
                #expect(run.status == 0, "\(run.output)")
            }
            for (property, value) in [("count", #""x""#), ("nothing", "1")] {
                let run = try await runStatebus(["set", "--control", control, "--object", "Counter", property, value])
                #expect(run.status != 0, "\(run.output)")
            }
            view.send(line: #"label "b""#)
            view.send(line: "total 7")
            try await view.waitForLine("the view's second write accepted") { $0.contains(#""event":"write""#) && $0.contains(#""line":2"#) }

            let atHost = try await Self.scrape(hostURL)
            #expect(atHost["statebus_host_writes_total{outcome=\"accepted\"}"] == 5, "\(atHost)")
            #expect(atHost["statebus_host_writes_total{outcome=\"rejected\"}"] == 2, "\(atHost)")
            #expect(atHost["statebus_host_published_updates_total"] == 5, "\(atHost)")
            // One join per `statebus set` (5) and the view's.
            #expect((atHost["statebus_host_snapshots_served_total"] ?? 0) >= 6, "\(atHost)")
            #expect((atHost["statebus_host_received_bytes_total"] ?? 0) > 0 && (atHost["statebus_host_published_bytes_total"] ?? 0) > 0)
            #expect((atHost["statebus_host_commits_total"] ?? 0) >= 1, "\(atHost)")
            #expect((atHost["statebus_host_commit_duration_seconds_count"] ?? 0) >= 1, "\(atHost)")
            #expect(atHost["statebus_host_client_backlog_limit_bytes"] == Double(16 << 20), "\(atHost)")

            let atView = try await Self.scrape(viewURL)
            #expect(atView["statebus_replica_writes_total{outcome=\"accepted\"}"] == 2, "\(atView)")
            #expect(atView["statebus_replica_write_round_trip_seconds_count"] == 2, "\(atView)")
            #expect(atView["statebus_replica_applied_updates_total"] == 5, "\(atView)")
            #expect(atView["statebus_replica_snapshots_total"] == 1, "\(atView)")
            #expect(atView["statebus_replica_resyncs_total{cause=\"gap\"}"] == 0, "\(atView)")
            // The host's connected views, reported at each heartbeat: the watching view.
            try await waitUntil("the host to report its connected view", timeout: .seconds(10)) {
                (try? await Self.scrape(hostURL)["statebus_host_connected_views"]) == 1
            }
        }
    }

    @Test("a malformed --metrics is refused before anything starts, saying what to write")
    func badAddress() async throws {
        let run = try await runStatebus(["host", "--object", "Counter", "--metrics", "9464"])
        #expect(run.status != 0)
        #expect(run.output.contains { $0.contains("--metrics '9464' is not HOST:PORT") }, "\(run.output)")
    }

    @Test(
        "the endpoint answers GET and HEAD of /metrics only (another path 404, another method 405 with Allow), and a port in use ends the command with the system's reason"
    )
    func httpRules() async throws {
        try await withTestSystem { system in
            let host = try system.startProcess(
                executable: system.statebus,
                arguments: [
                    "host", "--object", "Counter", "--property", "count:int=0", "--control", system.endpoint("rules.control"), "--metrics",
                    "127.0.0.1:0"
                ], name: "host")
            let url = try await Self.url(of: host)
            // Each request's status and headers, as `METHOD PATH STATUS header=value…`.
            let script = """
                import sys, urllib.request, urllib.error
                base = sys.argv[1].rsplit("/", 1)[0]
                for method, path in [("GET", "/metrics"), ("HEAD", "/metrics"), ("GET", "/other"), ("POST", "/metrics")]:
                    request = urllib.request.Request(base + path, method=method, data=b"x" if method == "POST" else None)
                    try:
                        answer = urllib.request.urlopen(request, timeout=10)
                    except urllib.error.HTTPError as error:
                        answer = error
                    print(method, path, answer.status, "allow=" + str(answer.headers.get("Allow")), "type=" + str(answer.headers.get("Content-Type")))
                """
            let run = try await OneShotCommand.run(URL(fileURLWithPath: "/usr/bin/env"), ["python3", "-c", script, url], timeout: .seconds(30))
            #expect(run.status == 0, "\(run.output)")
            #expect(run.output.contains { $0.hasPrefix("GET /metrics 200 allow=None type=text/plain; version=0.0.4") }, "\(run.output)")
            #expect(run.output.contains { $0.hasPrefix("HEAD /metrics 200 ") }, "\(run.output)")
            #expect(run.output.contains { $0.hasPrefix("GET /other 404 ") }, "\(run.output)")
            #expect(run.output.contains { $0.hasPrefix("POST /metrics 405 allow=GET, HEAD ") }, "\(run.output)")

            // A second host asking for the same port: the command ends, saying why.
            let port = String(url.split(separator: ":").last!.split(separator: "/").first!)
            let second = try await runStatebus([
                "host", "--object", "Counter", "--property", "count:int=0", "--control", system.endpoint("second.control"), "--metrics",
                "127.0.0.1:\(port)"
            ])
            #expect(second.status != 0)
            #expect(second.output.contains { $0.contains("cannot serve metrics at 127.0.0.1:\(port): Address already in use") }, "\(second.output)")
        }
    }
}
