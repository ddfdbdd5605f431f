import StrainHelpers

/// What the contended collections hold: an `Int`, or a reference type like a
/// cancellable token (every copy in or out is a retain and a release).
protocol ContendedElement: Hashable, Sendable {
    init(id: Int)
    var id: Int { get }
}

extension Int: ContendedElement {
    init(id: Int) { self = id }
    var id: Int { self }
}

/// A cancellable-like token: a class, compared by identity of its id.
final class Token: ContendedElement {
    let id: Int
    init(id: Int) { self.id = id }
    static func == (lhs: Token, rhs: Token) -> Bool { lhs.id == rhs.id }
    func hash(into hasher: inout Hasher) { hasher.combine(id) }
}

/// The operations on a shared collection.
enum CollectionOperation: Sendable {
    case append(Int)
    case read(Int)
    case count
    case iterate
    case removeAll
    /// An empty critical section, taken exclusively: what the guard alone costs.
    case nothing
    /// An empty critical section taken as a reader.
    case peek
}

/// A collection under contention, with the count of elements `removeAll` took.
protocol ContendedCollection: GuardedValue where Operation == CollectionOperation {
    /// The ids of the elements now in the collection.
    var ids: [Int] { get }
    /// Elements removed by `removeAll` so far.
    var removed: Int { get }
    /// Whether the collection promises order: each worker's appends appear in
    /// the order it made them.
    static var keepsOrder: Bool { get }
}

extension ContendedCollection {
    static func isWrite(_ operation: CollectionOperation) -> Bool {
        switch operation {
        case .append, .removeAll, .nothing: true
        case .read, .count, .iterate, .peek: false
        }
    }
}

struct ArrayCollection<Element: ContendedElement>: ContendedCollection {
    static var keepsOrder: Bool { true }
    private var elements: [Element] = []
    private(set) var removed = 0

    func read(_ operation: CollectionOperation) -> Int {
        switch operation {
        case .read(let index): elements.isEmpty ? 0 : elements[index % elements.count].id
        case .count: elements.count
        case .iterate: elements.reduce(0) { $0 &+ $1.id }
        default: 0
        }
    }

    mutating func write(_ operation: CollectionOperation) {
        switch operation {
        case .append(let id): elements.append(Element(id: id))
        case .removeAll:
            removed += elements.count
            elements.removeAll(keepingCapacity: true)
        default: break
        }
    }

    var ids: [Int] { elements.map(\.id) }
}

struct DictionaryCollection<Element: ContendedElement>: ContendedCollection {
    static var keepsOrder: Bool { false }
    private var elements: [Int: Element] = [:]
    private(set) var removed = 0

    func read(_ operation: CollectionOperation) -> Int {
        switch operation {
        case .read(let key): elements[key]?.id ?? 0
        case .count: elements.count
        case .iterate: elements.values.reduce(0) { $0 &+ $1.id }
        default: 0
        }
    }

    mutating func write(_ operation: CollectionOperation) {
        switch operation {
        case .append(let id): elements[id] = Element(id: id)
        case .removeAll:
            removed += elements.count
            elements.removeAll(keepingCapacity: true)
        default: break
        }
    }

    var ids: [Int] { elements.values.map(\.id) }
}

struct SetCollection<Element: ContendedElement>: ContendedCollection {
    static var keepsOrder: Bool { false }
    private var elements: Set<Element> = []
    private(set) var removed = 0

    func read(_ operation: CollectionOperation) -> Int {
        switch operation {
        case .read(let id): elements.contains(Element(id: id)) ? id : 0
        case .count: elements.count
        case .iterate: elements.reduce(0) { $0 &+ $1.id }
        default: 0
        }
    }

    mutating func write(_ operation: CollectionOperation) {
        switch operation {
        case .append(let id): elements.insert(Element(id: id))
        case .removeAll:
            removed += elements.count
            elements.removeAll(keepingCapacity: true)
        default: break
        }
    }

    var ids: [Int] { elements.map(\.id) }
}

/// No collection: the guard's critical section is empty.
struct NoCollection: ContendedCollection {
    static var keepsOrder: Bool { false }
    func read(_ operation: CollectionOperation) -> Int { 0 }
    mutating func write(_ operation: CollectionOperation) {}
    var ids: [Int] { [] }
    var removed: Int { 0 }
}
