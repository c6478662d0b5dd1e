import StateBusWire

// Snapshots: an object's state as one or more replies, at the sequence it reflects. Version 1
// sends chunks of named `PropertyState`s; version 2 sends a few large parts, values column by
// column in index order, encoded straight from the store's arrays.

extension HostServer {
    /// Answers a snapshot request in the requester's version.
    func sendSnapshot(of object: String, to requester: Requester) {
        guard let index = state.index(of: object) else {
            reply(to: requester, error: StateBusError(.unknownObject, "this host serves no object '\(object)'", object: object))
            return
        }
        // A copy of the store (its arrays are shared, not copied) is encoded outside the lock.
        let store = state.inner.withLock { $0.stores[index] }
        counters.snapshotsServed.add(1, ordering: .relaxed)
        if requester.version == StateBusProtocol.version1 {
            sendChunks(of: store, to: requester)
        } else {
            sendParts(of: store, index: index, to: requester)
        }
    }

    /// Version 2: parts whose whole reply is at most ``HostLimits/maxPublicationBytes`` (a
    /// single larger property travels alone).
    private func sendParts(of store: ObjectStore, index: Int, to requester: Requester) {
        let limit = max(1, configuration.limits.maxPublicationBytes)
        var part = 0
        var property = 0
        let count = store.values.count
        repeat {
            partEncoder.removeAll()
            while property < count,
                partEncoder.count == 0 || partEncoder.replySizeBound(appending: store.sizes[property], requestID: requester.requestID) <= limit
            {
                partEncoder.append(property: property, value: store.values[property], version: store.versions[property])
                property += 1
            }
            let bytes = partEncoder.reply(
                requestID: requester.requestID, object: index, epoch: state.epoch, sequence: store.sequence, part: part, last: property == count)
            // Parts the socket will not take now wait in the client's backlog, in order; a
            // client that has gone gets no more. A view too slow for its snapshot asks again.
            if !send(bytes, to: requester.identity), !clients.isBacklogged(requester.identity) { return }
            part += 1
        } while property < count
    }

    /// Version 1: chunks of ``HostConfiguration/snapshotChunkSize`` named properties.
    private func sendChunks(of store: ObjectStore, to requester: Requester) {
        let count = store.values.count
        let chunkSize = max(1, configuration.snapshotChunkSize)
        var index = 0
        var start = 0
        repeat {
            let end = min(count, start + chunkSize)
            let chunk = HostReply.SnapshotChunk(
                object: store.definition.name, epoch: state.epoch, sequence: store.sequence, index: index, last: end == count,
                properties: (start..<end).map { (store.definition.properties[$0].name, store.values[$0], store.versions[$0]) })
            if !send(.snapshotChunk(chunk), to: requester), !clients.isBacklogged(requester.identity) { return }
            index += 1
            start = end
        } while start < count
    }
}
