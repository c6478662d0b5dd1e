import Foundation

/// Writes to a pipe whose reader may be gone, without the SIGPIPE that would end this
/// whole process: a launcher or a test that types a line to a child that has just died
/// gets `false`, not a dead process.
///
/// The kernel sends SIGPIPE to the thread that wrote, so the signal is blocked on this
/// thread for the write and, if the write raised it, taken off again before the old mask
/// returns: nothing else in the process changes (its own SIGPIPE disposition included).
enum PipeWrite {
    /// Writes all of `bytes` to `descriptor`.
    /// - Returns: whether every byte was written (`false`: the reader is gone, or another
    ///   error).
    static func write(_ bytes: [UInt8], to descriptor: Int32) -> Bool {
        var pipeSignal = sigset_t()
        sigemptyset(&pipeSignal)
        sigaddset(&pipeSignal, SIGPIPE)
        var previous = sigset_t()
        pthread_sigmask(SIG_BLOCK, &pipeSignal, &previous)
        defer { pthread_sigmask(SIG_SETMASK, &previous, nil) }
        // One that was already pending is someone else's: leave it.
        var pending = sigset_t()
        sigpending(&pending)
        let pendingBefore = sigismember(&pending, SIGPIPE) == 1
        var sent = 0
        var readerGone = false
        while sent < bytes.count {
            let written = bytes.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress! + sent, bytes.count - sent) }
            if written > 0 {
                sent += written
            } else if written < 0, errno == EINTR {
                continue
            } else {
                readerGone = errno == EPIPE
                break
            }
        }
        if readerGone, !pendingBefore {
            var now = timespec()
            _ = sigtimedwait(&pipeSignal, nil, &now)
        }
        return sent == bytes.count
    }
}
