import StateBus
import StateBusTerminalUI

/// The shared text of the SwiftUI environment-object example (seeds/003): one string that
/// three views show and edit. The host owns it; each view process holds a replica.
@MainActor @SharedModel
public final class SharedData {
    /// The text every view shows.
    public var sharedText: String = ""
}

/// One of the three views of the example: shows the text; the node types edits into it.
public struct SharedTextView: View {
    /// "first", "second" or "third".
    public let name: String
    @EnvironmentObject var shared: SharedData

    /// A view with a name.
    public init(name: String) { self.name = name }

    /// `[name] sharedText: …`.
    public var body: some View {
        Text("\(name) view: \(shared.sharedText)")
    }
}
