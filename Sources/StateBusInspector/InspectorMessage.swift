/// The messages between the inspector and its page, as JSON.
///
/// To the page, as server-sent events on `/events`: `state` (every object and property,
/// whenever something changed), `stats` (each second: updates per second and the connected
/// views). From the page, posted: `write` (an edit) to `/write`, answered with a `verdict`
/// (the host's answer); `seek` to `/seek`, answered with a `position`.
enum InspectorMessage {
    /// Every object of the host, as the inspector's replicas hold them.
    struct State: Encodable, Equatable {
        var type = "state"
        var host: String
        var endpoint: String
        /// A high-availability group's hosts, when the inspector was given several: `host`
        /// and `endpoint` are then its leader's.
        var group: [String]?
        var objects: [Object]
        /// Present when the host is a recording's replay.
        var timeline: Timeline?
    }

    /// Where a recording's replay stands: the page's slider.
    struct Timeline: Encodable, Equatable {
        var first: UInt64
        var last: UInt64
        var at: UInt64
        var sequences: [UInt64]
    }

    /// The answer to a seek.
    struct Position: Encodable {
        var type = "position"
        var at: UInt64
        var error: String?

        init(at: UInt64, error: String?) {
            self.at = at
            self.error = error
        }
    }

    /// A move of the slider: show the recording at `sequence`.
    struct Seek: Decodable {
        var type: String
        var sequence: UInt64
    }

    struct Object: Encodable, Equatable {
        var name: String
        var connection: String
        var sequence: UInt64
        var properties: [Property]
    }

    struct Property: Encodable, Equatable {
        var name: String
        var type: String
        /// A string property: the page edits its text as is.
        var isString: Bool
        var writable: Bool
        var persisted: Bool
        /// The value as JSON.
        var json: String
        /// For a string property, its text.
        var text: String?
    }

    /// Once a second.
    struct Stats: Encodable {
        var type = "stats"
        var updatesPerSecond: Double
        var views: [View]
        var viewsOmitted: Int
        /// Why the list of views is missing (an old host, say), if it is.
        var viewsError: String?
    }

    struct View: Encodable {
        var viewID: String
        var node: String
        var relay: Bool
        var connectedSeconds: Double
        var key: String
    }

    /// The host's answer to an edit from the page.
    struct Verdict: Encodable {
        var type = "verdict"
        var object: String
        var property: String
        var accepted: Bool
        var reason: String
        /// From the edit to the host's acceptance, in milliseconds.
        var roundTripMs: Double?
        /// What the field shows now that the verdict is in (the host's value after a
        /// rejection): the text of a string, else JSON. The page's last state may still hold
        /// the edit's optimistic value.
        var shown: String?

        init(object: String, property: String, accepted: Bool, reason: String, roundTripMs: Double?, shown: String? = nil) {
            self.object = object
            self.property = property
            self.accepted = accepted
            self.reason = reason
            self.roundTripMs = roundTripMs
            self.shown = shown
        }
    }

    /// An edit from the page: `json` is the new value as JSON text.
    struct Write: Decodable {
        var type: String
        var object: String
        var property: String
        var json: String
    }
}
