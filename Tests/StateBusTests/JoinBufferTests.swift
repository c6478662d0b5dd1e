import Testing

@testable import StateBus

/// `JoinBuffer`, what a view and a relay's copy keep while a snapshot is on its way: in
/// order, bounded in bytes, and emptied whole past the bound (what it dropped may be newer
/// than the snapshot, so the join starts again).
@Suite("The join buffer of views and relays")
struct JoinBufferTests {
    @Test("keeps what fits in order; past the bound it drops everything and says so")
    func boundDropsEverything() {
        var buffer = JoinBuffer<String>(maxBytes: 10)
        let tookA = buffer.append("a", size: 4)
        let tookB = buffer.append("b", size: 6)
        #expect(tookA && tookB)
        #expect(buffer.elements == ["a", "b"] && buffer.bytes == 10)
        let tookC = buffer.append("c", size: 1)
        #expect(!tookC, "11 bytes passed a 10-byte bound")
        #expect(buffer.elements.isEmpty && buffer.bytes == 0)
        let tookD = buffer.append("d", size: 10)
        #expect(tookD, "an emptied buffer takes what fits again")
        let taken = buffer.take()
        #expect(taken == ["d"])
        #expect(buffer.elements.isEmpty && buffer.bytes == 0)
    }

    @Test("a view's buffer of publications keeps the one that revealed a gap, counted in its bytes")
    func publicationKeptOnReset() {
        var buffer = JoinBuffer<[UInt8]>(maxBytes: 8)
        let took = buffer.append([1, 2, 3], size: 3)
        #expect(took)
        buffer.reset(keeping: [9, 9, 9, 9, 9], size: 5)
        #expect(buffer.elements == [[9, 9, 9, 9, 9]] && buffer.bytes == 5)
        let tookMore = buffer.append([1, 2, 3, 4], size: 4)
        #expect(!tookMore, "5 + 4 bytes passed an 8-byte bound")
        buffer.reset()
        #expect(buffer.elements.isEmpty && buffer.bytes == 0)
    }
}
