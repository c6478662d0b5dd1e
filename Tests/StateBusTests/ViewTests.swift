import StateBus
import StateBusTerminalUI
import Testing

/// A model with two independent properties.
@MainActor @SharedModel
final class Pair {
    var a: Int = 0
    var b: Int = 0
}

/// Reads only `a`.
struct ReadsA: View {
    let pair: Pair
    var body: some View { Text("a = \(pair.a)") }
}

/// A parent with view-local state, handing a binding to a child.
struct Counter: View {
    @State var count = 0
    @Environment(\.nodeName) var nodeName
    var body: some View {
        VStack {
            Text("\(nodeName): \(count)")
            Stepper(value: $count)
        }
    }
}

/// A child that edits its parent's state through a binding.
struct Stepper: View {
    let value: Binding<Int>
    var body: some View {
        Text("stepper at \(value.wrappedValue)")
            .onAppear { if value.wrappedValue == 0 { value.wrappedValue = 10 } }
    }
}

/// Counts how often its renderer is made and updated.
final class GaugeRenderer {
    nonisolated(unsafe) static var made = 0
    var updates = 0
    var level = 0
    init() { GaugeRenderer.made += 1 }
}

struct Gauge: ViewRepresentable {
    let level: Int
    func makeRenderer() -> GaugeRenderer { GaugeRenderer() }
    func updateRenderer(_ renderer: GaugeRenderer) {
        renderer.updates += 1
        renderer.level = level
    }
    func lines(of renderer: GaugeRenderer) -> [String] { [String(repeating: "#", count: renderer.level) + " (\(renderer.updates))"] }
}

@MainActor
@Suite("Terminal views: selective, coalesced re-rendering, state, environment, lifecycle")
struct ViewTests {
    /// Waits until the renderer has drawn a frame satisfying `condition`.
    func frame(of renderer: ViewRenderer, _ what: String, _ condition: @escaping @MainActor ([String]) -> Bool) async throws {
        try await waitUntil(what) { condition(renderer.lastFrame) }
    }

    @Test("a view that reads only a does not re-render when b changes")
    func selective() async throws {
        let pair = Pair()
        let renderer = ViewRenderer(ReadsA(pair: pair)) { _ in }
        renderer.start()
        defer { renderer.stop() }
        #expect(renderer.renderCount == 1)
        for value in 1...5 { pair.b = value }
        await Task.yield()
        await Task.yield()
        #expect(renderer.renderCount == 1)
        pair.a = 7
        try await waitUntil("the re-render") { renderer.lastFrame == ["a = 7"] }
        #expect(renderer.renderCount == 2)
    }

    @Test("a burst of 100 changes renders a bounded number of times and ends on the last value")
    func burst() async throws {
        let pair = Pair()
        let renderer = ViewRenderer(ReadsA(pair: pair)) { _ in }
        renderer.start()
        defer { renderer.stop() }
        for value in 1...100 { pair.a = value }
        try await waitUntil("the last value") { renderer.lastFrame == ["a = 100"] }
        #expect(renderer.renderCount <= 3, "rendered \(renderer.renderCount) times for one burst")
    }

    @Test("@State survives re-renders, a child edits it through a binding, environment flows down")
    func stateBindingEnvironment() async throws {
        var environment = EnvironmentValues()
        environment.nodeName = "first"
        let renderer = ViewRenderer(Counter(), environment: environment) { _ in }
        renderer.start()
        defer { renderer.stop() }
        // The child's onAppear sets the parent's state to 10 through the binding.
        try await waitUntil("the child's edit") { renderer.lastFrame == ["first: 10", "stepper at 10"] }
        let renders = renderer.renderCount
        #expect(renders == 2)
        let overridden = ViewRenderer(Counter().environment(\.nodeName, "second"), environment: environment) { _ in }
        overridden.start()
        defer { overridden.stop() }
        #expect(overridden.lastFrame.first == "second: 0")
    }

    @Test("onAppear once, onChange with old and new, onDisappear, onReceive")
    func lifecycle() async throws {
        let pair = Pair()
        let log = Log()
        let (events, continuation) = AsyncStream<String>.makeStream()
        struct Tree: View {
            let pair: Pair
            let log: Log
            let events: AsyncStream<String>
            var body: some View {
                VStack {
                    Text("a = \(pair.a)")
                        .onAppear { log.entries.append("appear") }
                        .onChange(of: pair.a) { old, new in log.entries.append("change \(old)->\(new)") }
                    if pair.b == 0 {
                        Text("b is zero").onDisappear { log.entries.append("disappear") }
                    }
                }
                .onReceive(events) { log.entries.append("received \($0)") }
            }
        }
        let renderer = ViewRenderer(Tree(pair: pair, log: log, events: events)) { _ in }
        renderer.start()
        defer { renderer.stop() }
        #expect(log.entries == ["appear"])
        pair.a = 1
        try await waitUntil("the change") { log.entries.contains("change 0->1") }
        pair.b = 1
        try await waitUntil("the disappearance") { log.entries.contains("disappear") }
        continuation.yield("ping")
        try await waitUntil("the event") { log.entries.contains("received ping") }
        #expect(log.entries.filter { $0 == "appear" }.count == 1)
    }

    @Test("a representable's renderer is made once and updated on every render")
    func representable() async throws {
        let pair = Pair()
        GaugeRenderer.made = 0
        struct Meter: View {
            let pair: Pair
            var body: some View { Gauge(level: pair.a) }
        }
        let renderer = ViewRenderer(Meter(pair: pair)) { _ in }
        renderer.start()
        defer { renderer.stop() }
        pair.a = 3
        try await waitUntil("the update") { renderer.lastFrame == ["### (2)"] }
        pair.a = 1
        try await waitUntil("the second update") { renderer.lastFrame == ["# (3)"] }
        #expect(GaugeRenderer.made == 1)
    }

    @Test("environment: defaults, overrides, process injection, objects by type")
    func environment() throws {
        let empty = EnvironmentValues()
        #expect(empty.controlEndpoint == nil)
        #expect(empty.objectNames == [])
        let injected = EnvironmentValues.process([
            "STATEBUS_CONTROL": "ipc:///tmp/x/control", "STATEBUS_NODE": "second", "STATEBUS_OBJECTS": "SharedData, Profile"
        ])
        #expect(injected.controlEndpoint == "ipc:///tmp/x/control")
        #expect(injected.nodeName == "second")
        #expect(injected.objectNames == ["SharedData", "Profile"])
        var overridden = injected
        overridden.nodeName = "third"
        #expect(overridden.nodeName == "third")
        #expect(injected.nodeName == "second")
        struct Greeting: EnvironmentKey { static let defaultValue = "hello" }
        var values = EnvironmentValues()
        #expect(values[Greeting.self] == "hello")
        values[Greeting.self] = "hi"
        #expect(values[Greeting.self] == "hi")

        let model = SharedData()
        model.sharedText = "from the environment"
        struct Reader: View {
            @EnvironmentObject var shared: SharedData
            var body: some View { Text(shared.sharedText) }
        }
        let renderer = ViewRenderer(Reader().environmentObject(model), environment: EnvironmentValues()) { _ in }
        renderer.start()
        defer { renderer.stop() }
        #expect(renderer.lastFrame == ["from the environment"])
    }

    @Test("ForEach over identified elements: a row's @State follows its element when the list is reordered")
    func forEachIdentity() async throws {
        let rows = RowOrder()
        let renderer = ViewRenderer(RowList(rows: rows)) { _ in }
        renderer.start()
        defer { renderer.stop() }
        try await frame(of: renderer, "the first rows") { $0 == ["a: 1", "b: 7", "c: 1"] }
        rows.order = ["b", "c", "a"]
        // b's row keeps b's state (7) at its new position: identity, not position, keys state.
        try await frame(of: renderer, "the reordered rows") { $0 == ["b: 7", "c: 1", "a: 1"] }
    }
}

/// A main-actor log for lifecycle tests, observable so waits wake on new entries.
@MainActor
@Observable
final class Log {
    var entries: [String] = []

}

/// The order of three rows, for `ForEach` with identity.
@MainActor @SharedModel
final class RowOrder {
    var order: [String] = ["a", "b", "c"]
}

/// A row with an id.
struct IdentifiedRow: Identifiable, Sendable {
    let id: String
}

/// A row whose state is set once, when it appears: 7 for b, 1 for the others.
struct RowLine: View {
    let row: IdentifiedRow
    @State var seen = 0
    var body: some View {
        Text("\(row.id): \(seen)").onAppear { seen = row.id == "b" ? 7 : 1 }
    }
}

/// The rows in the model's order.
struct RowList: View {
    let rows: RowOrder
    var body: some View {
        VStack { ForEach(rows.order.map(IdentifiedRow.init)) { RowLine(row: $0) } }
    }
}
