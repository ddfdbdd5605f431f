import Foundation
import Synchronization

/// Counts events from many threads. `Tally` forgets its lock (the bug a race
/// expectation should catch); the guarded ones take an `NSLock` or Swift's `Mutex`.
public final class Tally: @unchecked Sendable {  // @unchecked Sendable: deliberately not safe; the fixture's race expectation catches it
    public private(set) var count = 0
    public init() {}
    public func add() { count += 1 }
}

public final class LockedTally: @unchecked Sendable {  // @unchecked Sendable: `count` is read and written under `lock` only
    private let lock = NSLock()
    private var value = 0
    public init() {}
    public func add() { lock.withLock { value += 1 } }
    public var count: Int { lock.withLock { value } }
}

public final class MutexTally: Sendable {
    private let value = Mutex(0)
    public init() {}
    public func add() { value.withLock { $0 += 1 } }
    public var count: Int { value.withLock { $0 } }
}
