import CCurl
import Foundation
import StateBusRuntime

/// The HTTP requests of one etcd client, run by libcurl's multi interface on a thread of
/// their own.
///
/// libcurl is a C library the system already has: the client needs no HTTP or TLS stack
/// compiled with it. Its multi interface runs any number of transfers on one thread, and
/// keeps their connections for reuse. Every easy handle and every callback lives on that
/// thread; other threads only queue commands (start, cancel, shut down) and wake it with
/// `curl_multi_wakeup`, which libcurl allows from any thread.
final class HTTPTransfers: Sendable {
    /// What other threads ask of the transfers' thread.
    private enum Command {
        case start(HTTPTransfer)
        case cancel(HTTPTransfer)
    }

    /// The commands not yet taken, and whether the thread is stopping.
    private struct Inbox {
        var commands: [Command] = []
        var stopping = false
    }

    private let inbox: Locked<Inbox>
    private let multi: MultiHandle

    /// Starts the transfers' thread.
    /// - Throws: ``HTTPTransferError/unreachable(_:)`` when libcurl cannot be set up.
    init() throws(HTTPTransferError) {
        guard Self.libcurlReady == CURLE_OK else {
            throw .unreachable("libcurl could not be initialised: \(String(cString: curl_easy_strerror(Self.libcurlReady)))")
        }
        guard let handle = curl_multi_init() else { throw .unreachable("libcurl could not make a multi handle") }
        multi = MultiHandle(pointer: handle)
        inbox = Locked(Inbox())
        let loop = TransferLoop(multi: multi, inbox: inbox)
        let thread = Thread { loop.run() }
        thread.name = "statebus-etcd"
        thread.start()
    }

    deinit {
        shutdown()
    }

    /// `curl_global_init`, once per process, before any other libcurl call.
    private static let libcurlReady: CURLcode = ccurl_global_init()

    /// Sends `request` and hands its answer to `receiver` as it arrives, until the answer
    /// ends, `request.timeout` passes, or the calling task is cancelled.
    /// - Throws: ``HTTPTransferError``.
    func perform(_ request: HTTPRequest, receiver: any HTTPAnswerReceiver) async throws(HTTPTransferError) {
        let first = await run(request, receiver: receiver)
        // A kept connection the server closed as it was taken for reuse fails the request
        // before any answer: tried once more on a new connection, as the next endpoint
        // would be (the request may have reached etcd either way; see EtcdClient).
        guard case .failure = first.outcome, first.brokeOnKeptConnection else { return try first.outcome.get() }
        var again = request
        again.freshConnection = true
        try await run(again, receiver: receiver).outcome.get()
    }

    /// One transfer of `request`, to its end.
    private func run(
        _ request: HTTPRequest, receiver: any HTTPAnswerReceiver
    ) async -> (outcome: Result<Void, HTTPTransferError>, brokeOnKeptConnection: Bool) {
        let transfer = HTTPTransfer(request, receiver: receiver)
        await withTaskCancellationHandler {
            await withCheckedContinuation { (waiter: CheckedContinuation<Void, Never>) in
                transfer.waiter = waiter
                // Once stopping, the transfers' thread never starts it: it ends here.
                if !send(.start(transfer)) { transfer.end(.failure(.shutDown)) }
            }
        } onCancel: {
            transfer.cancelled.store(true, ordering: .releasing)
            _ = send(.cancel(transfer))
        }
        let outcome = transfer.ending()
        return (outcome, transfer.brokeOnKeptConnection)
    }

    /// Ends every transfer (their callers get ``HTTPTransferError/shutDown``) and the thread,
    /// which closes the connections; returns without waiting for it. Safe to call more than
    /// once.
    func shutdown() {
        inbox.withLock { inbox in
            guard !inbox.stopping else { return }
            inbox.stopping = true
            curl_multi_wakeup(multi.pointer)
        }
    }

    /// Queues a command and wakes the thread. Returns false once the thread is stopping:
    /// after that, nothing may call `curl_multi_wakeup` on a handle it is about to free.
    private func send(_ command: Command) -> Bool {
        inbox.withLock { inbox in
            guard !inbox.stopping else { return false }
            inbox.commands.append(command)
            curl_multi_wakeup(multi.pointer)
            return true
        }
    }

    /// libcurl's multi handle.
    private struct MultiHandle: @unchecked Sendable {
        // Sendable: only the transfers' thread calls libcurl with it, but for
        // `curl_multi_wakeup`, which libcurl documents as safe from any thread; the inbox's
        // lock keeps every wake-up before the thread frees the handle.
        let pointer: UnsafeMutableRawPointer
    }

    /// The transfers' thread: its running transfers and its loop.
    private final class TransferLoop: @unchecked Sendable {
        // Sendable: made on the caller's thread and handed to the transfers' thread when it
        // starts; only that thread uses it from then on (`inbox` is a lock).
        private let multi: MultiHandle
        private let inbox: Locked<Inbox>
        /// The running transfers, by easy handle: the transfers' strong references while
        /// libcurl holds their unretained pointers.
        private var running: [UnsafeMutableRawPointer: HTTPTransfer] = [:]

        init(multi: MultiHandle, inbox: Locked<Inbox>) {
            self.multi = multi
            self.inbox = inbox
        }

        func run() {
            while true {
                let (commands, stopping) = inbox.withLock { inbox in
                    defer { inbox.commands = [] }
                    return (inbox.commands, inbox.stopping)
                }
                if stopping {
                    stop(queued: commands)
                    return
                }
                for command in commands { take(command) }
                var stillRunning: Int32 = 0
                let performed = curl_multi_perform(multi.pointer, &stillRunning)
                finishDone()
                if performed != CURLM_OK { failRunning(performed) }
                // Returns early when a transfer has something to do, when libcurl's own
                // timers (connect and request timeouts) are due, or on `curl_multi_wakeup`.
                let polled = curl_multi_poll(multi.pointer, nil, 0, 1000, nil)
                if polled != CURLM_OK {
                    failRunning(polled)
                    // A poll that fails at once every time must not spin a CPU.
                    usleep(10_000)
                }
            }
        }

        /// Fails every running transfer when libcurl's multi interface itself failed.
        private func failRunning(_ code: CURLMcode) {
            let why = "libcurl's transfers failed: \(String(cString: curl_multi_strerror(code)))"
            for (easy, transfer) in running {
                curl_multi_remove_handle(multi.pointer, easy)
                transfer.complete(.failure(.unreachable(why)))
            }
            running = [:]
        }

        private func take(_ command: Command) {
            switch command {
            case .start(let transfer):
                if transfer.cancelled.load(ordering: .acquiring) {
                    transfer.complete(.failure(.cancelled))
                    return
                }
                switch transfer.makeHandle() {
                case .success(let easy):
                    let added = curl_multi_add_handle(multi.pointer, easy)
                    guard added == CURLM_OK else {
                        let why = String(cString: curl_multi_strerror(added))
                        transfer.complete(.failure(.unreachable("libcurl could not start the request: \(why)")))
                        return
                    }
                    running[easy] = transfer
                case .failure(let error):
                    transfer.complete(.failure(error))
                }
            case .cancel(let transfer):
                // A transfer that already finished, or never started, is not in `running`.
                guard let easy = transfer.handle, running.removeValue(forKey: easy) != nil else { return }
                curl_multi_remove_handle(multi.pointer, easy)
                transfer.complete(.failure(.cancelled))
            }
        }

        /// Completes every transfer libcurl says is done.
        private func finishDone() {
            var left: Int32 = 0
            while let message = curl_multi_info_read(multi.pointer, &left) {
                guard message.pointee.msg == CURLMSG_DONE, let easy = message.pointee.easy_handle else { continue }
                let code = ccurl_message_result(message)
                guard let transfer = running.removeValue(forKey: easy) else { continue }
                curl_multi_remove_handle(multi.pointer, easy)
                transfer.complete(transfer.outcome(of: code))
            }
        }

        /// Fails every transfer, running or queued, and frees the multi handle.
        private func stop(queued: [Command]) {
            for (easy, transfer) in running {
                curl_multi_remove_handle(multi.pointer, easy)
                transfer.complete(.failure(.shutDown))
            }
            running = [:]
            for case .start(let transfer) in queued { transfer.complete(.failure(.shutDown)) }
            curl_multi_cleanup(multi.pointer)
        }
    }
}
