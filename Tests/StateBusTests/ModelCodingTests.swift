import Foundation
import StateBus
import Testing

/// A view model whose declaration does not match its host's (another build, another type).
@MainActor @SharedModel("Mismatch")
final class MismatchModel {
    var count: Int = 7
    var label: String = ""
}

@Suite("Models: values that do not fit their property are reported, not dropped")
@MainActor
struct ModelCodingTests {
    @Test("a host value that does not decode as the view's type is logged with object and property; the property keeps its value")
    func decodeFailureIsReported() async throws {
        // The host declares `count` as a string: a view built with `Int` cannot take it.
        let object = ObjectDefinition(
            "Mismatch",
            properties: [
                PropertyDefinition("count", default: "not a number"),
                PropertyDefinition("label", default: "from the host")
            ])
        let host = try await Fixtures.host(objects: [object])
        defer { host.stop() }
        let log = CapturedLog()
        let model = try await MismatchModel.replica(controlEndpoint: host.controlEndpoint, configuration: ReplicaConfiguration(logger: log.logger))
        #expect(model.label == "from the host", "properties that fit still follow the host")
        #expect(model.count == 7, "the property that does not fit keeps its value")
        let reports = log.messages.filter { $0.message.contains("Mismatch.count") }
        #expect(reports.count >= 1, "\(log.messages.map(\.message))")
        #expect(reports.first?.level == .warning)
        #expect(reports.first?.message.contains("same type") == true)
    }
}
