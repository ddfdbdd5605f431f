import Foundation
import StrainKit
import StrainWire

extension LockWaits {
    /// The verdict on a quiet program from its lock waits: `deadlocked` when threads
    /// wait in a cycle (each for a mutex the next holds), naming the threads and the
    /// mutexes, or when every thread waits on a lock with no timeout or reads a pipe only
    /// the program's tree can write to (`readsOwnPipe`: nothing inside the program is left
    /// to wake one or to write); nil otherwise. `place` names where a thread waits (its
    /// innermost frame outside libc), when a dump said.
    static func judge(threads: [ThreadState], silentSeconds: Double, readWord: (UInt64) -> UInt32?,
                      place: (Int) -> String?, object: (UInt64) -> String? = { _ in nil },
                      readsOwnPipe: (ThreadState) -> Bool = { _ in false }) -> (verdict: ExecStallVerdict, cycle: WaitCycle?)? {
        let locks = LockWaits(threads: threads, readWord: readWord)
        let quiet = DurationText.format(silentSeconds)
        func thread(_ tid: Int) -> String { Self.name(tid, threads: threads, place: place) }
        if let cycle = locks.waitCycle(threads: threads, place: place, object: object) {
            return (cycleVerdict(cycle, silentSeconds: silentSeconds), cycle)
        }
        if !threads.isEmpty, locks.waits.count == threads.count {
            // What the locks say of each: a mutex the thread holds itself, or another's; the
            // rest, unread (a self-locked mutex and a mutex held by a thread waiting on a
            // read-write lock were all "could not be read": re-trial 33m, F4).
            var known: [String] = []
            var unread: [String] = []
            for state in threads {
                let wait = locks.waits[state.tid]
                if wait?.heldBySelf == true {
                    known.append("\(thread(state.tid)) waits for a mutex it holds itself (locked a second time)")
                } else if let holder = wait?.holder {
                    known.append("\(thread(state.tid)) waits for a mutex thread \(holder) holds")
                } else {
                    unread.append(thread(state.tid))
                }
            }
            let unreadText = unread.isEmpty ? [] : ["the holders could not be read from the locks: \(unread.joined(separator: ", "))"]
            let message = "no CPU time for \(quiet); every thread (\(threads.count)) waits on a lock or condition with no timeout, so none is left to wake another"
                + " (\((known + unreadText).joined(separator: "; ")))"
            return (ExecStallVerdict(kind: .deadlocked, message: message), nil)
        }
        // A read of a pipe whose write end only the tree holds, beside locks (re-trial 33k, finding 4: a
        // thread reading its own pipe got no verdict): no thread of it is left to write. A handler of its
        // own that could (the self-pipe trick) or a live process of the tree is the caller's way out.
        let reading = threads.filter { locks.waits[$0.tid] == nil && readsOwnPipe($0) }
        if !reading.isEmpty, locks.waits.count + reading.count == threads.count {
            let locked = locks.waits.isEmpty ? "" : "; the other\(locks.waits.count == 1 ? "" : "s") wait\(locks.waits.count == 1 ? "s" : "") on a lock or condition with no timeout"
            let message = "no CPU time for \(quiet); \(reading.map { thread($0.tid) }.joined(separator: ", ")) read\(reading.count == 1 ? "s" : "") a pipe that only the program's own processes can write to\(locked)"
                + Self.noWriterLeft
            return (ExecStallVerdict(kind: .deadlocked, message: message), nil)
        }
        return nil
    }

    /// How a read of the tree's own pipe ends its `deadlocked` message; left out when something outside can still write.
    static let noWriterLeft = ", so none is left to write to it"

    /// `deadlocked` for threads that wait on each other's mutexes: no signal or other process breaks the
    /// cycle. `busy` when another thread ran meanwhile: the time is the cycle's, not a quiet program's.
    static func cycleVerdict(_ cycle: WaitCycle, silentSeconds: Double, pool: ExecStallVerdict.PoolCount? = nil, busy: Bool = false) -> ExecStallVerdict {
        let waits = "\(cycle.links.count) threads wait on each other's mutexes with no timeout: " + cycle.description
        let message = busy ? "the same wait cycle for \(DurationText.format(silentSeconds)) while another thread ran; " + waits
            : "no CPU time for \(DurationText.format(silentSeconds)); " + waits
        return ExecStallVerdict(kind: .deadlocked, message: message, pool: pool)
    }
}
