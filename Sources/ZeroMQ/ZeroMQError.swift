import CZeroMQ

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// An error reported by libzmq, with the `errno` it set and libzmq's own description.
///
/// Every wrapper call that fails throws one of these; the code is never lost. Match the
/// common cases with the static values, which compare by code only:
///
/// ```swift
/// do { try socket.bind("tcp://127.0.0.1:5555") }
/// catch ZeroMQError.addressInUse { ... }
/// catch let error as ZeroMQError where error.code == EPROTONOSUPPORT { ... }
/// ```
public struct ZeroMQError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The `errno` value libzmq reported.
    public let code: Int32
    /// What was being done, for example `bind("tcp://127.0.0.1:*")`.
    public let operation: String

    /// Creates an error for `code`, raised by `operation`.
    /// - Parameters:
    ///   - code: the `errno` value.
    ///   - operation: what was being done, shown in the description.
    public init(code: Int32, operation: String = "") {
        self.code = code
        self.operation = operation
    }

    /// libzmq's description of `code` (`zmq_strerror`).
    public var message: String {
        guard let text = zmq_strerror(code) else { return "error \(code)" }
        return String(cString: text)
    }

    /// A readable sentence: the operation, libzmq's message and the errno value.
    public var description: String {
        operation.isEmpty
            ? "\(message) (errno \(code))"
            : "\(operation) failed: \(message) (errno \(code))"
    }

    /// Two errors are equal when their codes are equal; the operation is context only.
    public static func == (lhs: ZeroMQError, rhs: ZeroMQError) -> Bool { lhs.code == rhs.code }

    /// Hashes the code only, consistent with `==`.
    public func hash(into hasher: inout Hasher) { hasher.combine(code) }

    /// Lets `catch ZeroMQError.again` match any error with the same code.
    public static func ~= (pattern: ZeroMQError, error: any Error) -> Bool {
        (error as? ZeroMQError)?.code == pattern.code
    }

    /// The operation would block (`EAGAIN`): nothing to receive, or a full queue.
    public static let again = ZeroMQError(code: EAGAIN)
    /// The context was terminated (`ETERM`); the socket must be closed.
    public static let contextTerminated = ZeroMQError(code: ETERM)
    /// A signal interrupted the call (`EINTR`). The wrapper retries these itself.
    public static let interrupted = ZeroMQError(code: EINTR)
    /// The address is already in use (`EADDRINUSE`).
    public static let addressInUse = ZeroMQError(code: EADDRINUSE)
    /// The endpoint's transport is not supported (`EPROTONOSUPPORT`).
    public static let unsupportedTransport = ZeroMQError(code: EPROTONOSUPPORT)
    /// An argument was invalid, for example a malformed endpoint (`EINVAL`).
    public static let invalidArgument = ZeroMQError(code: EINVAL)
    /// A ROUTER socket with router-mandatory set cannot reach the peer (`EHOSTUNREACH`).
    public static let hostUnreachable = ZeroMQError(code: EHOSTUNREACH)
    /// The operation is not valid in the socket's current state (`EFSM`).
    public static let wrongState = ZeroMQError(code: EFSM)
}

/// The one place every libzmq call goes through: retries `EINTR`, throws the rest.
///
/// - Parameters:
///   - operation: a description of the call, kept in the error.
///   - call: the libzmq call; a negative result means failure with `zmq_errno()` set.
/// - Returns: the call's non-negative result.
/// - Throws: `ZeroMQError` with the errno (including `EAGAIN`, which callers that poll
///   turn into "would block").
@inline(__always)
@discardableResult
func zmqCall(_ operation: @autoclosure () -> String, _ call: () -> Int32) throws(ZeroMQError) -> Int32 {
    while true {
        let result = call()
        if result >= 0 { return result }
        let code = czmq_errno()
        if code == EINTR { continue }
        throw ZeroMQError(code: code, operation: operation())
    }
}
