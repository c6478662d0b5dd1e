/// An I/O loop is also a Swift task executor: a task that prefers it
/// (`withTaskExecutorPreference(loop) { … }`, `Task(executorPreference: loop) { … }`) runs
/// its nonisolated code on the loop thread, between the loop's socket work.
///
/// That removes two thread hand-offs from every round trip a view makes: code on the loop
/// thread can use the loop's sockets at once instead of waking the loop, and a continuation
/// the loop resumes (a reply arrived) runs in the same turn of the loop instead of waking a
/// thread of the cooperative pool. Each hand-off costs a thread wake-up, about a third of a
/// whole loopback round trip.
///
/// A job enqueued after the loop has shut down runs on the global concurrent executor, so
/// no task waits forever for a loop that is gone.
extension IOLoop: TaskExecutor {
    /// Runs `job` on the loop thread, after the work queued before it.
    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = asUnownedTaskExecutor()
        // A loop that stops before running the job hands it on instead of dropping it.
        let elsewhere: @Sendable () -> Void = { globalConcurrentExecutor.enqueue(ExecutorJob(job)) }
        let accepted = enqueueWork(IOLoop.PendingWork(run: { _ in job.runSynchronously(on: executor) }, cancel: elsewhere))
        if !accepted { elsewhere() }
    }
}
