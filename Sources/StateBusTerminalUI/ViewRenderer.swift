import Observation
import StateBus

/// Renders a view tree for a terminal view process and keeps it up to date.
///
/// The renderer draws once at ``start()``, tracking every observable property the views read
/// (shared model properties, ``State``, connection state). When one of those changes, it
/// schedules a re-render on the main actor; changes that arrive together (a burst applied in
/// one main-actor turn) produce one render. A property nobody read triggers nothing.
///
/// ```swift
/// let environment = EnvironmentValues.process()
/// let shared = try await environment.replica(of: SharedData.self)
/// let renderer = ViewRenderer(ContentView().environmentObject(shared), environment: environment) { frame in
///     print(frame.joined(separator: "\n"))
/// }
/// renderer.start()
/// ```
@MainActor
public final class ViewRenderer: Observable {
    private let graph: ViewGraph
    private let renderRoot: (ViewGraph, inout [String]) -> Void
    private let output: ([String]) -> Void
    private var renderScheduled = false
    private var running = false

    private let registrar = ObservationRegistrar()
    private var renders = 0
    private var frame: [String] = []

    /// The number of renders so far (observable).
    public var renderCount: Int {
        registrar.access(self, keyPath: \.renderCount)
        return renders
    }

    /// The lines of the last render (observable).
    public var lastFrame: [String] {
        registrar.access(self, keyPath: \.lastFrame)
        return frame
    }

    /// Creates a renderer for a view tree.
    /// - Parameters:
    ///   - root: the root view.
    ///   - environment: the values views read with ``Environment`` (default: the process's).
    ///   - output: receives each rendered frame, one string per line.
    public init<Root: View>(_ root: Root, environment: EnvironmentValues = .process(), output: @escaping ([String]) -> Void) {
        graph = ViewGraph(environment: environment)
        renderRoot = { graph, lines in graph.evaluate(root, path: "root", into: &lines) }
        self.output = output
    }

    /// Renders now and keeps re-rendering on changes until ``stop()``.
    public func start() {
        running = true
        render()
    }

    /// Stops re-rendering; runs the views' disappear actions and ends their receivers.
    public func stop() {
        running = false
        graph.tearDown()
    }

    /// How many times the body of the view at a structural path was evaluated (diagnostics
    /// and tests: the root is "root").
    public func bodyEvaluations(atPath path: String) -> Int { graph.bodyEvaluations[path, default: 0] }

    /// Every path with its body evaluation count.
    public var bodyEvaluationsByPath: [String: Int] { graph.bodyEvaluations }

    private func render() {
        guard running else { return }
        renderScheduled = false
        let frame = withObservationTracking {
            graph.renderPass { lines in renderRoot(graph, &lines) }
        } onChange: { [weak self] in
            Task { @MainActor in self?.scheduleRender() }
        }
        registrar.withMutation(of: self, keyPath: \.renderCount) { renders += 1 }
        registrar.withMutation(of: self, keyPath: \.lastFrame) { self.frame = frame }
        output(frame)
        graph.runAfterRenderActions()
    }

    private func scheduleRender() {
        guard running, !renderScheduled else { return }
        renderScheduled = true
        // Yield once so the rest of a burst lands before the render.
        Task { @MainActor in
            await Task.yield()
            self.render()
        }
    }
}
