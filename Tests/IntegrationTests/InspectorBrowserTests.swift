import Foundation
import StateBusTesting
import Testing

/// Why the browser test cannot run here, or `nil` when it can: it needs Debian's chromium and
/// chromium-driver and Selenium from PyPI (deploy/test.sh installs them when missing).
let browserUnavailable: String? = {
    let files = FileManager.default
    guard files.isExecutableFile(atPath: "/usr/bin/chromium"), files.isExecutableFile(atPath: "/usr/bin/chromedriver") else {
        return "needs /usr/bin/chromium and /usr/bin/chromedriver (apt-get install chromium chromium-driver)"
    }
    let check = Process()
    check.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    check.arguments = ["python3", "-c", "import selenium"]
    check.standardOutput = FileHandle.nullDevice
    check.standardError = FileHandle.nullDevice
    guard (try? check.run()) != nil else { return "needs python3" }
    check.waitUntilExit()
    return check.terminationStatus == 0 ? nil : "needs Selenium (python3 -m pip install selenium)"
}()

/// `statebus inspect` in a real browser: headless Chromium driven by Selenium, as a person
/// would use the page.
@Suite("The inspector's page in a real browser")
struct InspectorBrowserTests {
    @Test(
        "the page shows a value set with statebus set; an edit typed in it reaches the host and another view; an invalid one shows the host's reason and rolls back; a recording's slider shows each recorded sequence, back and forth",
        .enabled(if: browserUnavailable == nil, "\(browserUnavailable ?? "")"))
    func pageInBrowser() async throws {
        try await withTestSystem { system in
            let control = system.endpoint("profile.control")
            let host = try system.startProcess(
                executable: system.statebus,
                arguments: ["node", "profile", "--role", "host", "--control", control, "--database", system.path("profile.sqlite")], name: "host")
            try await host.waitForLine("the host ready", timeout: .seconds(60)) { $0.hasPrefix("ready ") }
            let inspector = try system.startProcess(
                executable: system.statebus, arguments: ["inspect", "--control", control, "--http", "127.0.0.1:0"], name: "inspect")
            let line = try await inspector.waitForLine("the inspector's URL", timeout: .seconds(60)) { $0.hasPrefix("inspector=http://") }
            let url = String(line.dropFirst("inspector=".count))
            let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
                .appendingPathComponent("Browser/inspector_check.py").path
            let run = try await OneShotCommand.run(
                URL(fileURLWithPath: "/usr/bin/env"), ["python3", script, url, control, system.statebus.path], timeout: .seconds(240))
            #expect(run.status == 0, "\(run.output.joined(separator: "\n"))\ninspector:\n\(inspector.output.suffix(20).joined(separator: "\n"))")
            for step in [
                "ok: the page shows the value set with statebus set",
                "ok: an edit typed in the page reaches the host and another view (statebus get)",
                "ok: an invalid edit shows the host's reason and the field rolls back", "ok: the connected views list the inspector's replica"
            ] {
                #expect(run.output.contains(step), "missing step '\(step)' in:\n\(run.output.joined(separator: "\n"))")
            }
            try await scrubRecording(in: system)
        }
    }

    /// A recording scrubbed in the page: the slider shows the object at each recorded
    /// sequence, back and forth. Part of ``pageInBrowser()``, so that one browser runs at a
    /// time beside the rest of the suite.
    func scrubRecording(in system: TestSystem) async throws {
        do {
            let control = system.endpoint("counter.control")
            let host = try system.startProcess(
                executable: system.statebus,
                arguments: [
                    "host", "--control", control, "--object", "Counter", "--property", "count:int=0", "--property", "label:string=start",
                    "--no-persistence"
                ], name: "host")
            try await host.waitForLine("the host ready", timeout: .seconds(60)) { $0.hasPrefix("ready ") }
            let file = system.path("run.rec")
            let recorder = try system.startProcess(
                executable: system.statebus, arguments: ["record", "--control", control, "--object", "Counter", "--out", file], name: "recorder")
            try await recorder.waitForLine("the recorder's snapshot", timeout: .seconds(60)) { $0.hasPrefix("recording object=Counter") }
            for arguments in [["count", "1"], ["label", #""middle""#], ["count", "2"], ["label", #""end""#]] {
                let set = try await runStatebus(["set", "--control", control, "--object", "Counter"] + arguments)
                #expect(set.status == 0, "\(set.output)")
            }
            // Each set returns once accepted, and the publication goes out in the same turn of
            // the host's loop: the recorder holds it by the time it is asked to stop.
            #expect(recorder.terminate() == 0)
            #expect(recorder.output.contains { $0.contains("sequence 0 to 4") }, "\(recorder.output)")

            let inspector = try system.startProcess(
                executable: system.statebus, arguments: ["inspect", "--recording", file, "--http", "127.0.0.1:0"], name: "inspect")
            let line = try await inspector.waitForLine("the inspector's URL", timeout: .seconds(60)) { $0.hasPrefix("inspector=http://") }
            let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
                .appendingPathComponent("Browser/inspector_check.py").path
            let stops = [
                "2:Counter.count=1,Counter.label=middle", "4:Counter.count=2,Counter.label=end", "0:Counter.count=0,Counter.label=start",
                "3:Counter.count=2,Counter.label=middle"
            ]
            let run = try await OneShotCommand.run(
                URL(fileURLWithPath: "/usr/bin/env"), ["python3", script, "--scrub", String(line.dropFirst("inspector=".count))] + stops,
                timeout: .seconds(240))
            #expect(run.status == 0, "\(run.output.joined(separator: "\n"))\ninspector:\n\(inspector.output.suffix(20).joined(separator: "\n"))")
            #expect(run.output.filter { $0.hasPrefix("ok: at sequence") }.count == stops.count, "\(run.output)")
        }
    }

    @Test("statebus inspect without a host endpoint says what to pass")
    func noEndpoint() async throws {
        let run = try await runStatebus(["inspect", "--http", "127.0.0.1:0"])
        #expect(run.status != 0)
        #expect(run.output.contains { $0.contains("no host endpoint: pass --control ENDPOINT") }, "\(run.output)")
    }
}
