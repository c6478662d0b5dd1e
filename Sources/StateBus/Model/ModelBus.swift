import IdentifiedCollections
import Logging
import Observation
import StateBusWire

/// A model's link to the bus: to the host that serves it, to the replica that mirrors it, or
/// to nothing (a detached model is a plain observable object, as in previews and tests).
///
/// Observable: a view that reads ``state`` or ``lastWriteError`` re-renders when they change.
@MainActor
public final class ModelBus: Observable {
    private enum Link {
        case detached
        case host(StateHost, object: String)
        case replica(Replica)
    }

    private var link = Link.detached
    /// The last value of each property known to agree with the source of truth.
    private var synced: [String: Value] = [:]
    private var apply: (([String: Value]) -> Set<String>)?
    private var repeatEdits: ((String, [ElementEdit]) -> Bool)?
    private var committed: ((Set<String>) -> Void)?
    private var observers: [Task<Void, Never>] = []
    private let registrar = ObservationRegistrar()
    private var _state = ConnectionState.live
    private var _lastWriteError: StateBusError?
    private var lastRejected: [PropertyChange]?
    /// The write id of the refusal ``lastWriteError`` shows: only a later write's acceptance
    /// clears it. Verdicts can arrive out of write order: an accepted write confirmed by its
    /// echo hears after a refusal the host answered at once in the same turn.
    private var lastRejectedWriteID: UInt64 = 0

    /// Creates a detached link; the macro makes one per model.
    public nonisolated init() {}

    /// Where the model stands: always `.live` on the host and for a detached model.
    public var state: ConnectionState {
        registrar.access(self, keyPath: \.state)
        return _state
    }

    /// The host's reason for refusing this process's last write, until the next accepted one
    /// or ``retryLastWrite()``: what the profile app's error view shows.
    public var lastWriteError: StateBusError? {
        registrar.access(self, keyPath: \.lastWriteError)
        return _lastWriteError
    }

    /// Sends the last refused write again (after the user corrected something elsewhere, or
    /// when the refusal was transient) and clears ``lastWriteError``.
    public func retryLastWrite() {
        guard let changes = lastRejected, case .replica(let replica) = link else { return }
        setLastWriteError(nil)
        lastRejected = nil
        track(replica.write(changes), changes: changes)
    }

    /// Clears ``lastWriteError`` without retrying.
    public func dismissWriteError() {
        setLastWriteError(nil)
        lastRejected = nil
    }

    private func setLastWriteError(_ error: StateBusError?) {
        registrar.withMutation(of: self, keyPath: \.lastWriteError) { _lastWriteError = error }
    }

    private func setState(_ state: ConnectionState) {
        guard state != _state else { return }
        registrar.withMutation(of: self, keyPath: \.state) { _state = state }
    }

    // MARK: Attaching

    func attach<Model: SharedModel>(_ model: Model, to host: StateHost) {
        let object = Model.objectName
        link = .host(host, object: object)
        apply = { [weak model] values in model?._$apply(values) ?? [] }
        repeatEdits = { [weak model] property, edits in model?._$repeatElementEdits(property, edits) ?? false }
        committed = { [weak model] names in model?.didCommit(names) }
        synced = model._$values()
        // Subscribed first: a change right after the host starts keeping them wakes the bus.
        let changes = host.changes(of: object).makeAsyncIterator()
        // From here on the host keeps what changed for this bus (``pullFollowed(taking:)``).
        let taken = applyWhole(host.follow(object))
        if !taken.isEmpty { committed?(taken) }
        observers.append(
            Task { [weak self] in
                var changes = changes
                while await changes.next() != nil {
                    guard let self else { return }
                    self.pullFollowed()
                }
            })
    }

    func attach<Model: SharedModel>(_ model: Model, to replica: Replica) {
        link = .replica(replica)
        apply = { [weak model] values in model?._$apply(values) ?? [] }
        repeatEdits = { [weak model] property, edits in model?._$repeatElementEdits(property, edits) ?? false }
        committed = nil
        let changes = replica.changes.makeAsyncIterator()
        let connection = replica.connectionChanges.makeAsyncIterator()
        synced = [:]
        // From here on the replica keeps what changed for this bus (``pullFollowed(taking:)``).
        // No post-commit hook on a view.
        _ = applyWhole(replica.follow())
        setState(replica.connectionState)
        observers.append(
            Task { [weak self] in
                var changes = changes
                while await changes.next() != nil {
                    guard let self else { return }
                    self.pullFollowed()
                }
            })
        observers.append(
            Task { [weak self] in
                var connection = connection
                while await connection.next() != nil {
                    guard let self else { return }
                    self.setState(replica.connectionState)
                }
                self?.setState(.closed)
            })
    }

    /// Stops following the host or replica (a replica is closed). The model keeps its values.
    ///
    /// Closing a replica that joined waits for its goodbye to leave, for up to
    /// ``ReplicaConfiguration/goodbyeLinger`` when its host does not take it (gone, or busy).
    public func detach() {
        for observer in observers { observer.cancel() }
        observers.removeAll()
        switch link {
        case .detached: break
        case .host(let host, let object): host.unfollow(object)
        case .replica(let replica):
            replica.unfollow()
            replica.close()
        }
        link = .detached
    }

    /// Brings what changed at the host or replica into the model: element edits repeated on
    /// the property (one element decoded, for a large keyed collection), other changes as
    /// whole values. An edit the property cannot repeat makes it take its whole value, asked
    /// for in a second round so that it fits the edits taken after it.
    /// - Parameter names: properties taken whole in any case.
    ///
    /// The host's model hears ``SharedModel/didCommit(_:)`` once, after every edit and value
    /// of the pull is in the model: a hook that reads a property sees all of what changed.
    private func pullFollowed(taking names: Set<String> = []) {
        var whole = names
        var changed = Set<String>()
        defer { if !changed.isEmpty { committed?(changed) } }
        repeat {
            let (edits, values): ([String: [ElementEdit]], [String: Value])
            switch link {
            case .detached: return
            case .host(let host, let object): (edits, values) = host.takeFollowed(object, whole: whole)
            case .replica(let replica): (edits, values) = replica.takeFollowed(whole: whole)
            }
            whole = []
            changed.formUnion(applyWhole(values))
            for (name, propertyEdits) in edits {
                if repeatElementEdits(propertyEdits, of: name) { changed.insert(name) } else { whole.insert(name) }
            }
        } while !whole.isEmpty
    }

    /// Repeats a property's element edits on its last synced value and on the model.
    /// - Returns: `false` when either could not: the property then has no synced value, so
    ///   its whole value applies next.
    private func repeatElementEdits(_ edits: [ElementEdit], of name: String) -> Bool {
        // Taken out of `synced`, the list has one holder and changes where it is.
        guard var value = synced.removeValue(forKey: name), let repeatEdits else { return false }
        for edit in edits where !value.applyElementEdit(edit) { return false }
        guard repeatEdits(name, edits) else { return false }
        synced[name] = value
        return true
    }

    /// Applies the values that differ from the last synced ones to the model.
    /// - Returns: the names the model took (for ``SharedModel/didCommit(_:)``).
    private func applyWhole(_ current: [String: Value]) -> Set<String> {
        var changed: [String: Value] = [:]
        for (name, value) in current where value != synced[name] {
            synced[name] = value
            changed[name] = value
        }
        guard !changed.isEmpty, let apply else { return [] }
        let applied = apply(changed)
        // A value the model could not take (it logged why) is not what the model holds: no
        // edit is repeated on it, and the next change brings the whole value again.
        for name in changed.keys where !applied.contains(name) { synced[name] = nil }
        return applied
    }

    // MARK: Actions

    /// Whether the model is a view's replica, where an action is a call to the host. Read by
    /// the code `@Action` generates; not used by hand.
    public var _$isReplica: Bool {
        if case .replica = link { return true }
        return false
    }

    /// Calls an action on the host and decodes its result (the code `@Action` generates on
    /// a view). Returns once the model holds every change the action made.
    public func _$call<Result: Decodable>(_ action: String, _ arguments: [Value], returning: Result.Type) async throws -> Result {
        let value = try await call(action, arguments)
        do {
            return try ValueDecoder().decode(Result.self, from: value)
        } catch {
            throw StateBusError(
                .typeMismatch,
                "the host's result of \(action) does not decode as \(Result.self) (\(value)): do the host and this view declare the action alike?")
        }
    }

    /// Calls an action that returns nothing on the host (the code `@Action` generates).
    public func _$call(_ action: String, _ arguments: [Value]) async throws {
        _ = try await call(action, arguments)
    }

    private func call(_ action: String, _ arguments: [Value]) async throws -> Value {
        guard case .replica(let replica) = link else {
            throw StateBusError(.closed, "the model is not a view's replica, so \(action) cannot be sent to a host")
        }
        let result = try await replica.call(action, arguments: arguments)
        // The replica holds the action's changes; bring them into the model before
        // returning, so the caller reads them at once.
        pullFollowed()
        return result
    }

    // MARK: Writing

    /// Called by the `@SharedModel` macro's generated code when a property's value does not
    /// encode to a ``Value``, or a value from the host does not decode as the property's
    /// type (a host and a view built from different declarations): the property keeps its
    /// current value, and the failure is logged with the object, the property and why.
    /// Not called by hand.
    public func _$codingFailed(_ property: String, of object: String, decoding: Bool, _ error: any Error) {
        let verb = decoding ? "decode the host's value of" : "encode"
        let message =
            "could not \(verb) \(object).\(property) (\(error)); the property keeps its current value. "
            + (decoding ? "Do the host and this view declare the property with the same type?" : "Use a type whose values fit a StateBus Value.")
        switch link {
        case .detached: Logger(label: "statebus.model").warning("\(message)")
        case .host(let host, _): host.logger.warning("\(message)")
        case .replica(let replica): replica.configuration.logger.warning("\(message)")
        }
    }

    /// Called by a synced property's setter: sends the change to the source of truth.
    ///
    /// Only the part that changed travels: setting `user` to a copy whose `email` alone
    /// differs writes the path `email`, so another view's concurrent edit of `username`
    /// survives. That is how `$model.user.email` bindings write one field.
    public func localChange<T: Encodable>(_ property: String, _ newValue: T) {
        guard let encoded = try? ValueEncoder().encode(newValue) else { return }
        let old = synced[property]
        synced[property] = encoded
        let changes: [PropertyChange]
        if let old, old == encoded {
            return
        } else if let old, let elements = old.elementChanges(to: encoded) {
            // A keyed collection (an IdentifiedArray): element by element, by id, so another
            // view's concurrent edit of another element survives.
            changes = elements.map { PropertyChange(property, $0.operation, at: $0.path, element: $0.value, position: $0.position) }
        } else if let old, let (path, part) = old.difference(to: encoded) {
            changes = [PropertyChange(property, at: path, to: part)]
        } else {
            changes = [PropertyChange(property, to: encoded)]
        }
        send(changes, of: property)
    }

    /// ``localChange(_:_:)`` with the value before, from the setter `@SharedModel` generates.
    public func localChange<T: Encodable>(_ property: String, _ newValue: T, old: T) {
        localChange(property, newValue)
    }

    /// ``localChange(_:_:)`` for a keyed collection: an edit of some elements' contents (a
    /// toggle, a rename) is found by comparing the elements and encodes only those, instead
    /// of encoding and comparing the whole collection; any other edit goes that way.
    public func localChange<ID: Encodable, Element: Encodable & Equatable>(
        _ property: String, _ newValue: IdentifiedArray<ID, Element>, old: IdentifiedArray<ID, Element>
    ) {
        guard let writes = ElementWrites(of: property, from: old, to: newValue) else { return localChange(property, newValue) }
        guard !writes.changes.isEmpty else { return }
        // Taken out of `synced`, the list has one holder and changes where it is. When an edit
        // does not fit it, the property has no synced value: the general way writes it whole.
        guard var value = synced.removeValue(forKey: property) else { return localChange(property, newValue) }
        for edit in writes.edits where !value.applyElementEdit(edit) { return localChange(property, newValue) }
        synced[property] = value
        send(writes.changes, of: property)
    }

    /// Sends a model's own changes of one property to the host or the replica.
    private func send(_ changes: [PropertyChange], of property: String) {
        switch link {
        case .detached:
            return
        case .host(let host, let object):
            // Taken whole next time, applied or refused: when applied the model holds it already
            // (equal to `synced`, so not decoded), and the edits the bus would be given were
            // made to a list it no longer holds.
            defer { host.followerChanged([property], of: object) }
            do {
                try host.apply(changes, to: object)
                committed?([property])
            } catch {
                setLastWriteError(error)
            }
        case .replica(let replica):
            let receipt = replica.write(changes)
            // The same at the replica, also for a write it refused (its queue full).
            replica.followerChanged([property])
            track(receipt, changes: changes)
        }
    }

    private func track(_ receipt: WriteReceipt, changes: [PropertyChange]) {
        let property = changes.first?.property
        Task { [weak self] in
            do {
                _ = try await receipt.accepted()
                guard let self else { return }
                if self._lastWriteError != nil, receipt.writeID > self.lastRejectedWriteID, self.lastRejected?.first?.property == property {
                    self.dismissWriteError()
                }
            } catch let error as StateBusError {
                // An earlier write's refusal that comes after a later one's is not the last.
                guard let self, receipt.writeID >= self.lastRejectedWriteID else { return }
                self.lastRejectedWriteID = receipt.writeID
                self.lastRejected = changes
                self.setLastWriteError(error)
                // A write the replica's full queue refused never showed there, so nothing
                // rolls it back on its own: take the replica's value back into the model.
                if error.code == .overloaded { self.pullFollowed(taking: Set(changes.map(\.property))) }
            } catch {}
        }
    }
}
