import StateBus
import Testing

/// Encodes as a number but decodes only from a string: the kind of Codable slip that the
/// host's type check refuses, and that serving used to swallow.
struct Lopsided: Codable, Sendable, Equatable {
    var number: Int

    init(number: Int) { self.number = number }

    init(from decoder: any Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        guard let number = Int(text) else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "not a number: \(text)"))
        }
        self.number = number
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(number)
    }
}

@MainActor @SharedModel("Lopsided")
final class LopsidedModel {
    var lopsided: Lopsided = Lopsided(number: 0)
}

@MainActor
@Suite("Serving models whose values the host refuses")
struct ServingTests {
    @Test("a value set before serving that the host refuses fails serving with an error naming it")
    func refusedValueBeforeServing() async throws {
        let folder = Fixtures.temporaryFolder()
        let model = LopsidedModel()
        model.lopsided = Lopsided(number: 5)
        do {
            let host = try await StateHost(
                serving: [model],
                configuration: HostConfiguration(
                    name: "serving", controlEndpoint: "ipc://\(folder)/control", heartbeatInterval: .milliseconds(200),
                    persistence: .file("\(folder)/state.sqlite")))
            host.stop()
            Issue.record("the host served a value it cannot read back as the property's type")
        } catch let error as StateBusError {
            #expect(error.code == .typeMismatch)
            #expect(error.object == "Lopsided")
            #expect(error.property == "lopsided")
            #expect(error.message.contains("before serving"), "\(error.message)")
        }
    }
}
