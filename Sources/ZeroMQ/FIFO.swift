/// A first-in first-out queue with amortised O(1) push and pop, without a dependency.
struct FIFO<Element> {
    private var storage: [Element?] = []
    private var head = 0

    /// The number of queued elements.
    var count: Int { storage.count - head }
    /// Whether nothing is queued.
    var isEmpty: Bool { head == storage.count }

    /// Appends at the tail.
    mutating func push(_ element: Element) { storage.append(element) }

    /// The element at the head, without removing it.
    var first: Element? { isEmpty ? nil : storage[head] }

    /// Removes and returns the element at the head.
    mutating func pop() -> Element? {
        guard head < storage.count else { return nil }
        let element = storage[head]
        storage[head] = nil  // release the element now, not at the next compaction
        head += 1
        // Compact once the consumed prefix dominates, so memory does not grow forever.
        if head >= 1024 && head * 2 >= storage.count {
            storage.removeFirst(head)
            head = 0
        }
        return element
    }

    /// Removes every element and returns them in order.
    mutating func removeAll() -> [Element] {
        let rest = storage[head...].map { $0! }
        storage.removeAll()
        head = 0
        return rest
    }
}
