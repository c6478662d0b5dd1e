// A test process in miniature, for the test that kills one with SIGKILL: it starts a host
// and a view as child processes through StateBusTesting, as an integration test does,
// prints their pids and `ready`, and waits to be killed. Its children must end with it.
import Foundation
import StateBusTesting

let system = try TestSystem(name: "parent")
let host = try await system.startHostProcess(object: "Counter", properties: ["count:int=0"])
let view = try await system.startView(of: "Counter", at: host.controlEndpoint, name: "watcher")
// One write each: standard output is a pipe here, so print would keep the lines in its buffer.
FileHandle.standardOutput.write(Data("children \(host.process.pid) \(view.process.pid)\nready\n".utf8))
while true { try await Task.sleep(for: .seconds(3600)) }
