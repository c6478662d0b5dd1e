import Foundation
import StateBusTesting
import Testing

/// `statebus inspect`: its options, and what its web server answers to what (the page, its
/// event stream, posted edits), with real processes and an HTTP client of Python's standard
/// library. The page itself, in a browser: `InspectorBrowserTests`.
@Suite("statebus inspect: options and HTTP")
struct InspectCommandTests {
    @Test("statebus inspect --help shows the inspector's options, and contradictory options are refused, saying why")
    func options() async throws {
        let help = try await runStatebus(["inspect", "--help"])
        #expect(help.status == 0, "\(help.output)")
        let text = help.output.joined(separator: "\n")
        #expect(text.contains("--recording <recording>"), "\(help.output)")
        #expect(text.contains("USAGE: statebus inspect"), "\(help.output)")
        let refused = try await runStatebus(["inspect", "--control", "ipc:///tmp/x", "--recording", "/tmp/y"])
        #expect(refused.status != 0)
        #expect(
            refused.output.contains { $0.contains("choose one of --control (a live host) and --recording (a file), not both") }, "\(refused.output)")
    }

    @Test(
        "the page, its event stream of the host's state, a posted edit answered with the host's verdict; a bad or oversized edit, another method or path refused with its status"
    )
    func httpRules() async throws {
        try await withTestSystem { system in
            let control = system.endpoint("inspect.control")
            let host = try system.startProcess(
                executable: system.statebus,
                arguments: ["host", "--object", "Counter", "--property", "count:int=0", "--control", control], name: "host")
            try await host.waitForLine("the host ready", timeout: .seconds(60)) { $0.hasPrefix("ready ") }
            let inspector = try system.startProcess(
                executable: system.statebus, arguments: ["inspect", "--control", control, "--http", "127.0.0.1:0"], name: "inspect")
            let line = try await inspector.waitForLine("the inspector's URL", timeout: .seconds(60)) { $0.hasPrefix("inspector=http://") }
            let url = String(line.dropFirst("inspector=".count))
            // One line per request: `METHOD PATH STATUS allow=… type=… body=…` (the body's
            // first 200 characters); for the event stream, its first event's data.
            let script = """
                import json, sys, urllib.request, urllib.error
                base = sys.argv[1].rstrip("/")
                def ask(method, path, data=None):
                    request = urllib.request.Request(base + path, method=method, data=data, headers={"Content-Type": "application/json"})
                    try:
                        answer = urllib.request.urlopen(request, timeout=30)
                    except urllib.error.HTTPError as error:
                        answer = error
                    body = answer.read().decode("utf-8", "replace").replace("\\n", " ")[:200]
                    print(method, path, answer.status, "allow=" + str(answer.headers.get("Allow")), "type=" + str(answer.headers.get("Content-Type")), "body=" + body)
                ask("GET", "/")
                stream = urllib.request.urlopen(base + "/events", timeout=30)
                print("events type=" + str(stream.headers.get("Content-Type")))
                for raw in stream:
                    text = raw.decode("utf-8").rstrip("\\n")
                    if text.startswith("data: "):
                        print("event " + json.loads(text[6:])["type"])
                        break
                stream.close()
                ask("POST", "/write", json.dumps({"type": "write", "object": "Counter", "property": "count", "json": "5"}).encode())
                ask("POST", "/write", json.dumps({"type": "write", "object": "Counter", "property": "count", "json": "\\"five\\""}).encode())
                ask("POST", "/write", b"not json")
                ask("POST", "/write", b"x" * (2 << 20))
                ask("GET", "/write")
                ask("POST", "/")
                ask("GET", "/elsewhere")
                """
            let run = try await OneShotCommand.run(URL(fileURLWithPath: "/usr/bin/env"), ["python3", "-c", script, url], timeout: .seconds(120))
            #expect(run.status == 0, "\(run.output)")
            func answered(_ prefix: String, _ also: String? = nil) -> Bool {
                run.output.contains { $0.hasPrefix(prefix) && also.map($0.contains) ?? true }
            }
            #expect(answered("GET / 200 allow=None type=text/html", "<!doctype html>"), "\(run.output)")
            #expect(answered("events type=text/event-stream"), "\(run.output)")
            #expect(answered("event state") || answered("event stats"), "the stream's first event is the state or the figures: \(run.output)")
            #expect(answered("POST /write 200 allow=None type=application/json", "\"accepted\":true"), "\(run.output)")
            #expect(answered("POST /write 200 allow=None type=application/json", "\"accepted\":false"), "a string for an Int: \(run.output)")
            #expect(answered("POST /write 400 ", "a write is a JSON object"), "\(run.output)")
            #expect(answered("POST /write 413 ", "larger than the 1048576 bytes"), "\(run.output)")
            #expect(answered("GET /write 405 allow=POST "), "\(run.output)")
            #expect(answered("POST / 405 allow=GET, HEAD "), "\(run.output)")
            #expect(answered("GET /elsewhere 404 "), "\(run.output)")

            let value = try await runStatebus(["get", "--control", control, "--object", "Counter", "count"])
            #expect(value.output.contains { $0.contains("5") }, "the accepted edit is the host's value: \(value.output)")
        }
    }
}
