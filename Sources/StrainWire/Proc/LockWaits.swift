import Foundation
import Glibc
import StrainRecords

/// Threads of a quiet program blocked on locks with no timeout, and who holds
/// what they wait for: the evidence `strain exec --stall` judges a program by when
/// it has no GCD or Swift concurrency pool, and a trial whose work does not mark
/// its own waits (a test's closure) names its lock cycle by.
///
/// A glibc `pthread_mutex_t` names its holder: a thread blocked in
/// `pthread_mutex_lock` waits in `futex(&mutex->__data.__lock, FUTEX_WAIT, 2, NULL)`
/// (2: locked, with waiters), and `__data.__owner`, 8 bytes further, is the
/// holder's thread id. A priority-inheritance mutex's lock word is its owner's id
/// itself. Other untimed futex waits (a condition variable, a semaphore, a join)
/// name no holder.
package struct LockWaits {
    /// One thread's untimed wait on a lock.
    package struct Wait: Hashable {
        package var tid: Int
        /// The lock word's address (the mutex's, for a glibc mutex).
        package var address: UInt64
        /// The thread holding it, when the lock says.
        package var holder: Int?
        /// The lock says the waiting thread holds it itself: a mutex that is not
        /// recursive, locked twice.
        package var heldBySelf = false
    }

    /// Every thread in an untimed futex wait, by thread id.
    package var waits: [Int: Wait]

    /// The waits among `threads`, holders read from the program's memory with `readWord`
    /// (nil when it cannot be read). A holder is kept only when it is another of the
    /// program's threads.
    package init(threads: [ThreadState], readWord: (UInt64) -> UInt32?) {
        let tids = Set(threads.map(\.tid))
        var waits: [Int: Wait] = [:]
        for thread in threads where thread.state != "R" && thread.syscall == ThreadState.futexCall {
            let arguments = thread.arguments
            guard arguments.count >= 4, arguments[3] == 0 else { continue }  // a timeout: not stuck
            let address = arguments[0]
            var holder: Int?
            switch arguments[1] & 0x7f {
            case 0, 9:  // FUTEX_WAIT, FUTEX_WAIT_BITSET
                if arguments[2] == 2, let owner = readWord(address &+ 8) { holder = Int(owner) }
            case 6:  // FUTEX_LOCK_PI: the lock word holds the owner's id
                if let word = readWord(address) { holder = Int(word & 0x3fff_ffff) }
            default:
                continue
            }
            let heldBySelf = holder == thread.tid
            if let known = holder, known == thread.tid || !tids.contains(known) { holder = nil }
            waits[thread.tid] = Wait(tid: thread.tid, address: address, holder: holder, heldBySelf: heldBySelf)
        }
        self.waits = waits
    }

    /// The first cycle of threads each waiting for a lock the next one holds, from the
    /// lowest thread id; nil when the holders form none.
    package func cycle() -> [Wait]? {
        for start in waits.keys.sorted() {
            var path: [Wait] = []
            var seen: Set<Int> = []
            var current = start
            while let wait = waits[current], !seen.contains(current) {
                seen.insert(current)
                path.append(wait)
                guard let holder = wait.holder else { break }
                if holder == start { return path }
                current = holder
            }
        }
        return nil
    }

    /// `thread 12 (worker) in take_b at locks.c:20:5 (locks)`.
    package static func name(_ tid: Int, threads: [ThreadState], place: (Int) -> String?) -> String {
        let name = threads.first { $0.tid == tid }?.name
        return "thread \(tid)" + (name.map { " (\($0))" } ?? "") + (place(tid).map { " in \($0)" } ?? "")
    }

    /// The cycle as a dump records it: each thread, the mutex it holds (the one the
    /// thread before it waits for) and the mutex it waits for; nil without a cycle.
    /// `object` names the global or static at an address (`first_lock`), when a symbol table says.
    package func waitCycle(threads: [ThreadState], place: (Int) -> String?, object: (UInt64) -> String? = { _ in nil }) -> WaitCycle? {
        guard let cycle = cycle() else { return nil }
        func mutex(_ address: UInt64) -> String {
            let hex = "0x" + String(address, radix: 16)
            return object(address).map { "mutex \($0) (\(hex))" } ?? "mutex \(hex)"
        }
        var clauses: [String] = []
        var links: [WaitLink] = []
        for (index, wait) in cycle.enumerated() {
            let held = cycle[(index + cycle.count - 1) % cycle.count].address
            clauses.append("\(Self.name(wait.tid, threads: threads, place: place)) holds \(mutex(held)) and waits for \(mutex(wait.address))")
            links.append(WaitLink(tid: wait.tid, holding: mutex(held), waitsFor: mutex(wait.address)))
        }
        return WaitCycle(description: clauses.joined(separator: "; "), links: links)
    }

    /// A 4-byte word of process `pid`'s memory (`/proc/PID/mem`, which strain may read
    /// as the program's parent), or nil.
    package static func reader(pid: Int32) -> (UInt64) -> UInt32? {
        { address in
            let descriptor = open("/proc/\(pid)/mem", O_RDONLY | O_CLOEXEC)
            guard descriptor >= 0 else { return nil }
            defer { close(descriptor) }
            var word: UInt32 = 0
            guard address < UInt64(Int64.max), pread(descriptor, &word, 4, off_t(address)) == 4 else { return nil }
            return word
        }
    }
}
