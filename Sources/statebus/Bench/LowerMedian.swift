extension Array {
    /// The element whose `key` is the median of the elements' keys, the lower middle one for
    /// an even count, so that it is a figure one run had (a throughput round by its slowest
    /// view); `nil` for no element.
    func lowerMedian<Key: Comparable>(by key: (Element) -> Key) -> Element? {
        isEmpty ? nil : sorted { key($0) < key($1) }[(count - 1) / 2]
    }
}

extension Array where Element: Comparable {
    /// The median, the lower middle one for an even count, so that it is a figure one run
    /// had (the joins' and QtRO's join figures); `nil` for no element.
    var lowerMedian: Element? { lowerMedian { $0 } }
}
