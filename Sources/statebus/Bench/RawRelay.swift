import ZeroMQ

/// The raw libzmq side of the echo baselines in the bench process: a ROUTER that either
/// sends each DEALER message straight back (the round trip) or forwards it to a PUB (the
/// way to another process's SUB). Blocking calls, on a thread of its own.
enum RawRelay {
    /// Serves until `stop` is set.
    /// - Parameters:
    ///   - echo: `true`: back to the sender; `false`: out on the PUB.
    ///   - cpu: pins this thread and the context's I/O thread (the pinned baseline).
    /// - Returns: how many messages it relayed.
    static func run(control: String, updates: String, echo: Bool, cpu: Int32?, stop: StopFlag) throws -> Int {
        if let cpu { ThreadAffinity.pinCurrentThread(to: cpu) }
        let context = try Context(ioThreadCPU: cpu)
        defer { context.terminate() }
        let router = try Socket(context: context, type: .router)
        let publisher = try Socket(context: context, type: .pub)
        defer {
            router.close()
            publisher.close()
        }
        try router.bind(control)
        try publisher.bind(updates)
        let poller = Poller()
        poller.add(router, events: .readable)
        let identity = Message()
        let payload = Message()
        var relayed = 0
        while !stop.isSet {
            guard try !poller.poll(timeout: .milliseconds(100)).isEmpty else { continue }
            while try router.receive(into: identity, wait: false) {
                guard identity.hasMore else { continue }
                try router.receive(into: payload)
                if echo {
                    try router.send(identity, more: true)
                    try router.send(payload)
                } else {
                    try publisher.send(payload)
                }
                relayed += 1
            }
        }
        return relayed
    }
}
