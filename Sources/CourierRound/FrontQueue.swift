/// Items in arrival order: a subscriber's in the feed, names read ahead.
/// Taken from the front by index, in place: `removeFirst` on a copy of the
/// array cost a copy of up to `DeliveryFeed.limit` items per take. What
/// was taken is dropped once it is half the array: a queue that the pass
/// keeps topped up never empties, and would keep every item it ever held.
struct FrontQueue<Element> {
    private var items: [Element] = []
    private var head = 0
    var count: Int { items.count - head }
    /// Items held, taken ones not yet dropped included.
    var stored: Int { items.count }

    mutating func append(_ item: Element) { items.append(item) }

    mutating func take() -> Element? {
        guard head < items.count else { return nil }
        let item = items[head]
        head += 1
        if head == items.count {
            items.removeAll(keepingCapacity: true)
            head = 0
        } else if head >= 64 && head * 2 >= items.count {
            items.removeFirst(head)
            head = 0
        }
        return item
    }

    func peek() -> Element? { head < items.count ? items[head] : nil }

    /// The items not taken, in order.
    var waiting: [Element] { Array(items[head...]) }

    /// Back at the front, as the next to take.
    mutating func putFront(_ item: Element) {
        if head > 0 {
            head -= 1
            items[head] = item
        } else {
            items.insert(item, at: 0)
        }
    }
}
