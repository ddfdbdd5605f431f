import Dispatch
import Foundation

/// Two accounts, each behind its own lock: a transfer takes the payer's lock, then
/// the payee's. Two transfers in opposite directions at once can each hold one
/// lock and wait for the other, forever (the bug a stall expectation should catch).
public final class Ledger: @unchecked Sendable {  // @unchecked Sendable: every balance is read and written under its account's lock
    private let locks = [NSLock(), NSLock()]
    private var balances = [100, 100]

    public init() {}

    /// Moves `amount` from account `from` to the other one. `meet`, when given, is
    /// called while the payer's lock is held (a test's way to make two transfers overlap).
    public func transfer(_ amount: Int, from: Int, meet: (@Sendable () -> Void)? = nil) {
        let to = 1 - from
        locks[from].lock()
        meet?()
        locks[to].lock()
        balances[from] -= amount
        balances[to] += amount
        locks[to].unlock()
        locks[from].unlock()
    }

    /// The same, taking the two locks in one fixed order whatever the direction (the fix).
    public func transferInOrder(_ amount: Int, from: Int) {
        let to = 1 - from
        locks[0].lock()
        locks[1].lock()
        balances[from] -= amount
        balances[to] += amount
        locks[1].unlock()
        locks[0].unlock()
    }

    public var total: Int {
        locks[0].lock(); locks[1].lock()
        defer { locks[1].unlock(); locks[0].unlock() }
        return balances[0] + balances[1]
    }
}

/// Runs `count` lookups on the global queue, each waiting for a reply that a last
/// item, queued after them, sends: fine while the pool has a thread for the last
/// one, starved once every thread of the pool waits (the bug in `blocking`).
public func fetchAll(_ count: Int, blocking: Bool) {
    let replies = DispatchSemaphore(value: 0)
    let done = DispatchGroup()
    for _ in 0..<count {
        DispatchQueue.global().async(group: done) {
            if blocking { replies.wait() }
        }
    }
    DispatchQueue.global().async(group: done) {
        if blocking { for _ in 0..<count { replies.signal() } }
    }
    done.wait()
}
