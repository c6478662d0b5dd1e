/// A two-way connection to a value owned elsewhere, as in SwiftUI: read and write
/// ``wrappedValue``; pass `$binding` to a child view; reach into fields with dynamic member
/// lookup (`$model.user.username` is a `Binding<String>`).
///
/// A binding made from a shared model writes through the model: on the host the change
/// applies locally, on a replica it goes to the host. A binding to one field of a struct
/// writes only that field's path, so another view's concurrent edit of a sibling field
/// survives.
///
/// As in SwiftUI it is also a property wrapper: a child view declares
/// `@Binding var text: String`, reads and assigns `text`, and its parent passes `$model.text`.
@MainActor
@propertyWrapper
@dynamicMemberLookup
public struct Binding<Value> {
    private let read: () -> Value
    private let write: (Value) -> Void

    /// Creates a binding from a getter and a setter.
    /// - Parameters:
    ///   - get: reads the current value.
    ///   - set: stores a new value.
    public init(get: @escaping () -> Value, set: @escaping (Value) -> Void) {
        read = get
        write = set
    }

    /// A binding that always reads `value` and ignores writes, for previews and tests.
    public static func constant(_ value: Value) -> Binding<Value> {
        Binding(get: { value }, set: { _ in })
    }

    /// The value, read and written through the binding.
    public var wrappedValue: Value {
        get { read() }
        nonmutating set { write(newValue) }
    }

    /// The binding itself, so `$binding` passes it on.
    public var projectedValue: Binding<Value> { self }

    /// A binding to a part of the value: writing it writes the whole value with that part
    /// changed, which a shared model turns into a path write of just that part.
    public subscript<Part>(dynamicMember keyPath: WritableKeyPath<Value, Part>) -> Binding<Part> {
        let read = self.read
        let write = self.write
        return Binding<Part>(
            get: { read()[keyPath: keyPath] },
            set: { part in
                var whole = read()
                whole[keyPath: keyPath] = part
                write(whole)
            }
        )
    }
}

/// Makes bindings to any property of a model object, as SwiftUI's `@Bindable` does:
/// `@Bindable var profile: ProfileModel` gives `$profile.user.email`.
@MainActor
@propertyWrapper
@dynamicMemberLookup
public struct Bindable<Model: AnyObject> {
    /// The model.
    public var wrappedValue: Model

    /// Wraps a model.
    public init(wrappedValue: Model) { self.wrappedValue = wrappedValue }

    /// Wraps a model (for `Bindable(model)` outside a property declaration).
    public init(_ model: Model) { wrappedValue = model }

    /// `self`, so `$model.property` reaches the dynamic member subscript.
    public var projectedValue: Bindable<Model> { self }

    /// A binding to one property of the model.
    public subscript<Value>(dynamicMember keyPath: ReferenceWritableKeyPath<Model, Value>) -> Binding<Value> {
        let model = wrappedValue
        return Binding(get: { model[keyPath: keyPath] }, set: { model[keyPath: keyPath] = $0 })
    }
}
