import Dispatch
import Foundation
import StrainKit
import Synchronization

/// Holds blocked work items until it opens, or until their hold time runs out:
/// the flood of a starvation scenario waits here.
public final class ReleaseGate: Sendable {
    private let semaphore = DispatchSemaphore(value: 0)
    private let isOpen = Atomic<Bool>(false)
    private let waiting = Atomic<Int>(0)

    /// A closed gate.
    public init() {}

    /// Blocks until the gate opens or `holdMilliseconds` pass; 0 waits with no timeout.
    public func pass(holdMilliseconds: Int) {
        guard !isOpen.load(ordering: .acquiring) else { return }
        waiting.add(1, ordering: .relaxed)
        if holdMilliseconds == 0 {
            semaphore.wait()
        } else {
            _ = semaphore.wait(timeout: .now() + .milliseconds(holdMilliseconds))
        }
    }

    /// Lets every item through, now and later; `count` wakes that many waiting now.
    public func open(releasing count: Int) {
        isOpen.store(true, ordering: .releasing)
        for _ in 0..<count { semaphore.signal() }
    }
}

/// Counts events and lets any number of threads wait, each with its own
/// deadline, until the count reaches a number.
///
/// `@unchecked Sendable`: `count` is read and written only while `condition`
/// is locked (inside `withLock`), which also orders the waits.
public final class Countdown: @unchecked Sendable {
    private let condition = NSCondition()
    private var count = 0  // guarded by `condition`

    /// A countdown at 0.
    public init() {}

    /// Counts one event and wakes the waiters.
    public func add() {
        condition.withLock {
            count += 1
            condition.broadcast()
        }
    }

    /// The events counted so far.
    public var value: Int {
        condition.withLock { count }
    }

    /// Waits until the count reaches `target`; false if `seconds` passed first
    /// (nil seconds: no deadline).
    @discardableResult
    public func wait(for target: Int, seconds: Double?) -> Bool {
        let deadline = seconds.map { Date(timeIntervalSinceNow: $0) }
        return condition.withLock {
            while count < target {
                if let deadline {
                    if !condition.wait(until: deadline) { return count >= target }
                } else {
                    condition.wait()
                }
            }
            return true
        }
    }
}

/// When something happened, on `MonotonicClock` (StrainKit), set once and waited for.
public final class EventStamp: Sendable {
    private let nanoseconds = Atomic<UInt64>(0)

    /// A stamp not yet set.
    public init() {}

    /// Stamps now.
    public func set() { nanoseconds.store(MonotonicClock.nanoseconds, ordering: .releasing) }

    /// Waits, a millisecond at a time, until it is set or `milliseconds` pass.
    /// A timed wait: a thread waiting here never looks deadlocked to the watchdog.
    public func wait(milliseconds: Int) {
        let poll = DispatchSemaphore(value: 0)
        let deadline = DispatchTime.now() + .milliseconds(milliseconds)
        while value == nil && DispatchTime.now() < deadline {
            _ = poll.wait(timeout: .now() + .milliseconds(1))
        }
    }

    /// The `MonotonicClock` (StrainKit) reading when it was set; nil until then.
    public var value: UInt64? {
        let value = nanoseconds.load(ordering: .acquiring)
        return value == 0 ? nil : value
    }
}
