/// A binary min-heap: the least element at hand, an insertion or a removal
/// of the least in O(log n) comparisons. What ``InMemoryKeyValueStore``'s
/// retention drops first, the oldest version that is not a key's current
/// value, is found this way instead of by sorting every version at each write.
struct MinimumHeap<Element: Comparable> {
    private var elements: [Element] = []

    /// The least element, or nil when empty.
    var first: Element? { elements.first }
    /// How many elements it holds.
    var count: Int { elements.count }

    /// Adds `element`.
    mutating func insert(_ element: Element) {
        elements.append(element)
        var child = elements.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard elements[child] < elements[parent] else { break }
            elements.swapAt(child, parent)
            child = parent
        }
    }

    /// Removes and returns the least element, or nil when empty.
    mutating func removeFirst() -> Element? {
        guard !elements.isEmpty else { return nil }
        elements.swapAt(0, elements.count - 1)
        let least = elements.removeLast()
        var parent = 0
        while true {
            let left = 2 * parent + 1, right = left + 1
            var smallest = parent
            if left < elements.count && elements[left] < elements[smallest] { smallest = left }
            if right < elements.count && elements[right] < elements[smallest] { smallest = right }
            guard smallest != parent else { return least }
            elements.swapAt(parent, smallest)
            parent = smallest
        }
    }
}
