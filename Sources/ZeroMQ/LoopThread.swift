import CZeroMQ

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

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
        /// The socket's `ZMQ_FD`.
        let fd: Int32
        var onReadable: (() -> Void)?
        var onWritable: (() -> Void)?
        var readingPaused = false
        /// Whether libzmq may hold activity that the fd no longer signals: the socket is new
        /// here, its handler ran (it may have stopped at its batch limit), or reading resumed.
        var needsEventCheck = true
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
    private var shutdownHooks: [(id: ShutdownHookID, body: () -> Void)] = []
    private var nextShutdownHookID = 0
    /// The wake eventfd, then each registration's fd (reading paused: no events asked).
    private var pollSet: [pollfd] = []
    private var pollSetIsStale = true
    /// Counts registrations and unregistrations: while it holds still, positions in
    /// ``registrations`` hold too.
    private var registrationChanges = 0
    /// Whether due timers' bodies are running, and the timers cancelled meanwhile.
    private var firingTimers = false
    private var cancelledWhileFiring: Set<TimerID> = []
    private let clock = ContinuousClock()
    /// Until when the loop polls instead of sleeping (``pollBusily(for:)``).
    private var busyPollingDeadline: ContinuousClock.Instant?
    /// Polling busily needs a second CPU: on one, it would hold back the very thread (libzmq's
    /// I/O thread, pinned beside it) that must deliver what the loop waits for.
    private lazy var mayPollBusily = ThreadAffinity.currentThreadCPUCount > 1

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
        registrationChanges += 1
        // A socket whose fd cannot be read (closed) is polled through its events only.
        let fd = (try? socket.get(.fileDescriptor)) ?? -1
        registrations.append(Registration(socket: socket, fd: fd, onReadable: onReadable))
        pollSetIsStale = true
    }

    /// Sets or clears the handler called when `socket` can send again (after a send
    /// returned would-block). Clear it once the backlog is flushed, or the loop spins.
    public func setWritableHandler(for socket: Socket, _ handler: (() -> Void)?) {
        guard let index = registrations.firstIndex(where: { $0.socket === socket }) else { return }
        registrations[index].onWritable = handler
        registrations[index].needsEventCheck = true
        pollSetIsStale = true
    }

    /// Stops or resumes polling `socket` for reading (back-pressure: libzmq's high-water
    /// mark then holds the sender back).
    public func setReadingPaused(_ paused: Bool, for socket: Socket) {
        guard let index = registrations.firstIndex(where: { $0.socket === socket }),
            registrations[index].readingPaused != paused
        else { return }
        registrations[index].readingPaused = paused
        registrations[index].needsEventCheck = !paused
        pollSetIsStale = true
    }

    /// Stops polling `socket` without closing it.
    public func unregister(_ socket: Socket) {
        let before = registrations.count
        registrations.removeAll { $0.socket === socket }
        if registrations.count != before {
            pollSetIsStale = true
            registrationChanges += 1
        }
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
        if firingTimers { cancelledWhileFiring.insert(id) }
    }

    /// An opaque handle to a shutdown hook, for ``removeShutdownHook(_:)``.
    public struct ShutdownHookID: Hashable, Sendable {
        let raw: Int
    }

    /// Runs `body` on the loop thread when the loop shuts down, before sockets close.
    /// - Returns: an id for ``removeShutdownHook(_:)``, for an owner that goes away before
    ///   the loop does (a socket or a replica on a long-lived shared loop).
    @discardableResult
    public func onShutdown(_ body: @escaping () -> Void) -> ShutdownHookID {
        nextShutdownHookID += 1
        let id = ShutdownHookID(raw: nextShutdownHookID)
        shutdownHooks.append((id, body))
        return id
    }

    /// How many shutdown hooks wait (for tests: owners that went remove theirs).
    var shutdownHookCount: Int { shutdownHooks.count }

    /// Forgets a shutdown hook; removing one that ran or was removed does nothing.
    public func removeShutdownHook(_ id: ShutdownHookID) {
        shutdownHooks.removeAll { $0.id == id }
    }

    // MARK: Polling busily

    /// Keeps the loop polling its sockets instead of sleeping, for up to `duration` from now
    /// (a later deadline than one already set wins), until ``stopPollingBusily()``.
    ///
    /// For a caller that has just sent a request whose answer comes within microseconds: a
    /// thread asleep in the poll on an idle CPU takes tens of microseconds to wake (on a
    /// virtual machine, the CPU itself halts), about a third of a loopback round trip. While
    /// polling, the loop still runs new work and due timers at once, and yields its CPU to any
    /// other thread waiting for it. It costs up to `duration` of one CPU per call, and does
    /// nothing on a thread that may use only one CPU (the low-latency profile's pinned loop),
    /// where it would hold back libzmq's I/O thread.
    public func pollBusily(for duration: Duration) {
        guard duration > .zero, mayPollBusily else { return }
        let deadline = clock.now.advanced(by: duration)
        if let current = busyPollingDeadline, current >= deadline { return }
        busyPollingDeadline = deadline
    }

    /// Lets the loop sleep again when it has nothing to do (the awaited answers came).
    public func stopPollingBusily() {
        busyPollingDeadline = nil
    }

    // MARK: The loop

    /// One turn: queued work (jobs of tasks that prefer the loop), due timers, then the
    /// sockets. libzmq signals a socket's activity through its fd (`ZMQ_FD`), edge-like: once
    /// a receive or send has taken the activity, the fd stays quiet although messages may
    /// wait. So before sleeping the loop asks `ZMQ_EVENTS` of each socket that may hold such
    /// activity (just handled, or touched since its last check: sent on, received from,
    /// connected, asked its events by work or a timer) and sleeps only when none does; otherwise it polls
    /// the fds and calls the handlers of those that woke. `zmq_poll` asks every socket twice
    /// per call, which on a virtual machine costs more system calls than the work itself.
    func run() {
        while let work = takeWork() {
            for item in work { item.run(self) }
            runDueTimers()
            if pollSetIsStale { rebuildPollSet() }
            var ready: [(index: Int, events: PollEvents)] = []
            for index in registrations.indices {
                let registration = registrations[index]
                guard registration.needsEventCheck || registration.socket.mayHideActivity, !registration.socket.isClosed else { continue }
                registrations[index].needsEventCheck = false
                guard let events = try? registration.socket.loopEvents() else { continue }
                var wanted: PollEvents = []
                if registration.onReadable != nil, !registration.readingPaused, events.contains(.readable) { wanted.insert(.readable) }
                if registration.onWritable != nil, events.contains(.writable) { wanted.insert(.writable) }
                if !wanted.isEmpty { ready.append((index, wanted)) }
            }
            let mayBlock =
                ready.isEmpty
                && loop.shared.withLock { state -> Bool in
                    guard !state.stopping, state.work.isEmpty else { return false }
                    state.sleeping = true
                    return true
                }
            let woke: Int32
            do {
                woke = try mayBlock ? waitForActivity() : pollOnce(timeout: .zero)
            } catch {
                break  // the poll failed for good: nothing more can be done
            }
            if mayBlock { loop.shared.withLock { $0.sleeping = false } }
            if woke > 0 { collect(into: &ready) }
            dispatch(ready)
        }
        finish()
    }

    /// Runs the work queued so far, if the loop is not stopping.
    private func runQueuedWork() {
        guard let work = takeWork(), !work.isEmpty else { return }
        for item in work { item.run(self) }
    }

    private func takeWork() -> [IOLoop.PendingWork]? {
        loop.shared.withLock { state in
            if state.stopping { return nil }
            defer { state.work.removeAll(keepingCapacity: true) }
            return state.work
        }
    }

    /// Waits for a socket, new work (the wake fd) or the next timer: polling without sleeping
    /// first while ``pollBusily(for:)`` asks it to, up to the next timer's deadline.
    private func waitForActivity() throws(ZeroMQError) -> Int32 {
        if let busyUntil = busyPollingDeadline {
            let end = nextTimerDeadline.map { min($0, busyUntil) } ?? busyUntil
            while clock.now < end {
                let woke = try pollOnce(timeout: .zero)
                if woke > 0 { return woke }
                // Any thread the kernel queued on this CPU runs now, not at the end of this
                // thread's time slice (a thread that does not block keeps its CPU for the
                // whole slice), so that a polling writer does not hold back another view's
                // echo on this CPU by a whole slice.
                sched_yield()
            }
            if clock.now >= busyUntil { busyPollingDeadline = nil }
        }
        return try pollOnce(timeout: untilNextTimer())
    }

    private func pollOnce(timeout: Duration?) throws(ZeroMQError) -> Int32 {
        // Nanoseconds, not poll's milliseconds: a timer due in 200 µs fires then.
        let nanoseconds: Int64 =
            timeout.map { duration in
                let (seconds, attoseconds) = max(duration, .zero).components
                return seconds * 1_000_000_000 + attoseconds / 1_000_000_000
            } ?? -1
        while true {
            let result = pollSet.withUnsafeMutableBufferPointer { czmq_poll_ns($0.baseAddress, UInt($0.count), nanoseconds) }
            if result >= 0 { return result }
            let code = errno
            if code == EINTR { continue }
            throw ZeroMQError(code: code, operation: "poll")
        }
    }

    private func rebuildPollSet() {
        let before = registrations.count
        registrations.removeAll { $0.socket.isClosed }
        if registrations.count != before { registrationChanges += 1 }
        pollSet = [pollfd(fd: loop.wakeFD, events: Int16(POLLIN), revents: 0)]
        for registration in registrations {
            // The fd signals any activity, reading and writing alike.
            let watched = (registration.onReadable != nil && !registration.readingPaused) || registration.onWritable != nil
            pollSet.append(pollfd(fd: watched ? registration.fd : -1, events: Int16(POLLIN), revents: 0))
        }
        pollSetIsStale = false
    }

    /// Adds the sockets whose fd woke the poll to `ready` (asking `ZMQ_EVENTS` only of those
    /// that also wait to write: a read handler finds out by receiving).
    private func collect(into ready: inout [(index: Int, events: PollEvents)]) {
        if pollSet[0].revents != 0 { loop.drainWake() }
        for position in 1..<pollSet.count where pollSet[position].revents != 0 {
            let index = position - 1
            guard index < registrations.count, !ready.contains(where: { $0.index == index }) else { continue }
            let registration = registrations[index]
            // Closed without `unregister`: its fd is gone (or reused), and the poll would
            // report it at once on every call, keeping the loop awake for nothing.
            if registration.socket.isClosed {
                pollSetIsStale = true
                continue
            }
            if registration.onWritable != nil {
                guard let events = try? registration.socket.loopEvents() else { continue }
                var wanted: PollEvents = []
                if registration.onReadable != nil, !registration.readingPaused, events.contains(.readable) { wanted.insert(.readable) }
                if events.contains(.writable) { wanted.insert(.writable) }
                if !wanted.isEmpty { ready.append((index, wanted)) }
            } else {
                ready.append((index, .readable))
            }
        }
    }

    private func dispatch(_ ready: [(index: Int, events: PollEvents)]) {
        guard !ready.isEmpty else { return }
        // Snapshot first: handlers may register or unregister sockets.
        let snapshot = registrations
        let changesBefore = registrationChanges
        for (index, events) in ready {
            let registration = snapshot[index]
            // A handler earlier in this turn may have unregistered or closed it: it gets no
            // more calls (a closed socket's writer would count its queued sends as lost). The
            // snapshot's positions hold while nothing registered or unregistered.
            guard !registration.socket.isClosed else { continue }
            if registrationChanges != changesBefore, !registrations.contains(where: { $0.socket === registration.socket }) { continue }
            if events.contains(.writable) { registration.onWritable?() }
            if events.contains(.readable), !registration.socket.isClosed { registration.onReadable?() }
            // A task the handler resumed (a reply arrived) runs now, before the next socket's
            // handler: its answer is not held up by other messages that came in the same turn.
            runQueuedWork()
            // Ask again before sleeping: the handler may have stopped at its batch limit.
            if registrationChanges == changesBefore {
                registrations[index].needsEventCheck = true
            } else if let current = registrations.firstIndex(where: { $0.socket === registration.socket }) {
                registrations[current].needsEventCheck = true
            }
        }
    }

    private var nextTimerDeadline: ContinuousClock.Instant? { timers.lazy.map(\.deadline).min() }

    private func untilNextTimer() -> Duration? {
        guard let next = nextTimerDeadline else { return nil }
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
        // A body may cancel a timer due in the same turn: that one no longer fires.
        firingTimers = true
        defer {
            firingTimers = false
            cancelledWhileFiring.removeAll()
        }
        for timer in due where !cancelledWhileFiring.contains(timer.id) {
            timer.body()
        }
    }

    private func finish() {
        let hooks = shutdownHooks
        shutdownHooks.removeAll()
        for hook in hooks { hook.body() }
        for registration in registrations { registration.socket.close() }
        registrations.removeAll()
        timers.removeAll()
        pollSet = []
        // Work submitted after the last drain never runs; let awaiting callers know. The loop
        // is marked stopped in the same step, so no work is accepted after it (the loop also
        // ends here when its poll fails for good, without a call to `shutdown()`).
        let abandoned = loop.shared.withLock { state in
            state.stopping = true
            defer { state.work.removeAll() }
            return state.work
        }
        for work in abandoned { work.cancel?() }
    }
}
