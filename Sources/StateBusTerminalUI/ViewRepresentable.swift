import StateBus

/// Wraps a renderer object that is made once and updated on every render, never rebuilt:
/// the counterpart of SwiftUI's `UIViewRepresentable` (`makeUIView` / `updateUIView`).
@MainActor
public protocol ViewRepresentable: View where Body == Never {
    /// The renderer's type.
    associatedtype Renderer: AnyObject
    /// Makes the renderer, the first time this view is shown at its place.
    func makeRenderer() -> Renderer
    /// Brings the renderer up to date with this view's values; called on every render.
    func updateRenderer(_ renderer: Renderer)
    /// The lines the renderer shows.
    func lines(of renderer: Renderer) -> [String]
}

/// The renderer's side of a ``ViewRepresentable``.
struct RepresentableRendering<Represented: ViewRepresentable>: PrimitiveView {
    let view: Represented
    func render(in graph: ViewGraph, path: String, into lines: inout [String]) {
        let renderer = graph.renderer(key: path, make: view.makeRenderer)
        view.updateRenderer(renderer)
        lines.append(contentsOf: view.lines(of: renderer))
    }
}
