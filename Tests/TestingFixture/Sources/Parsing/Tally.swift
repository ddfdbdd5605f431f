import Foundation

/// Counts events from many threads. `Tally` forgets its lock (the bug a race
/// expectation should catch); `LockedTally` takes an `NSLock`.
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
