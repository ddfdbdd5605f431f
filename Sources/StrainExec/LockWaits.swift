import Foundation
import Glibc
import StrainKit
import StrainWire

/// Threads of a quiet program blocked on locks with no timeout, and who holds
/// what they wait for: the evidence `strain exec --stall` judges a program by when
/// it has no GCD or Swift concurrency pool.
///
/// A glibc `pthread_mutex_t` names its holder: a thread blocked in
/// `pthread_mutex_lock` waits in `futex(&mutex->__data.__lock, FUTEX_WAIT, 2, NULL)`
/// (2: locked, with waiters), and `__data.__owner`, 8 bytes further, is the
/// holder's thread id. A priority-inheritance mutex's lock word is its owner's id
/// itself. Other untimed futex waits (a condition variable, a semaphore, a join)
/// name no holder.
struct LockWaits {
    /// One thread's untimed wait on a lock.
    struct Wait: Hashable {
        var tid: Int
        /// The lock word's address (the mutex's, for a glibc mutex).
        var address: UInt64
        /// The thread holding it, when the lock says.
        var holder: Int?
    }

    /// Every thread in an untimed futex wait, by thread id.
    var waits: [Int: Wait]

    /// The waits among `threads`, holders read from the program's memory with `readWord`
    /// (nil when it cannot be read). A holder is kept only when it is another of the
    /// program's threads.
    init(threads: [ThreadState], readWord: (UInt64) -> UInt32?) {
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
            if let known = holder, known == thread.tid || !tids.contains(known) { holder = nil }
            waits[thread.tid] = Wait(tid: thread.tid, address: address, holder: holder)
        }
        self.waits = waits
    }

    /// The first cycle of threads each waiting for a lock the next one holds, from the
    /// lowest thread id; nil when the holders form none.
    func cycle() -> [Wait]? {
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
    static func name(_ tid: Int, threads: [ThreadState], place: (Int) -> String?) -> String {
        let name = threads.first { $0.tid == tid }?.name
        return "thread \(tid)" + (name.map { " (\($0))" } ?? "") + (place(tid).map { " in \($0)" } ?? "")
    }

    /// The cycle as a dump records it: each thread, the mutex it holds (the one the
    /// thread before it waits for) and the mutex it waits for; nil without a cycle.
    /// `object` names the global or static at an address (`first_lock`), when a symbol table says.
    func waitCycle(threads: [ThreadState], place: (Int) -> String?, object: (UInt64) -> String? = { _ in nil }) -> WaitCycle? {
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
    static func reader(pid: Int32) -> (UInt64) -> UInt32? {
        { address in
            let descriptor = open("/proc/\(pid)/mem", O_RDONLY | O_CLOEXEC)
            guard descriptor >= 0 else { return nil }
            defer { close(descriptor) }
            var word: UInt32 = 0
            guard address < UInt64(Int64.max), pread(descriptor, &word, 4, off_t(address)) == 4 else { return nil }
            return word
        }
    }

    /// The verdict on a quiet program from its lock waits: `deadlocked` when threads
    /// wait in a cycle (each for a mutex the next holds), naming the threads and the
    /// mutexes, or when every thread waits on a lock with no timeout (nothing inside
    /// the program is left to wake one); nil otherwise. `place` names where a thread
    /// waits (its innermost frame outside libc), when a dump said.
    static func judge(threads: [ThreadState], silentSeconds: Double, readWord: (UInt64) -> UInt32?,
                      place: (Int) -> String?, object: (UInt64) -> String? = { _ in nil }) -> (verdict: ExecStallVerdict, cycle: WaitCycle?)? {
        let locks = LockWaits(threads: threads, readWord: readWord)
        let quiet = String(format: "%.2fs", silentSeconds)
        func thread(_ tid: Int) -> String { Self.name(tid, threads: threads, place: place) }
        if let cycle = locks.waitCycle(threads: threads, place: place, object: object) {
            let message = "no CPU time for \(quiet); \(cycle.links.count) threads wait on each other's mutexes with no timeout: " + cycle.description
            return (ExecStallVerdict(kind: .deadlocked, message: message), cycle)
        }
        if !threads.isEmpty, locks.waits.count == threads.count {
            let message = "no CPU time for \(quiet); every thread (\(threads.count)) waits on a lock or condition with no timeout, so none is left to wake another"
                + " (the holders could not be read from the locks: \(threads.map { thread($0.tid) }.joined(separator: ", ")))"
            return (ExecStallVerdict(kind: .deadlocked, message: message), nil)
        }
        return nil
    }
}
