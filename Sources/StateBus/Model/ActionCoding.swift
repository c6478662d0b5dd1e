import StateBusWire

// What the code the `@Action` and `@SharedModel` macros generate calls: argument and result
// coding with errors that name the action and parameter. Not called by hand.

/// Decodes argument `index` of a call as the parameter's type (on the host).
/// - Throws: `StateBusError` `typeMismatch` naming the action and parameter.
public func _$actionArgument<T: Decodable>(_ type: T.Type, _ arguments: [Value], _ index: Int, action: String, parameter: String) throws -> T {
    guard index < arguments.count else {
        throw StateBusError(.unknownAction, "\(action) takes more arguments than the call has: '\(parameter)' is missing")
    }
    do {
        return try ValueDecoder().decode(T.self, from: arguments[index])
    } catch {
        throw StateBusError(.typeMismatch, "argument '\(parameter)' of \(action) should be a \(T.self), got \(arguments[index]): \(error)")
    }
}

/// Encodes an argument of a call (on a view).
/// - Throws: `StateBusError` `typeMismatch` when the value does not encode.
public func _$actionArgumentValue<T: Encodable>(_ value: T, action: String) throws -> Value {
    do {
        return try ValueEncoder().encode(value)
    } catch {
        throw StateBusError(.typeMismatch, "an argument of \(action) does not encode as a StateBus value: \(error)")
    }
}

/// Encodes an action's result (on the host).
/// - Throws: `StateBusError` `typeMismatch` when the result does not encode.
public func _$actionResult<T: Encodable>(_ value: T, action: String) throws -> Value {
    do {
        return try ValueEncoder().encode(value)
    } catch {
        throw StateBusError(.typeMismatch, "the result of \(action) does not encode as a StateBus value: \(error)")
    }
}
