extension Array where Element: Comparable {
    /// The median, the lower middle one for an even count, so that it is a figure one run
    /// had (the joins' and QtRO's join figures); `nil` for no element.
    var lowerMedian: Element? { isEmpty ? nil : sorted()[(count - 1) / 2] }
}
