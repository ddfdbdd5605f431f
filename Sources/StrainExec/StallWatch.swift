import Foundation
import StrainText
import StrainKit
import StrainWire

/// The watchdog's verdict on a program under `strain exec --stall`.
package struct ExecStallVerdict: Sendable, Hashable {
    /// `starved` or `deadlocked`, as a trial's watchdog would name it; nil when every
    /// thread waits with no timeout but something outside the program can end the wait
    /// (a handler it installed, a live process of its tree): no stall, the program's own
    /// ending stays its outcome and the record says what it waited on.
    package var kind: TrialOutcome.Kind?
    package var message: String
    /// The pool's threads and how many of them were blocked, when the verdict is on a pool.
    package var pool: PoolCount?

    /// A pool's threads when it was judged.
    package struct PoolCount: Sendable, Hashable {
        package var threads: Int
        package var blocked: Int
    }

    package init(kind: TrialOutcome.Kind?, message: String, pool: PoolCount? = nil) {
        self.kind = kind
        self.message = message
        self.pool = pool
    }

    /// `deadlocked`, `starved`, or `waiting on an outside event`.
    package var name: String { kind?.rawValue ?? Self.outsideEvent }

    /// The name of a wait that something outside the program can end.
    package static let outsideEvent = "waiting on an outside event"
}

/// `strain exec --stall`: watches a program from outside, without a heartbeat.
///
/// A program is suspected when it used no CPU time for the threshold and none of
/// its threads is running; a dump then shows its stacks. Threads under
/// libdispatch's worker or Swift concurrency's job frames are the pools': stuck
/// when they wait with no timeout, idle when they wait with one (an idle worker's
/// wait). With a stuck pool thread, the verdict is `deadlocked` when every thread
/// outside the pools waits with no timeout too (nothing is left to wake them), or
/// `starved` when no pool thread is idle (work queued to the pool cannot start);
/// anything else is not called. Called once per run. A `deadlocked` without a named
/// cycle that a handler the program installed or a live process of its tree could
/// still end is a wait on an outside event instead (`OutsideWake`): not a stall, and
/// the watch goes on.
struct StallWatch {
    let pid: Int32
    let thresholdSeconds: Double
    private var lastCPUTicks: Int?
    private var quietSince: UInt64 = 0
    /// The CPU time and the threads (each one's state and wait) when a dump found
    /// nothing stuck: not asked again until one of them moves. The threads count
    /// because a quiet program changes without CPU time to speak of: an idle
    /// worker that made the first dump inconclusive times out and leaves.
    private var clearedAtTicks: Int?
    private var clearedThreads: [Int: String]?
    /// The program's processes as last read, and when.
    private var tree: [Int32] = []
    private var treeReadAt: UInt64 = 0
    /// Doubles after each dump that found nothing stuck, so a quiet program is not dumped over and over.
    private var patienceSeconds: Double
    /// How often each thread of the tree had been run by the scheduler (`schedstat`),
    /// read at a quiet spell's first sample: a thread waiting with no timeout that ran
    /// since then woke and waited again in less than a clock tick, which the ticks
    /// cannot show, so the spell was not quiet. (Read at half the spell, it missed a
    /// program woken every 700 ms under a 1 s threshold: re-trial 33c.)
    private var runsAtStart: [Int: UInt64]?
    /// The threads of the tree at the spell's first sample, and when: a pool thread
    /// started since then is the pool growing for queued work.
    private var threadsAtStart: Set<Int> = []
    private var startReadAt: UInt64 = 0
    /// Set while a deadlock of blocked Dispatch workers waits to see whether the pool
    /// grows: no suspicion before then (`waitForPoolGrowth`).
    private var judgeNotBefore: UInt64 = 0
    /// The threads when the pool's growth began to be watched, when, and the CPU time then:
    /// kept when a wake-up after the dump restarts the quiet spell, so the watch ends at the
    /// window's end whatever the dump stirred; dropped when the program works (100 ms of CPU).
    private var growthBaseline: (threads: Set<Int>, at: UInt64, ticks: Int)?
    /// While the tree uses CPU: when a mutex cycle was last looked for, and the cycle seen
    /// (each link's process, thread and mutex) with when it was first seen.
    private var cycleLookedAt: UInt64 = 0
    private var cycleSeen: (links: Set<String>, since: UInt64)?

    init(pid: Int32, thresholdSeconds: Double) {
        self.pid = pid
        self.thresholdSeconds = thresholdSeconds
        self.patienceSeconds = thresholdSeconds
    }

    /// What made the watch suspicious: how long the program was quiet, and its threads then.
    struct Suspicion {
        var silentSeconds: Double
        /// Every thread of the program's processes (thread ids are unique across them).
        var threads: [ThreadState]
        /// The threads of each process of the program's tree, the program's first.
        var processes: [(pid: Int32, threads: [ThreadState])] = []
        /// Threads that started during the spell, and how long the spell was watched for them.
        var startedInSpell: Set<Int> = []
        var watchedSeconds: Double = 0
        /// Threads Swift concurrency's cooperative pool may have (`cooperativePoolWidth`).
        var cooperativeWidth = StallWatch.cooperativePoolWidth
        /// Whether the tree used CPU meanwhile: a mutex cycle held for the threshold beside a
        /// thread that runs, judged only by its cycle (``StallWatch/busyCycle(now:)``).
        var busy = false

        /// The stall's figures; a pool's threads, and how many of them are blocked, when the verdict counted them.
        func report(thresholdSeconds: Double, verdict: ExecStallVerdict? = nil) -> StallReport {
            StallReport(thresholdSeconds: thresholdSeconds, silentSeconds: silentSeconds, reportedAfterSeconds: silentSeconds,
                        queued: 0, started: 0, finished: 0, threadsInWork: verdict?.pool?.threads ?? 0,
                        threadsInUntimedWait: verdict?.pool?.blocked ?? threads.filter(\.isInUntimedWait).count)
        }
    }

    /// How many threads libdispatch lets Swift concurrency's cooperative pool have: one per
    /// online core, whatever the program's CPU affinity (measured: 8 tasks blocked on a
    /// semaphore held 2 threads on this 2-core machine, under `taskset -c 0` too). The pool
    /// starts a thread for a queued job at once up to that width and never beyond it.
    static let cooperativePoolWidth = max(1, sysconf(Int32(_SC_NPROCESSORS_ONLN)))

    /// One sample; a suspicion once no CPU time was used for the threshold and no thread runs.
    mutating func step(now: UInt64) -> Suspicion? {
        // The tree is read once a second (a children file per thread), its CPU time every sample.
        if treeReadAt == 0 || now &- treeReadAt >= 1_000_000_000 {
            tree = Self.tree(of: pid)
            treeReadAt = now
        }
        // The whole tree: a wrapper that waits for its child (no exec) is quiet while the child works.
        // In clock ticks (10 ms), on purpose: a runtime's housekeeping threads (a JVM's
        // periodic task, Go's sysmon) wake many times a second for microseconds, and
        // read in nanoseconds they would keep a deadlocked program from ever looking
        // quiet. A wake-up that works less than a tick is seen otherwise: by the times the
        // scheduler ran each thread that waits with no timeout (`runs(of:)`, below).
        let ticks = Self.cpuTicks(of: tree)
        if ticks != lastCPUTicks || quietSince == 0 {
            if let baseline = growthBaseline, abs(ticks - baseline.ticks) > 10 { growthBaseline = nil }
            lastCPUTicks = ticks
            quietSince = now
            runsAtStart = nil
            judgeNotBefore = 0
            return busyCycle(now: now)
        }
        cycleSeen = nil
        let silent = Double(now &- quietSince) / 1e9
        if runsAtStart == nil {
            let runs = Self.runs(of: tree)
            runsAtStart = runs
            threadsAtStart = Set(runs.keys)
            startReadAt = now
        }
        guard silent >= patienceSeconds, now >= judgeNotBefore else { return nil }
        // Read afresh: a worker started since the last read may be what the program waits for.
        tree = Self.tree(of: pid)
        treeReadAt = now
        // Each process as one moment, or judged at a later sample.
        var processes: [(pid: Int32, threads: [ThreadState])] = []
        for process in tree {
            guard let threads = Self.snapshot(of: process) else { return nil }
            processes.append((pid: process, threads: threads))
        }
        let threads = processes.flatMap(\.threads)
        guard ticks != clearedAtTicks || Self.signature(threads) != clearedThreads else { return nil }
        guard !threads.contains(where: { $0.state == "R" }), threads.contains(where: \.isInUntimedWait) else { return nil }
        // A thread that waits on a lock or condition with no timeout now (a futex wait) and
        // was run since the spell's first sample woke and waited again (a program serving events
        // it is sent, each in microseconds): not quiet, and not judged. A housekeeping
        // thread's timed waits do not count, nor an event loop's `epoll_wait`: libdispatch's
        // manager thread wakes for its timers beside a starved pool that stays starved.
        if let before = runsAtStart {
            let after = Self.runs(of: tree)
            if threads.contains(where: { thread in
                thread.isInUntimedWait && thread.syscall == ThreadState.futexCall
                    && (after[thread.tid] ?? 0) > (before[thread.tid] ?? UInt64.max)
            }) {
                quietSince = now
                runsAtStart = nil
                judgeNotBefore = 0
                return nil
            }
        }
        let baseline = growthBaseline ?? (threads: threadsAtStart, at: startReadAt, ticks: 0)
        return Suspicion(silentSeconds: silent, threads: threads, processes: processes,
                         startedInSpell: Set(threads.map(\.tid)).subtracting(baseline.threads),
                         watchedSeconds: Double(now &- baseline.at) / 1e9)
    }

    /// A mutex cycle while the tree uses CPU: looked for once a second from /proc and the
    /// mutexes' owner words (no dump, no signal), and a suspicion once the same cycle held
    /// for the threshold. A named cycle is a deadlock whatever else runs: two threads in a
    /// lock-order cycle beside a spinning one got no verdict, as the tree was never quiet
    /// (re-trial 33n, F11).
    mutating func busyCycle(now: UInt64) -> Suspicion? {
        guard now &- cycleLookedAt >= 1_000_000_000 else { return nil }
        cycleLookedAt = now
        var processes: [(pid: Int32, threads: [ThreadState])] = []
        var links: Set<String>?
        for process in tree {
            guard let threads = Self.snapshot(of: process) else { return nil }
            processes.append((pid: process, threads: threads))
            guard links == nil, threads.filter({ $0.syscall == ThreadState.futexCall }).count >= 2,
                  let cycle = LockWaits(threads: threads, readWord: LockWaits.reader(pid: process)).waitCycle(threads: threads, place: { _ in nil }, object: { _ in nil })
            else { continue }
            links = Set(cycle.links.map { "\(process) \($0.tid) \($0.waitsFor)" })
        }
        guard let links else {
            cycleSeen = nil
            return nil
        }
        guard let seen = cycleSeen, seen.links == links else {
            cycleSeen = (links, now)
            return nil
        }
        let held = Double(now &- seen.since) / 1e9
        guard held >= patienceSeconds else { return nil }
        return Suspicion(silentSeconds: held, threads: processes.flatMap(\.threads), processes: processes, watchedSeconds: held, busy: true)
    }

    /// A dump found every Dispatch worker blocked and the pool has not grown yet: ask
    /// again once the pool has been watched for `DispatchPool.growthWindowSeconds` since the
    /// spell's start. The dump's own CPU time and wake-ups are not the program's: the
    /// watch waits (at most 300 ms) until the threads `before` it are back in their
    /// waits, and reads the CPU time and runs afresh then.
    mutating func waitForPoolGrowth(before: [ThreadState], clock: () -> UInt64) {
        let expected = Self.signature(before)
        let deadline = clock() &+ 300_000_000
        while clock() < deadline {
            let now = Self.signature(tree.flatMap(Self.threads(of:)))
            if expected.allSatisfy({ now[$0.key] == $0.value }) { break }
            usleep(5_000)
        }
        let ticks = Self.cpuTicks(of: tree)
        lastCPUTicks = ticks
        runsAtStart = Self.runs(of: tree)
        let baseline = growthBaseline ?? (threads: threadsAtStart, at: startReadAt, ticks: ticks)
        growthBaseline = baseline
        judgeNotBefore = max(clock(), baseline.at &+ UInt64(DispatchPool.growthWindowSeconds * 1e9))
    }

    /// Every thread waits, but a timer the program armed is due in `seconds`: not judged
    /// before it has fired (and 200 ms more for its block to run).
    mutating func waitForTimer(seconds: Double, now: UInt64) {
        judgeNotBefore = now &+ UInt64((min(max(seconds, 0), DispatchTimers.longestWaitSeconds) + 0.2) * 1e9)
    }

    /// How often the scheduler has run each thread of `processes` (the third field of
    /// `/proc/PID/task/TID/schedstat`; `voluntary_ctxt_switches` plus
    /// `nonvoluntary_ctxt_switches` of its `status` where the kernel keeps no schedstat),
    /// by thread id, at most 4,096 threads.
    static func runs(of processes: [Int32]) -> [Int: UInt64] {
        var runs: [Int: UInt64] = [:]
        for process in processes {
            for tid in ThreadState.tids(pid: String(process)) {
                guard runs.count < 4096 else { return runs }
                let base = "/proc/\(process)/task/\(tid)/"
                let schedstat = ProcFile.contents(of: base + "schedstat").split(separator: " ")
                if schedstat.count >= 3, let count = UInt64(schedstat[2].trimmingCharacters(in: .whitespacesAndNewlines)) {
                    runs[tid] = count
                    continue
                }
                let switches = ProcFile.contents(of: base + "status").split(separator: "\n")
                    .filter { $0.hasPrefix("voluntary_ctxt_switches:") || $0.hasPrefix("nonvoluntary_ctxt_switches:") }
                    .compactMap { UInt64($0.split(separator: ":").last?.trimmingCharacters(in: .whitespaces) ?? "") }
                if switches.count == 2 { runs[tid] = switches.reduce(0, +) }
            }
        }
        return runs
    }

    /// `pid` and its descendants (from each thread's `/proc/PID/task/TID/children`),
    /// parents before children, at most 256 processes.
    static func tree(of pid: Int32) -> [Int32] {
        var found: [Int32] = [pid]
        var index = 0
        while index < found.count, found.count < 256 {
            let process = found[index]
            for tid in ThreadState.tids(pid: String(process)) {
                let text = (try? String(contentsOfFile: "/proc/\(process)/task/\(tid)/children", encoding: .utf8)) ?? ""
                for child in text.split(separator: " ").compactMap({ Int32($0.trimmingCharacters(in: .whitespacesAndNewlines)) }) where !found.contains(child) {
                    found.append(child)
                }
            }
            index += 1
        }
        return found
    }

    /// Not a stall after all: ask again only once the program has used CPU time
    /// or its threads have changed, and it has been quiet again for twice as long.
    mutating func restart(now: UInt64, threads: [ThreadState]) {
        quietSince = now
        runsAtStart = nil
        judgeNotBefore = 0
        growthBaseline = nil
        clearedAtTicks = lastCPUTicks
        clearedThreads = Self.signature(threads)
        patienceSeconds = min(patienceSeconds * 2, 3600)
    }

    /// Each thread's state and what it waits in, by thread id.
    static func signature(_ threads: [ThreadState]) -> [Int: String] {
        Dictionary(threads.map { ($0.tid, $0.state + " " + ($0.wait ?? "")) }, uniquingKeysWith: { first, _ in first })
    }

    /// What a dump says about the pools: a verdict, nothing stuck, or too soon to tell.
    enum Judgement: Equatable {
        case verdict(ExecStallVerdict)
        case none
        /// Every Dispatch worker is blocked and the pool has not grown, but the spell
        /// was watched too short to know it will not: ask again later.
        case watchPoolGrowth
    }

    /// The verdict on the pools from a dump taken when the program was suspected.
    static func judge(_ dump: ThreadDump, suspicion: Suspicion) -> ExecStallVerdict? {
        if case .verdict(let verdict) = judgement(dump, suspicion: suspicion) { return verdict }
        return nil
    }

    /// The verdict on the pools, or why there is none yet.
    static func judgement(_ dump: ThreadDump, suspicion: Suspicion) -> Judgement {
        // The waits as read just before the dump: the thread that took the dump
        // request shows only that it was answering.
        let waits = Dictionary(suspicion.threads.map { ($0.tid, $0.wait) }, uniquingKeysWith: { first, _ in first })
        var stuckPool = 0, idlePool = 0, others = 0, stuckOthers = 0, parked = 0
        // Blocked libdispatch workers, and those of them that started during the spell.
        var stuckWorkers = 0, newStuckWorkers = 0
        // Blocked jobs on Swift concurrency's cooperative threads.
        var stuckJobs = 0
        for group in dump.groups {
            let has = { (names: [String]) in group.frames.contains { frame in frame.symbol.map { symbol in names.contains { symbol.contains($0) } } ?? false } }
            // libdispatch's event manager (its epoll loop) runs on a worker thread but takes no
            // queued work: neither a pool thread nor one that could wake another's wait.
            if has(ExecSupervisor.dispatchManagerFrames) { continue }
            let isPool = has(ExecSupervisor.poolFrames)
            // libdispatch's own workers; not Swift concurrency's, whose pool is as wide as the cores and never grows.
            let isWorker = has([ExecSupervisor.dispatchWorkerFrame]) && !has(ExecSupervisor.jobFrames)
            let isCooperative = has([ExecSupervisor.dispatchWorkerFrame]) && has(ExecSupervisor.jobFrames)
            for thread in group.threads {
                let wait = waits[thread.tid] ?? thread.wait
                // A pool thread is stuck in any wait with no timeout; another thread only in a
                // futex wait: a read, poll or signal wait can be ended by what the process does
                // not hold (a timerfd's timer, a signal sent to it, a descriptor's other end).
                let stuck = isPool ? ThreadState.isUntimedWait(wait) : wait == "futex wait"
                switch (isPool, stuck) {
                case (true, true):
                    stuckPool += 1
                    if isWorker {
                        stuckWorkers += 1
                        newStuckWorkers += suspicion.startedInSpell.contains(thread.tid) ? 1 : 0
                    }
                    stuckJobs += isCooperative ? 1 : 0
                case (true, false): idlePool += 1
                case (false, _) where wait == "sigsuspend" || wait == "pause":
                    // Parked for good (`dispatch_main`, `pause`): it runs only signal handlers.
                    parked += 1
                case (false, let stuck):
                    others += 1
                    stuckOthers += stuck ? 1 : 0
                }
            }
        }
        guard stuckPool > 0 else { return .none }
        let quiet = DurationText.format(suspicion.silentSeconds)
        let count = ExecStallVerdict.PoolCount(threads: stuckPool + idlePool, blocked: stuckPool)
        if idlePool == 0, stuckWorkers > 0, stuckWorkers == stuckPool {
            // Every libdispatch worker blocked: libdispatch starts another about once a second
            // while work waits on its queue, so a pool that keeps growing has work queued that
            // its threads cannot reach (re-trial 33i: 300 blocked items, called deadlocked).
            // One new worker is not enough: a block submitted late (a timer's) gets one too.
            if newStuckWorkers >= 2 {
                let all = "all \(stuckPool) pool threads wait"
                let started = newStuckWorkers == stuckPool ? "all of them" : "\(newStuckWorkers) of them"
                return .verdict(ExecStallVerdict(kind: .starved, message: "no CPU time for \(quiet); \(all) with no timeout under dispatch frames, "
                    + "\(started) started in the last \(DurationText.format(suspicion.watchedSeconds)), so work is queued to a pool whose threads "
                    + "all block (libdispatch adds one a second, up to \(DispatchPool.workerLimit))", pool: count))
            }
            if stuckWorkers >= DispatchPool.workerLimit {
                return .verdict(ExecStallVerdict(kind: .starved, message: "no CPU time for \(quiet); all \(stuckPool) pool threads wait with no timeout under dispatch frames: "
                    + "libdispatch's limit, so work queued to the pool cannot start", pool: count))
            }
            if suspicion.watchedSeconds < DispatchPool.growthWindowSeconds { return .watchPoolGrowth }
            // Not grown: nothing waits on the queue. With another thread awake (a sleeping main
            // thread that will signal the workers, re-trial 33j), the pool is not starved; with
            // none (a main thread parked in `dispatch_main` is not), it is deadlocked.
            if stuckOthers < others { return .none }
        } else if stuckWorkers == 0, stuckJobs > 0, stuckJobs < suspicion.cooperativeWidth {
            // Fewer of Swift concurrency's threads blocked than its pool may have: a job queued to the
            // pool would have got a thread, so what the blocked jobs wait for is no job short of a
            // thread but one that cannot run (queued to an actor a blocked job holds) or a wake-up.
            // With a thread awake, that may be it; with none (a main thread parked in
            // `dispatch_main`, as an async main is, runs only handlers), nothing gives it (re-trial
            // 33j's NEW-1: an actor waiting on its own work was called starved, "a pool of 1").
            guard stuckOthers == others else { return .none }
            let width = suspicion.cooperativeWidth
            let jobs = "\(stuckJobs) of Swift concurrency's \(width) pool threads " + (stuckJobs == 1 ? "waits" : "wait")
            let rest = others + parked == 0 ? "" : " and every other thread (\(others + parked)) "
                + (parked == 0 ? "waits" : others == 0 ? "is parked in dispatch_main" : "waits or is parked in dispatch_main")
            return .verdict(ExecStallVerdict(kind: .deadlocked, message: "no CPU time for \(quiet); \(jobs) with no timeout under concurrency frames\(rest): "
                + "the pool had a thread free, so the work they wait for cannot run (queued to an actor one of them holds) or nothing is left to wake them",
                pool: ExecStallVerdict.PoolCount(threads: width, blocked: stuckJobs)))
        } else {
            // Swift concurrency's pool never grows: a parked main thread leaves it starved, as one awake does.
            others += parked
        }
        if stuckOthers == others {
            // An idle worker waits with a timeout for work it will never get here.
            let pool = counted(stuckPool, "pool thread") + " under dispatch or concurrency frames"
            let waiting = others == 0 ? pool + (stuckPool == 1 ? " waits" : " wait") : pool + " and every other thread (\(others)) wait"
            return .verdict(ExecStallVerdict(kind: .deadlocked, message: "no CPU time for \(quiet); \(waiting) with no timeout: none can wake another",
                                             pool: count))
        }
        if idlePool == 0 {
            let all = stuckPool == 1 ? "the only pool thread waits" : "all \(stuckPool) pool threads wait"
            let rest = counted(others - stuckOthers, "other thread") + (others - stuckOthers == 1 ? " waits" : " wait")
            return .verdict(ExecStallVerdict(kind: .starved, message: "no CPU time for \(quiet); \(all) with no timeout under dispatch or concurrency frames, so work queued to the pool cannot start (\(rest) with a timeout, in a sleep, or for a signal or input)",
                                             pool: count))
        }
        return .none
    }

    /// The CPU time of `processes`, summed, in clock ticks.
    static func cpuTicks(of processes: [Int32]) -> Int {
        processes.reduce(0) { $0 + (cpuTicks(pid: $1) ?? 0) }
    }

    /// Each thread of `process` as `/proc` shows it now.
    static func threads(of process: Int32) -> [ThreadState] {
        ThreadState.tids(pid: String(process)).compactMap { ThreadState.read(pid: String(process), tid: $0) }
    }

    /// Each thread of `process` read as one moment: nil when a thread listed ended
    /// before its state was read, or the list changed while the states were read.
    /// Threads are read one after another, so such a read mixes two moments: a test
    /// run left out a thread that had just ended and kept the thread its end woke as it
    /// was just before, asleep in `pthread_join`, and judged "every thread (1) waits".
    static func snapshot(of process: Int32) -> [ThreadState]? {
        snapshot(tids: { ThreadState.tids(pid: String(process)) }, read: { ThreadState.read(pid: String(process), tid: $0) })
    }

    /// `snapshot(of:)` over the given list and reader.
    static func snapshot(tids: () -> [Int], read: (Int) -> ThreadState?) -> [ThreadState]? {
        let listed = tids()
        var threads: [ThreadState] = []
        for tid in listed {
            guard let thread = read(tid) else { return nil }
            threads.append(thread)
        }
        return tids() == listed ? threads : nil
    }

    /// utime + stime of the whole process, in clock ticks (`/proc/PID/stat`); with
    /// `reapedChildren`, cutime + cstime too (what `wait4`'s usage counts at the end).
    static func cpuTicks(pid: Int32, reapedChildren: Bool = false) -> Int? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = text.lastIndex(of: ")") else { return nil }
        let fields = text[text.index(after: close)...].split(separator: " ")
        // After the name: state is field 3 of stat, utime 14, stime 15, cutime 16, cstime 17.
        let last = reapedChildren ? 14 : 12
        guard fields.count > last else { return nil }
        let ticks = fields[11...last].compactMap { Int($0) }
        return ticks.count == last - 10 ? ticks.reduce(0, +) : nil
    }
}
