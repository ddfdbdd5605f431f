import Dispatch
import Foundation
import Synchronization

/// Holds blocked work items until it opens, or until their hold time runs out.
final class Gate: Sendable {
    private let semaphore = DispatchSemaphore(value: 0)
    private let isOpen = Atomic<Bool>(false)
    private let waiting = Atomic<Int>(0)

    /// Blocks until the gate opens or `holdMilliseconds` pass; 0 waits with no timeout.
    func pass(holdMilliseconds: Int) {
        guard !isOpen.load(ordering: .acquiring) else { return }
        waiting.add(1, ordering: .relaxed)
        if holdMilliseconds == 0 {
            semaphore.wait()
        } else {
            _ = semaphore.wait(timeout: .now() + .milliseconds(holdMilliseconds))
        }
    }

    /// Lets every item through, now and later.
    func open(releasing count: Int) {
        isOpen.store(true, ordering: .releasing)
        for _ in 0..<count { semaphore.signal() }
    }
}

/// Counts events and lets any number of threads wait, each with its own
/// deadline, until the count reaches a number.
final class Countdown: @unchecked Sendable {
    private let condition = NSCondition()
    private var count = 0  // guarded by `condition`

    func add() {
        condition.lock()
        count += 1
        condition.broadcast()
        condition.unlock()
    }

    var value: Int {
        condition.lock()
        defer { condition.unlock() }
        return count
    }

    /// Waits until the count reaches `target`; false if `seconds` passed first
    /// (nil seconds: no deadline).
    @discardableResult
    func wait(for target: Int, seconds: Double?) -> Bool {
        let deadline = seconds.map { Date(timeIntervalSinceNow: $0) }
        condition.lock()
        defer { condition.unlock() }
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

/// When something happened, on the monotonic clock shared with the harness.
final class Stamp: Sendable {
    private let nanoseconds = Atomic<UInt64>(0)

    func set() { nanoseconds.store(DispatchTime.now().uptimeNanoseconds, ordering: .releasing) }

    /// Waits, a millisecond at a time, until it is set or `milliseconds` pass.
    /// A timed wait: a thread waiting here never looks deadlocked to the watchdog.
    func wait(milliseconds: Int) {
        let poll = DispatchSemaphore(value: 0)
        let deadline = DispatchTime.now() + .milliseconds(milliseconds)
        while value == nil && DispatchTime.now() < deadline {
            _ = poll.wait(timeout: .now() + .milliseconds(1))
        }
    }
    var value: UInt64? {
        let value = nanoseconds.load(ordering: .acquiring)
        return value == 0 ? nil : value
    }
}
