import CZeroMQ

/// A CURVE key pair, as `zmq_curve_keypair` makes it, in Z85 text (40 characters each).
public struct CurveKeyPair: Sendable, Hashable {
    /// The public key, Z85-encoded (40 characters): give it to peers.
    public let publicKey: String
    /// The secret key, Z85-encoded (40 characters): keep it private.
    public let secretKey: String

    /// Wraps existing keys, checking that they are valid Z85 of 32 bytes.
    /// - Throws: `CurveKeyError` naming the key at fault.
    public init(publicKey: String, secretKey: String) throws(CurveKeyError) {
        guard (try? Z85.decode(publicKey))?.count == 32 else { throw CurveKeyError(key: "public", text: publicKey) }
        guard (try? Z85.decode(secretKey))?.count == 32 else { throw CurveKeyError(key: "secret", text: secretKey) }
        self.publicKey = publicKey
        self.secretKey = secretKey
    }

    private init(unchecked publicKey: String, _ secretKey: String) {
        self.publicKey = publicKey
        self.secretKey = secretKey
    }

    /// Generates a new key pair.
    /// - Throws: `ZeroMQError` (`ENOTSUP` when libzmq has no CURVE).
    public static func generate() throws(ZeroMQError) -> CurveKeyPair {
        var publicText = [CChar](repeating: 0, count: 41)
        var secretText = [CChar](repeating: 0, count: 41)
        try zmqCall("zmq_curve_keypair") { zmq_curve_keypair(&publicText, &secretText) }
        return CurveKeyPair(unchecked: Self.string(publicText), Self.string(secretText))
    }

    /// Derives the public key that belongs to a secret key.
    /// - Parameter secretKey: a Z85 secret key.
    /// - Throws: `ZeroMQError` when the key is invalid or CURVE is missing.
    public static func publicKey(forSecretKey secretKey: String) throws(ZeroMQError) -> String {
        var publicText = [CChar](repeating: 0, count: 41)
        try zmqCall("zmq_curve_public") { zmq_curve_public(&publicText, secretKey) }
        return string(publicText)
    }

    private static func string(_ text: [CChar]) -> String {
        String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

/// A CURVE key that is not 40 characters of Z85 encoding 32 bytes.
public struct CurveKeyError: Error, Sendable, CustomStringConvertible {
    /// Which key was wrong: "public", "secret" or "server".
    public let key: String
    /// The text given.
    public let text: String
    /// What was wrong and what to do.
    public var description: String {
        "invalid CURVE \(key) key \"\(text)\": expected 40 characters of Z85 (make a key pair with `CurveKeyPair.generate()` and use its `publicKey`/`secretKey` text)"
    }
}

/// Z85, ZeroMQ's printable encoding of binary keys (RFC 32/Z85).
public enum Z85 {
    /// Encodes bytes as Z85 text.
    /// - Parameter bytes: the data; its length must be a multiple of 4.
    /// - Throws: `ZeroMQError.invalidArgument` when the length is not a multiple of 4.
    public static func encode(_ bytes: [UInt8]) throws(ZeroMQError) -> String {
        guard bytes.count % 4 == 0 else { throw ZeroMQError(code: EINVAL, operation: "Z85.encode: length \(bytes.count) is not a multiple of 4") }
        var text = [CChar](repeating: 0, count: bytes.count * 5 / 4 + 1)
        let ok = bytes.withUnsafeBufferPointer { buffer in zmq_z85_encode(&text, buffer.baseAddress, buffer.count) != nil }
        guard ok else { throw ZeroMQError(code: EINVAL, operation: "Z85.encode") }
        return String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Decodes Z85 text to bytes.
    /// - Parameter text: Z85 text; its length must be a multiple of 5.
    /// - Throws: `ZeroMQError.invalidArgument` for a wrong length or a character outside Z85.
    public static func decode(_ text: String) throws(ZeroMQError) -> [UInt8] {
        let characters = Array(text.utf8)
        guard characters.count % 5 == 0 else {
            throw ZeroMQError(code: EINVAL, operation: "Z85.decode: length \(characters.count) is not a multiple of 5")
        }
        // libzmq checks lengths but not every character; check the alphabet here.
        let alphabet = Set("0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#".utf8)
        guard characters.allSatisfy(alphabet.contains) else {
            throw ZeroMQError(code: EINVAL, operation: "Z85.decode: a character is not in the Z85 alphabet")
        }
        var bytes = [UInt8](repeating: 0, count: characters.count * 4 / 5)
        let ok = bytes.withUnsafeMutableBufferPointer { buffer in zmq_z85_decode(buffer.baseAddress, text) != nil }
        guard ok else { throw ZeroMQError(code: EINVAL, operation: "Z85.decode") }
        return bytes
    }
}

extension Socket {
    /// Makes this socket a CURVE server with the given key pair.
    /// - Parameter keys: the server's key pair.
    public func makeCurveServer(keys: CurveKeyPair) throws(ZeroMQError) {
        try set(.curveServer, true)
        try set(.curveSecretKey, try Z85.decode(keys.secretKey))
    }

    /// Makes this socket a CURVE client of a server whose public key is `serverKey`.
    /// - Parameters:
    ///   - keys: the client's own key pair.
    ///   - serverKey: the server's Z85 public key.
    public func makeCurveClient(keys: CurveKeyPair, serverKey: String) throws(ZeroMQError) {
        try set(.curveServerKey, try Z85.decode(serverKey))
        try set(.curvePublicKey, try Z85.decode(keys.publicKey))
        try set(.curveSecretKey, try Z85.decode(keys.secretKey))
    }
}
