import ArgumentParser

/// The objects `statebus host` serves, read from its `--object` and `--property` options in
/// command-line order: each `--property` belongs to the `--object` before it.
///
/// ArgumentParser gives each option's values in order but not how two options interleave,
/// so these two are read from the command's unrecognised arguments, which it keeps in
/// order, by the rules here. Anything else among them is refused, so a mistyped option
/// still fails as it does on other commands.
struct ObjectDeclarations: Equatable {
    /// One object and its property specifications (`NAME:KIND[=DEFAULT]`), in order.
    struct Object: Equatable {
        /// The object's name.
        var name: String
        /// Its properties as written on the command line.
        var properties: [String]
    }

    /// The objects, in the order they are declared.
    private(set) var objects: [Object] = []

    /// Reads the declarations.
    /// - Parameters:
    ///   - arguments: the command's unrecognised arguments, in order: `--object NAME`,
    ///     `--property SPEC`, either also as `--object=NAME`, `--property=SPEC`.
    ///   - injectedObject: the object the environment names (the launcher's
    ///     `STATEBUS_OBJECT`), which properties before any `--object` belong to.
    /// - Throws: `ValidationError` saying what is wrong: an option without its value, a
    ///   `--property` before any `--object` with no object injected, an object declared
    ///   twice, anything else among the arguments, or no object at all.
    init(_ arguments: [String], injectedObject: String?) throws {
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            let (option, attached) = Self.split(argument)
            let value: String
            if let attached {
                value = attached
            } else if option == "--object" || option == "--property" {
                guard index < arguments.count, !arguments[index].hasPrefix("--") else {
                    throw ValidationError(
                        option == "--object"
                            ? "--object needs a name, for example --object Counter"
                            : "--property needs NAME:KIND[=DEFAULT], for example --property count:int=0")
                }
                value = arguments[index]
                index += 1
            } else {
                value = ""
            }
            switch option {
            case "--object":
                try declare(object: value)
            case "--property":
                try declare(property: value, injectedObject: injectedObject)
            default:
                throw ValidationError(
                    argument.hasPrefix("-")
                        ? "unknown option '\(argument)'; see statebus host --help"
                        : "unexpected argument '\(argument)'; declare objects with --object NAME and their properties with --property NAME:KIND[=DEFAULT]"
                )
            }
        }
        guard !objects.isEmpty else {
            throw ValidationError(
                "declare at least one object: --object NAME, each followed by its --property NAME:KIND[=DEFAULT] options, for example --object Counter --property count:int=0"
            )
        }
    }

    /// `--name=value` as the option and its value; any other argument as itself and `nil`.
    private static func split(_ argument: String) -> (option: String, value: String?) {
        guard argument.hasPrefix("--"), let equals = argument.firstIndex(of: "=") else { return (argument, nil) }
        return (String(argument[..<equals]), String(argument[argument.index(after: equals)...]))
    }

    private mutating func declare(object name: String) throws {
        guard !name.isEmpty else { throw ValidationError("--object needs a name, for example --object Counter") }
        guard !objects.contains(where: { $0.name == name }) else {
            throw ValidationError("--object '\(name)' is declared twice; declare each object once, followed by all of its --property options")
        }
        objects.append(Object(name: name, properties: []))
    }

    private mutating func declare(property: String, injectedObject: String?) throws {
        if objects.isEmpty {
            // A launch file names the object in the environment and passes only properties.
            guard let injectedObject, !injectedObject.isEmpty else {
                throw ValidationError(
                    "--property '\(property)' comes before any --object; each --property belongs to the --object before it, for example --object Counter --property count:int=0 (or set STATEBUS_OBJECT)"
                )
            }
            objects.append(Object(name: injectedObject, properties: []))
        }
        objects[objects.count - 1].properties.append(property)
    }
}
