import StateBus

/// A piece of a terminal view process's interface, as in SwiftUI: a `body` built from other
/// views, down to ``Text``. A ``ViewRenderer`` renders it and re-renders it when (and only when)
/// a property it read changes.
@MainActor
public protocol View {
    /// The view's content type.
    associatedtype Body: View
    /// The view's content.
    @ViewBuilder var body: Body { get }
}

/// A view the renderer draws itself instead of asking for a body.
@MainActor
protocol PrimitiveView {
    func render(in graph: ViewGraph, path: String, into lines: inout [String])
}

extension Never: View {
    /// Primitive views have no body.
    public var body: Never { fatalError("Never has no body") }
}

extension View where Body == Never {
    /// Primitive views have no body; the renderer draws them directly and never reads this.
    public var body: Never { fatalError("\(Self.self) is rendered by the view renderer, not through body") }
}

/// One or more lines of text.
public struct Text: View, PrimitiveView {
    let content: String
    /// Shows `content` (which may span several lines).
    public init(_ content: String) { self.content = content }
    func render(in graph: ViewGraph, path: String, into lines: inout [String]) {
        lines.append(contentsOf: content.split(separator: "\n", omittingEmptySubsequences: false).map(String.init))
    }
}

/// Nothing.
public struct EmptyView: View, PrimitiveView {
    /// Creates an empty view.
    public init() {}
    func render(in graph: ViewGraph, path: String, into lines: inout [String]) {}
}

/// Views one under the other, optionally indented.
public struct VStack<Content: View>: View, PrimitiveView {
    let indent: Int
    let content: Content
    /// Stacks the views the builder produces.
    /// - Parameters:
    ///   - indent: spaces before each line.
    ///   - content: the views.
    public init(indent: Int = 0, @ViewBuilder content: () -> Content) {
        self.indent = indent
        self.content = content()
    }
    func render(in graph: ViewGraph, path: String, into lines: inout [String]) {
        var inner: [String] = []
        graph.evaluate(content, path: path + "/v", into: &inner)
        let padding = String(repeating: " ", count: indent)
        lines.append(contentsOf: inner.map { padding + $0 })
    }
}

/// A view per element of a collection.
///
/// With identity (`Identifiable` elements, or `id:`), each element's view keeps its own
/// `State` where the element goes: after a move, an insert before it or a removal, the row
/// of an item is still that item's, as with SwiftUI's `ForEach`. Without identity, a row is
/// its position.
public struct ForEach<Element, Content: View>: View, PrimitiveView {
    let elements: [Element]
    let identity: ((Element) -> AnyHashable)?
    let content: (Element) -> Content

    /// Makes a view for each element, identified by its position.
    public init(_ elements: some Sequence<Element>, @ViewBuilder content: @escaping (Element) -> Content) {
        self.elements = Array(elements)
        self.identity = nil
        self.content = content
    }

    /// Makes a view for each element, identified by the key path `id`.
    public init<ID: Hashable>(_ elements: some Sequence<Element>, id: KeyPath<Element, ID>, @ViewBuilder content: @escaping (Element) -> Content) {
        self.elements = Array(elements)
        self.identity = { AnyHashable($0[keyPath: id]) }
        self.content = content
    }

    func render(in graph: ViewGraph, path: String, into lines: inout [String]) {
        for (index, element) in elements.enumerated() {
            let key = identity.map { "id=\($0(element))" } ?? "\(index)"
            graph.evaluate(content(element), path: "\(path)[\(key)]", into: &lines)
        }
    }
}

extension ForEach where Element: Identifiable {
    /// Makes a view for each element, identified by its `id`.
    public init(_ elements: some Sequence<Element>, @ViewBuilder content: @escaping (Element) -> Content) {
        self.elements = Array(elements)
        self.identity = { AnyHashable($0.id) }
        self.content = content
    }
}

/// Several views in sequence (what a ``ViewBuilder`` block makes).
public struct TupleView<each Content: View>: View, PrimitiveView {
    let content: (repeat each Content)
    init(_ content: repeat each Content) { self.content = (repeat each content) }
    func render(in graph: ViewGraph, path: String, into lines: inout [String]) {
        var index = 0
        for view in repeat each content {
            graph.evaluate(view, path: "\(path).\(index)", into: &lines)
            index += 1
        }
    }
}

/// A view that may be absent (`if` without `else`).
public struct OptionalView<Wrapped: View>: View, PrimitiveView {
    let wrapped: Wrapped?
    func render(in graph: ViewGraph, path: String, into lines: inout [String]) {
        if let wrapped { graph.evaluate(wrapped, path: path + "?", into: &lines) }
    }
}

/// One of two views (`if`/`else`).
public struct ConditionalView<First: View, Second: View>: View, PrimitiveView {
    enum Storage {
        case first(First)
        case second(Second)
    }
    let storage: Storage
    func render(in graph: ViewGraph, path: String, into lines: inout [String]) {
        switch storage {
        case .first(let view): graph.evaluate(view, path: path + "<1", into: &lines)
        case .second(let view): graph.evaluate(view, path: path + "<2", into: &lines)
        }
    }
}

/// Views made by a `for` loop in a builder.
public struct ArrayView<Content: View>: View, PrimitiveView {
    let views: [Content]
    func render(in graph: ViewGraph, path: String, into lines: inout [String]) {
        for (index, view) in views.enumerated() { graph.evaluate(view, path: "\(path)#\(index)", into: &lines) }
    }
}

/// Builds views from blocks, as SwiftUI's `@ViewBuilder` does.
@resultBuilder
@MainActor
public enum ViewBuilder {
    /// Nothing.
    public static func buildBlock() -> EmptyView { EmptyView() }
    /// One view.
    public static func buildBlock<Content: View>(_ content: Content) -> Content { content }
    /// Several views.
    public static func buildBlock<each Content: View>(_ content: repeat each Content) -> TupleView<repeat each Content> {
        TupleView(repeat each content)
    }
    /// `if` without `else`.
    public static func buildOptional<Content: View>(_ content: Content?) -> OptionalView<Content> { OptionalView(wrapped: content) }
    /// The `if` branch.
    public static func buildEither<First: View, Second: View>(first: First) -> ConditionalView<First, Second> {
        ConditionalView(storage: .first(first))
    }
    /// The `else` branch.
    public static func buildEither<First: View, Second: View>(second: Second) -> ConditionalView<First, Second> {
        ConditionalView(storage: .second(second))
    }
    /// A `for` loop.
    public static func buildArray<Content: View>(_ content: [Content]) -> ArrayView<Content> { ArrayView(views: content) }
}
