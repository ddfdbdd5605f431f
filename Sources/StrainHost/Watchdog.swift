internal import CStrainProbe
import Foundation
import StrainKit
import StrainWire

/// Watches a trial from its own pthread (not GCD's pool, not Swift
/// concurrency's): when work is pending and nothing has progressed for the
/// stall threshold, it dumps every thread and ends the trial `starved` or
/// `deadlocked`.
///
/// A trial is stalled when all of these hold:
/// - units are pending (queued, not finished) and no heartbeat came for the threshold;
/// - no thread holding scenario work is running (a long computation is progress);
/// - work waits for a thread (queued, not started): `starved`, whatever the
///   threads holding work wait in (a unit that sleeps longer than the
///   threshold without a `beat` looks the same: set `stall` above it); or
///   every thread holding work waits with no timeout, so only another blocked
///   thread could wake it, and no other thread is running or sleeping (a slow
///   barrier block on a GCD worker may be what they wait for): `deadlocked`.
final class Watchdog: Sendable {
    /// What the watchdog found, for the host to report.
    struct Stall: Sendable {
        var outcome: TrialOutcome
        var report: StallReport
        var dump: RawDump
        /// CLOCK_MONOTONIC of the heartbeat the decision was made on.
        var lastHeartbeatNanoseconds: UInt64
        /// The trial's measurements when the stall was called, before the dump
        /// (whose signals cut sleeps short and let some work move on).
        var metrics: TrialMetrics
    }

    /// Time each thread has to answer the dump signal.
    static let answerTimeoutNanoseconds: UInt64 = 300_000_000
    /// Frames kept per thread in a dump.
    static let framesPerThread = 192
    /// The watchdog thread's name (as /proc shows it: at most 15 characters).
    static let threadName = ChildEnvironment.watchdogThreadName
    /// Threads a dump can hold (and threads holding work the watchdog can see:
    /// the C registry lists the first 8,192 threads that ever ran work).
    static let dumpCapacity = 8192

    let stallNanoseconds: UInt64
    let context: ScenarioContext
    /// Claims the end of the trial before the dump (whose signals wake sleeping
    /// work early); false when the work finished first.
    let claim: @Sendable () -> Bool
    let measure: @Sendable () -> TrialMetrics
    let onStall: @Sendable (Stall) -> Void
    /// The work does not report its own units, waits or pool work (a test's closure
    /// calling any code): a stall is judged from the threads alone. Threads waiting
    /// on each other's mutexes are named from the mutexes, and work queued to a pool
    /// that cannot start it is told from a deadlock by the pool still adding threads.
    let workUnmarked: Bool

    /// How long a stall of unmarked work is watched for new threads before it is
    /// called deadlocked: libdispatch adds a worker to a blocked pool about once a second.
    static let poolGrowthWindowNanoseconds = UInt64(DispatchPool.growthWindowSeconds * 1e9)

    init(stallSeconds: Double, context: ScenarioContext, workUnmarked: Bool = false, claim: @escaping @Sendable () -> Bool,
         measure: @escaping @Sendable () -> TrialMetrics, onStall: @escaping @Sendable (Stall) -> Void) {
        // Saturating: a spec from elsewhere (not this parser) must not trap the child here.
        self.stallNanoseconds = max(10_000_000, TrialSpec.nanoseconds(stallSeconds))
        self.context = context
        self.workUnmarked = workUnmarked
        self.claim = claim
        self.measure = measure
        self.onStall = onStall
    }

    struct StartError: Error, CustomStringConvertible {
        var errno: Int32
        var what = "could not allocate the thread dump's slots"
        var description: String { "\(what) (errno \(errno))" }
    }

    /// Allocates the dump's slots and starts watching.
    func start() throws(StartError) {
        let status = strain_dump_install(Self.dumpCapacity, Self.framesPerThread)
        guard status == 0 else { throw StartError(errno: status) }
        let started = HarnessThread.start(Self.threadName, stackBytes: 1 << 20) { [self] in watch() }
        guard started == 0 else { throw StartError(errno: started, what: "could not start the watchdog's thread") }
    }

    private func watch() {
        // Its own allocations (dumps, samples) are not the work's.
        strain_alloc_exclude_thread()
        let tick = UInt32(min(10_000, max(1_000, stallNanoseconds / 20_000)))
        var inWork = [Int32](repeating: 0, count: Self.dumpCapacity)
        var nextLockCycleLook: UInt64 = 0
        while true {
            usleep(tick)
            let beat = strain_heartbeat_read()
            guard beat.queued - beat.finished > 0 else { continue }
            let now = strain_monotonic_ns()
            guard now >= beat.last_event_ns &+ stallNanoseconds else { continue }

            let holding = inWork.withUnsafeMutableBufferPointer { buffer in
                Array(buffer.prefix(strain_threads_in_work(buffer.baseAddress, buffer.count)))
            }
            let states = holding.compactMap { ThreadState.read(tid: Int($0)) }
            let anyRunning = states.contains { $0.state == "R" }
            if anyRunning { continue }
            let waitingForThread = beat.queued - beat.started
            let untimed = states.filter(\.isInUntimedWait).count
            let holdersUntimed = !states.isEmpty && untimed == states.count
            var othersQuiet = false
            if waitingForThread == 0 && holdersUntimed {
                // Work that is not marked as such (a barrier block on a GCD
                // worker) may be what wakes them: no other thread may be running
                // or sleeping. Idle pool workers wait with a timeout; they do not count.
                let me = Int(strain_thread_id())
                let others = ThreadState.tids().filter { $0 != me }.compactMap { ThreadState.read(tid: $0) }
                othersQuiet = !others.contains { $0.state == "R" || $0.isSleeping }
            }
            let judged = StallVerdict.judge(
                pending: beat.queued - beat.finished, waitingForThread: waitingForThread,
                silentSeconds: Double(now - beat.last_event_ns) / 1e9, thresholdSeconds: Double(stallNanoseconds) / 1e9,
                anyHolderRunning: anyRunning, holdersInUntimedWait: holdersUntimed, othersQuiet: othersQuiet, queued: beat.queued
            )
            // Threads that each hold a mutex the next one waits for are deadlocked whatever
            // the rest do: a closure that polls for them (`Thread.sleep` in a loop) sleeps with
            // a timeout, and the trial ran into its deadline as timedOut, the cycle unnamed.
            // Looked for at most every 250 ms while the work stands still.
            var lockCycleFirst: WaitCycle?
            if judged == nil {
                guard workUnmarked, now >= nextLockCycleLook else { continue }
                nextLockCycleLook = now &+ 250_000_000
                guard let found = lockCycle() else { continue }
                lockCycleFirst = found
            }
            var deadlocked = (judged ?? .deadlocked) == .deadlocked
            var poolGrowth: PoolGrowth?
            // Read before the dump, whose signals take each thread out of its wait for a moment.
            let cycle = lockCycleFirst ?? WaitCycle.find(in: context.waits.current) ?? lockCycle()
            if deadlocked, workUnmarked, cycle == nil {
                // Nothing names a cycle: a pool that starts threads which block at once has
                // work queued that it cannot run (starved); one that starts none, a deadlock.
                guard let growth = watchPoolGrowth(since: beat.last_event_ns) else { continue }
                if growth.newThreads > 0 {
                    deadlocked = false
                    poolGrowth = growth
                }
            }

            // The heartbeat may have moved while the threads were read.
            guard strain_heartbeat_read().last_event_ns == beat.last_event_ns else { continue }
            // From here the trial ends here, even if the dump wakes the work.
            guard claim() else { return }
            onStall(stall(beat: beat, decidedAt: now, holding: states, untimed: untimed, waitingForThread: waitingForThread,
                          deadlocked: deadlocked, cycle: cycle, poolGrowth: poolGrowth))
            return
        }
    }

    /// Threads of this process that started while unmarked work was stalled.
    struct PoolGrowth {
        var newThreads: Int
        var untimed: Int
        var seconds: Double
    }

    /// Watches the process's threads for `poolGrowthWindowNanoseconds`: nil when the
    /// heartbeat or a thread's running showed progress meanwhile, else how many new
    /// threads started (and how many of them wait with no timeout at its end).
    private func watchPoolGrowth(since lastEvent: UInt64) -> PoolGrowth? {
        let me = Int(strain_thread_id())
        let before = Set(ThreadState.tids())
        let start = strain_monotonic_ns()
        while strain_monotonic_ns() - start < Self.poolGrowthWindowNanoseconds {
            usleep(50_000)
            guard strain_heartbeat_read().last_event_ns == lastEvent else { return nil }
        }
        let now = ThreadState.tids().filter { $0 != me }.compactMap { ThreadState.read(tid: $0) }
        // A thread still running at the end is work going on, not a stall.
        guard !now.contains(where: { $0.state == "R" }) else { return nil }
        let new = now.filter { !before.contains($0.tid) }
        return PoolGrowth(newThreads: new.count, untimed: new.filter(\.isInUntimedWait).count,
                          seconds: Double(strain_monotonic_ns() - start) / 1e9)
    }

    /// Threads of this process waiting on each other's mutexes, read from the mutexes
    /// (for work that does not say what it holds and waits for); nil without a cycle.
    private func lockCycle() -> WaitCycle? {
        guard workUnmarked else { return nil }
        let me = Int(strain_thread_id())
        let threads = ThreadState.tids().filter { $0 != me }.compactMap { ThreadState.read(tid: $0) }
        return LockWaits(threads: threads, readWord: LockWaits.reader(pid: getpid())).waitCycle(threads: threads, place: { _ in nil })
    }

    /// A thread's name for the dump: the whole label of the root queue a GCD worker noted
    /// when it ran Strain's work, where the kernel's 15 characters are its tail (a
    /// thread the scenario renamed keeps its own name); else the kernel's name.
    static func name(of tid: Int, kernelName: String?) -> String {
        guard let kernelName else { return "?" }
        guard let noted = strain_work_root_queue(Int32(tid)) else { return kernelName }
        let label = String(cString: noted)
        return label.hasSuffix(kernelName) ? label : kernelName
    }

    private func stall(beat: strain_heartbeat, decidedAt: UInt64, holding: [ThreadState], untimed: Int, waitingForThread: Int, deadlocked: Bool,
                       cycle: WaitCycle?, poolGrowth: PoolGrowth?) -> Stall {
        let metrics = measure()
        let me = Int(strain_thread_id())
        let tids = ThreadState.tids().filter { $0 != me }
        // The threads holding work were read a moment ago; read the rest.
        var states = Dictionary(holding.map { ($0.tid, $0) }, uniquingKeysWith: { a, _ in a })
        for tid in tids where states[tid] == nil {
            if let state = ThreadState.read(tid: tid) { states[tid] = state }
        }
        let requested = Array(tids.prefix(Self.dumpCapacity))
        let dumpStart = strain_monotonic_ns()
        let raw = requested.map(Int32.init)
        _ = raw.withUnsafeBufferPointer { strain_dump_threads($0.baseAddress, $0.count, Self.answerTimeoutNanoseconds) }
        var lastAnswer = dumpStart
        var threads: [RawThread] = []
        var unanswered: [Int] = []
        let holdingTids = Set(holding.map(\.tid))
        for (index, tid) in requested.enumerated() {
            let state = states[tid]
            var slot = strain_dump_thread()
            let read = strain_dump_slot_read(index, &slot)
            if read < 0 { continue }  // it ended before it was asked
            let answered = read == 1 && Int(slot.tid) == tid
            var frames: [UInt64] = []
            if answered {
                frames = (0..<Int(slot.frame_count)).map { UInt64(slot.frames[$0]) }
                lastAnswer = max(lastAnswer, slot.answered_ns)
            } else {
                unanswered.append(tid)
            }
            threads.append(RawThread(
                tid: tid, name: Self.name(of: tid, kernelName: state?.name), state: state?.state ?? "?", wait: state?.wait,
                inWork: answered ? slot.in_work != 0 : holdingTids.contains(tid), frames: frames, viaPtrace: false,
                framesTotal: answered ? Int(slot.frames_total) : nil
            ))
        }
        let maps = ProcFile.contents(of: "/proc/self/maps")
        let dump = RawDump(method: "signal", threads: threads, maps: maps, unanswered: unanswered,
                           dumpNanoseconds: Int(lastAnswer - dumpStart), waitCycle: cycle)

        let silent = Double(decidedAt - beat.last_event_ns) / 1e9
        let seconds = DurationText.format(silent)
        let outcome: TrialOutcome
        if deadlocked {
            // A named cycle is the reason, whoever else holds work: "every thread holding work (1)"
            // above a cycle of two threads the closure started read as a miscount.
            outcome = TrialOutcome(kind: .deadlocked, message: cycle.map { "no progress for \(seconds); a wait cycle: \($0.description)" }
                ?? "no progress for \(seconds); every thread holding work (\(holding.count)) waits with no timeout")
        } else if let growth = poolGrowth {
            let window = DurationText.format(growth.seconds)
            outcome = TrialOutcome(kind: .starved, message: "no progress for \(seconds); every thread holding work (\(holding.count)) waits with no timeout"
                + " while \(growth.newThreads) new thread\(growth.newThreads == 1 ? "" : "s") started in \(window), \(growth.untimed) of them waiting with no timeout at once:"
                + " work is queued to a pool whose threads are all blocked (libdispatch adds one a second, up to \(DispatchPool.workerLimit))")
        } else {
            outcome = TrialOutcome(kind: .starved, message: "no progress for \(seconds): \(waitingForThread) of \(beat.queued) units wait for a thread; \(holding.count) threads hold work, \(untimed) of them in waits with no timeout")
        }
        let report = StallReport(
            thresholdSeconds: Double(stallNanoseconds) / 1e9, silentSeconds: silent,
            reportedAfterSeconds: Double(strain_monotonic_ns() - beat.last_event_ns) / 1e9,
            queued: beat.queued, started: beat.started, finished: beat.finished,
            threadsInWork: holding.count, threadsInUntimedWait: untimed
        )
        return Stall(outcome: outcome, report: report, dump: dump, lastHeartbeatNanoseconds: beat.last_event_ns, metrics: metrics)
    }
}
