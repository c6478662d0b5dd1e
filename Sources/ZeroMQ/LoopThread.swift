import CZeroMQ

/// The loop thread's side of an ``IOLoop``: sockets, read handlers and timers.
///
/// Only code running on the loop thread (inside ``IOLoop/execute(_:)``, a handler or a
/// timer) ever sees a `LoopThread`, so it is not `Sendable` and needs no locks. Handlers
/// must not block: receive with `tryReceive…` until it returns `nil` (or a batch limit).
public final class LoopThread {
    /// The loop this thread runs.
    public let loop: IOLoop

    /// An opaque handle to a timer, for ``cancelTimer(_:)``.
    public struct TimerID: Hashable, Sendable {
        let raw: Int
    }

    private struct Registration {
        let socket: Socket
        var onReadable: (() -> Void)?
        var onWritable: (() -> Void)?
        var readingPaused = false
    }

    private struct Timer {
        let id: TimerID
        var deadline: ContinuousClock.Instant
        let interval: Duration?
        let body: () -> Void
    }

    private var registrations: [Registration] = []
    private var timers: [Timer] = []
    private var nextTimerID = 0
    private var shutdownHooks: [() -> Void] = []
    private var poller = Poller()
    private var pollerIsStale = true
    private let clock = ContinuousClock()

    init(loop: IOLoop) {
        self.loop = loop
    }

    /// The context to create the loop's sockets in.
    public var context: Context { loop.context }

    // MARK: Sockets

    /// Starts polling `socket`; the loop closes it at shutdown.
    /// - Parameters:
    ///   - socket: a socket created on this thread.
    ///   - onReadable: called on the loop thread when messages are waiting. It should
    ///     receive without waiting until would-block, or up to a batch limit (the poll is
    ///     level-triggered, so what is left is reported again).
    public func register(_ socket: Socket, onReadable: (() -> Void)?) {
        unregister(socket)
        registrations.append(Registration(socket: socket, onReadable: onReadable))
        pollerIsStale = true
    }

    /// Sets or clears the handler called when `socket` can send again (after a send
    /// returned would-block). Clear it once the backlog is flushed, or the loop spins.
    public func setWritableHandler(for socket: Socket, _ handler: (() -> Void)?) {
        guard let index = registrations.firstIndex(where: { $0.socket === socket }) else { return }
        registrations[index].onWritable = handler
        pollerIsStale = true
    }

    /// Stops or resumes polling `socket` for reading (back-pressure: libzmq's high-water
    /// mark then holds the sender back).
    public func setReadingPaused(_ paused: Bool, for socket: Socket) {
        guard let index = registrations.firstIndex(where: { $0.socket === socket }),
            registrations[index].readingPaused != paused
        else { return }
        registrations[index].readingPaused = paused
        pollerIsStale = true
    }

    /// Stops polling `socket` without closing it.
    public func unregister(_ socket: Socket) {
        let before = registrations.count
        registrations.removeAll { $0.socket === socket }
        if registrations.count != before { pollerIsStale = true }
    }

    // MARK: Timers and hooks

    /// Runs `body` on the loop thread after `delay`, then every `interval` if one is given.
    /// - Returns: an id for ``cancelTimer(_:)``.
    @discardableResult
    public func scheduleTimer(after delay: Duration, repeating interval: Duration? = nil, _ body: @escaping () -> Void) -> TimerID {
        nextTimerID += 1
        let id = TimerID(raw: nextTimerID)
        timers.append(Timer(id: id, deadline: clock.now.advanced(by: delay), interval: interval, body: body))
        return id
    }

    /// Cancels a timer; cancelling one that already fired or was cancelled does nothing.
    public func cancelTimer(_ id: TimerID) {
        timers.removeAll { $0.id == id }
    }

    /// Runs `body` on the loop thread when the loop shuts down, before sockets close.
    public func onShutdown(_ body: @escaping () -> Void) {
        shutdownHooks.append(body)
    }

    // MARK: The loop

    func run() {
        while let work = takeWork() {
            for item in work { item.run(self) }
            runDueTimers()
            let mayBlock = loop.shared.withLock { state -> Bool in
                guard !state.stopping, state.work.isEmpty else { return false }
                state.sleeping = true
                return true
            }
            let ready: [Int]
            do {
                ready = try pollOnce(timeout: mayBlock ? untilNextTimer() : .zero)
            } catch {
                break  // the context was terminated under us: nothing more can be done
            }
            if mayBlock { loop.shared.withLock { $0.sleeping = false } }
            dispatch(ready)
        }
        finish()
    }

    private func takeWork() -> [IOLoop.PendingWork]? {
        loop.shared.withLock { state in
            if state.stopping { return nil }
            defer { state.work.removeAll(keepingCapacity: true) }
            return state.work
        }
    }

    private func pollOnce(timeout: Duration?) throws(ZeroMQError) -> [Int] {
        if pollerIsStale { rebuildPoller() }
        return try poller.poll(timeout: timeout)
    }

    private func rebuildPoller() {
        registrations.removeAll { $0.socket.isClosed }
        poller = Poller()
        poller.add(fileDescriptor: loop.wakeFD, events: .readable)
        for registration in registrations {
            var events: PollEvents = []
            if registration.onReadable != nil && !registration.readingPaused { events.insert(.readable) }
            if registration.onWritable != nil { events.insert(.writable) }
            poller.add(registration.socket, events: events)
        }
        pollerIsStale = false
    }

    private func dispatch(_ ready: [Int]) {
        // Snapshot first: handlers may register or unregister sockets.
        let snapshot = registrations
        for index in ready {
            if index == 0 {
                loop.drainWake()
                continue
            }
            let registration = snapshot[index - 1]
            let events = poller.events(at: index)
            if events.contains(.writable) { registration.onWritable?() }
            if events.contains(.readable), !registration.socket.isClosed { registration.onReadable?() }
        }
    }

    private func untilNextTimer() -> Duration? {
        guard let next = timers.map(\.deadline).min() else { return nil }
        return max(.zero, clock.now.duration(to: next))
    }

    private func runDueTimers() {
        guard !timers.isEmpty else { return }
        let now = clock.now
        let due = timers.filter { $0.deadline <= now }
        guard !due.isEmpty else { return }
        timers.removeAll { $0.deadline <= now && $0.interval == nil }
        for index in timers.indices where timers[index].deadline <= now {
            if let interval = timers[index].interval { timers[index].deadline = now.advanced(by: interval) }
        }
        for timer in due where timers.contains(where: { $0.id == timer.id }) || timer.interval == nil {
            timer.body()
        }
    }

    private func finish() {
        let hooks = shutdownHooks
        shutdownHooks.removeAll()
        for hook in hooks { hook() }
        for registration in registrations { registration.socket.close() }
        registrations.removeAll()
        timers.removeAll()
        poller = Poller()
        // Work submitted after the last drain never runs; let awaiting callers know.
        let abandoned = loop.shared.withLock { state in
            defer { state.work.removeAll() }
            return state.work
        }
        for work in abandoned { work.cancel?() }
    }
}
