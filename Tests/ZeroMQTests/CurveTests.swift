import Testing
import ZeroMQ

@Suite("CURVE keys and encryption")
struct CurveTests {
    let context: Context
    init() throws { context = try Context() }

    @Test("key pairs are valid Z85 of 32 bytes and the public key derives from the secret")
    func keyPairs() throws {
        #expect(Context.has("curve"))
        let keys = try CurveKeyPair.generate()
        #expect(keys.publicKey.count == 40 && keys.secretKey.count == 40)
        #expect(try Z85.decode(keys.publicKey).count == 32)
        #expect(try CurveKeyPair.publicKey(forSecretKey: keys.secretKey) == keys.publicKey)
        #expect(try CurveKeyPair.generate() != keys)
    }

    @Test("Z85 round-trips and matches the specification's test vector")
    func z85() throws {
        let bytes: [UInt8] = [0x86, 0x4F, 0xD2, 0x6F, 0xB5, 0x59, 0xF7, 0x5B]
        #expect(try Z85.encode(bytes) == "HelloWorld")
        #expect(try Z85.decode("HelloWorld") == bytes)
        let random = (0..<32).map { _ in UInt8.random(in: 0...255) }
        #expect(try Z85.decode(Z85.encode(random)) == random)
        #expect(throws: ZeroMQError.invalidArgument) { try Z85.encode([1, 2, 3]) }
        #expect(throws: ZeroMQError.invalidArgument) { try Z85.decode("abcd") }
        #expect(throws: ZeroMQError.invalidArgument) { try Z85.decode("abc d") }
        #expect(throws: CurveKeyError.self) { try CurveKeyPair(publicKey: "short", secretKey: "short") }
    }

    @Test("a client with the server's key talks; one with a wrong key gets nothing")
    func encryption() throws {
        let serverKeys = try CurveKeyPair.generate()
        let server = try Socket(context: context, type: .router)
        try server.makeCurveServer(keys: serverKeys)
        let endpoint = try server.bind("tcp://127.0.0.1:*")

        let good = try Socket(context: context, type: .dealer)
        try good.makeCurveClient(keys: try CurveKeyPair.generate(), serverKey: serverKeys.publicKey)
        try good.connect(endpoint)
        try good.send("secret hello")
        let received = try #require(try receive(server))
        #expect(received.last == Array("secret hello".utf8))
        try server.send(multipart: [received[0], Array("welcome".utf8)])
        #expect(try receive(good) == [Array("welcome".utf8)])

        let impostorKey = try CurveKeyPair.generate().publicKey
        let bad = try Socket(context: context, type: .dealer)
        try bad.makeCurveClient(keys: try CurveKeyPair.generate(), serverKey: impostorKey)
        try bad.connect(endpoint)
        try bad.send("let me in")
        #expect(try receive(server, within: .milliseconds(500)) == nil)
    }
}
