import IdentifiedCollections
import StateBus
import StateBusTerminalUI

/// One to-do item: an element of the to-do list's keyed collection, addressed by its id.
public struct Todo: Codable, Sendable, Equatable, Identifiable {
    /// Unique in the list; a view that adds an item makes one of its own (`<node>-<n>`).
    public var id: String
    /// What to do.
    public var title: String
    /// Whether it is done.
    public var done: Bool

    /// Creates an item.
    public init(id: String, title: String, done: Bool = false) {
        self.id = id
        self.title = title
        self.done = done
    }
}

/// The to-do list the `ForEach` of every SwiftUI tutorial shows, shared across processes:
/// `todos` is a keyed collection, so each view's insert, edit, move or removal of one item
/// travels as that element's operation, and two views editing different items both keep
/// their edit. `clearCompleted()` and `add(_:)` are host actions.
@MainActor @SharedModel("TodoList")
public final class TodoList {
    /// The items, in order. A title may not be blank (checked on each item written).
    @ValidateElement({ (todo: Todo) in
        todo.title.allSatisfy(\.isWhitespace) ? "to-do \(todo.id) needs a title that is not blank" : nil
    })
    public var todos: IdentifiedArrayOf<Todo> = [
        Todo(id: "t1", title: "buy milk"), Todo(id: "t2", title: "write the report"), Todo(id: "t3", title: "call the plumber")
    ]

    /// The number of the next id the host gives (`add(_:)`); only the host changes it.
    @HostOnly public var nextNumber: Int = 4

    /// Removes every done item on the host; returns how many went.
    @Action public func clearCompleted() async throws -> Int {
        let before = todos.count
        todos.removeAll { $0.done }
        return before - todos.count
    }

    /// Appends an item with an id the host gives; returns the id.
    @Action public func add(_ title: String) async throws -> String {
        guard !title.allSatisfy(\.isWhitespace) else { throw TodoError.blankTitle }
        let id = "t\(nextNumber)"
        nextNumber += 1
        todos.append(Todo(id: id, title: title))
        return id
    }

    /// How many items are not done.
    public var openCount: Int { todos.filter { !$0.done }.count }
}

/// Why the to-do list's host refused an action.
public enum TodoError: Error, CustomStringConvertible {
    /// ``TodoList/add(_:)`` was given a blank title.
    case blankTitle

    /// What was wrong and what to do.
    public var description: String {
        switch self {
        case .blankTitle: "a to-do needs a title that is not blank"
        }
    }
}

/// What a to-do view node shows.
public enum TodoScreen: String, CaseIterable, Sendable {
    /// Every item with its checkbox, in order.
    case list
    /// One item (`--item ID`): its title and whether it is done.
    case editor
    /// The number of open items.
    case counter
}

/// The list: one line per item, `ForEach` over the items by identity.
struct TodoListView: View {
    @EnvironmentObject var list: TodoList

    var body: some View {
        VStack {
            Text("To-do (\(list.todos.count)):")
            ForEach(list.todos) { todo in
                Text("  [\(todo.done ? "x" : " ")] \(todo.id) \(todo.title)")
            }
        }
    }
}

/// An editor bound to one item.
struct TodoEditorView: View {
    let item: String
    @EnvironmentObject var list: TodoList

    var body: some View {
        VStack {
            if let todo = list.todos[id: item] {
                Text("Editing \(todo.id): \(todo.title) [\(todo.done ? "done" : "open")]")
            } else {
                Text("Editing \(item): removed")
            }
            if let error = list.connection.lastWriteError { Text("Error: \(error.message)") }
        }
    }
}

/// The counter of open items.
struct TodoCounterView: View {
    @EnvironmentObject var list: TodoList

    var body: some View {
        Text("Open items: \(list.openCount)")
    }
}

/// The screen a to-do node shows.
struct TodoScreenView: View {
    let screen: TodoScreen
    let item: String

    var body: some View {
        switch screen {
        case .list: TodoListView()
        case .editor: TodoEditorView(item: item)
        case .counter: TodoCounterView()
        }
    }
}
