import Foundation
import StateBusWire

/// What a host's welcome gave a view: the schema (kept across reconnections, so a host that
/// restarts with the same schema need not send it again), the token that proves the view id
/// is still the view's, and the terms it serves under.
struct HostTerms {
    /// The schema of the last welcome: the object's place in it and its properties.
    struct KnownSchema {
        let hash: UInt64
        let objectIndex: Int
        let layout: PropertyLayout
    }

    var schema: KnownSchema?
    /// The last welcome's token: shown in a hello from a new connection, it proves that the
    /// view id is still the view's (``HostConfiguration/viewIDLease``).
    private(set) var sessionToken = Data()
    /// How often the host sends heartbeats (`nil`: it sends none).
    private(set) var heartbeatInterval: Duration?
    /// The largest request the host takes (0: it did not say). A larger one is refused by the
    /// view: the host's refusal of it carries no request id, so the write or call would wait
    /// for its timeout.
    private(set) var maxMessageBytes = 0
    /// The host confirms accepted writes by their echo (the view asked, the host granted): it
    /// sends them no answer, so after a resync the unanswered ones go again. A relay, or a
    /// host that predates it or has no heartbeats, answers every write.
    private(set) var confirmsByEcho = false

    /// Takes a welcome's terms, with the schema it gave or confirmed.
    mutating func take(_ welcome: WelcomeReader, schema: KnownSchema) {
        self.schema = schema
        sessionToken = Data(welcome.sessionToken)
        heartbeatInterval = welcome.heartbeatIntervalMs > 0 ? .milliseconds(Int(welcome.heartbeatIntervalMs)) : nil
        maxMessageBytes = Int(clamping: welcome.maxMessageBytes)
        confirmsByEcho = welcome.confirmsByEcho
    }
}
