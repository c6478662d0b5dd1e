import Foundation
import StateBus
import StateBusWire

/// A user as in the profile editor of the SwiftUI examples.
struct User: Codable, Sendable, Equatable {
    var username: String
    var email: String
}

enum Fixtures {
    static let sharedData = ObjectDefinition(
        "SharedData",
        properties: [
            PropertyDefinition("sharedText", default: ""),
            PropertyDefinition("counter", default: 0)
        ])

    static let profile = ObjectDefinition(
        "Profile",
        properties: [
            PropertyDefinition(
                "user", default: User(username: "anna", email: "anna@example.com"),
                validate: { user in
                    user.email.contains("@") ? nil : "'\(user.email)' is not an email address: it needs an @"
                }),
            PropertyDefinition("isLoading", default: false, writable: false),
            PropertyDefinition("notificationsEnabled", default: true, persisted: true)
        ])

    /// A host on an ipc endpoint in a fresh temporary folder.
    static func host(
        objects: [ObjectDefinition] = [sharedData, profile], folder: String = temporaryFolder(), heartbeat: Duration? = .milliseconds(200)
    ) async throws -> StateHost {
        try await StateHost(
            objects: objects,
            configuration: HostConfiguration(
                name: "test", controlEndpoint: "ipc://\(folder)/control", heartbeatInterval: heartbeat,
                persistence: .file("\(folder)/state.sqlite")
            ))
    }

    static func temporaryFolder() -> String {
        let path = "/tmp/sbt-\(UUID().uuidString.prefix(8))"
        try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    static func liveReplica(_ object: String, of host: StateHost) async throws -> Replica {
        let replica = try Replica(object: object, controlEndpoint: host.controlEndpoint)
        try await replica.waitUntilLive(timeout: .seconds(20))
        return replica
    }
}
