import Foundation
import StrainKit
import StrainWire

extension LockWaits {
    /// The verdict on a quiet program from its lock waits: `deadlocked` when threads
    /// wait in a cycle (each for a mutex the next holds), naming the threads and the
    /// mutexes, or when every thread waits on a lock with no timeout (nothing inside
    /// the program is left to wake one); nil otherwise. `place` names where a thread
    /// waits (its innermost frame outside libc), when a dump said.
    static func judge(threads: [ThreadState], silentSeconds: Double, readWord: (UInt64) -> UInt32?,
                      place: (Int) -> String?, object: (UInt64) -> String? = { _ in nil }) -> (verdict: ExecStallVerdict, cycle: WaitCycle?)? {
        let locks = LockWaits(threads: threads, readWord: readWord)
        let quiet = DurationText.format(silentSeconds)
        func thread(_ tid: Int) -> String { Self.name(tid, threads: threads, place: place) }
        if let cycle = locks.waitCycle(threads: threads, place: place, object: object) {
            return (cycleVerdict(cycle, silentSeconds: silentSeconds), cycle)
        }
        if !threads.isEmpty, locks.waits.count == threads.count {
            let message = "no CPU time for \(quiet); every thread (\(threads.count)) waits on a lock or condition with no timeout, so none is left to wake another"
                + " (the holders could not be read from the locks: \(threads.map { thread($0.tid) }.joined(separator: ", ")))"
            return (ExecStallVerdict(kind: .deadlocked, message: message), nil)
        }
        return nil
    }

    /// `deadlocked` for threads that wait on each other's mutexes: no signal or other process breaks the cycle.
    static func cycleVerdict(_ cycle: WaitCycle, silentSeconds: Double, pool: ExecStallVerdict.PoolCount? = nil) -> ExecStallVerdict {
        let message = "no CPU time for \(DurationText.format(silentSeconds)); \(cycle.links.count) threads wait on each other's mutexes with no timeout: " + cycle.description
        return ExecStallVerdict(kind: .deadlocked, message: message, pool: pool)
    }
}
