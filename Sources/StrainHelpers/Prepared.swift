import Synchronization

/// A value built in `prepare` and handed to the work on another thread.
///
/// `@unchecked Sendable`: the value is fully built before the workload exists,
/// and the work only reads it (archiving and walking a graph do not mutate
/// it). Wrap only values the workload does not change, such as Foundation
/// object graphs, which are not `Sendable`.
public struct Prepared<Value>: @unchecked Sendable {
    /// The value, read-only from here on.
    public let value: Value
    /// Wraps `value`, built and no longer changed.
    public init(_ value: Value) { self.value = value }
}

/// A counter many threads add to without a lock.
public final class AtomicCounter: Sendable {
    private let count = Atomic<Int>(0)

    /// A counter at 0.
    public init() {}

    /// Adds one.
    public func add() { count.add(1, ordering: .relaxed) }

    /// The count now.
    public var value: Int { count.load(ordering: .relaxed) }
}
