import Foundation
import StrainKit
@testable import StrainExec
@testable import StrainRunner
@testable import StrainSymbols
@testable import StrainWire
import Testing

/// What `strain exec` reads from the probe's files, and the watchdog's rule, without a process.
struct ExecRecordTests {
    static let dumpText = """
    STRAIN-DUMP 1
    pid 700
    signal 3
    requester 650
    requested_on 700
    dump_ns 412000
    thread 700
    answered 1
    in_work 0
    frames_total 2
    name server
    stat 700 (server) R 1 700 700 0 -1 0 0 0 0 0 0 0 0 0 20 0 3 0 1 1 1
    syscall running
    f 0x1000
    f 0x1010
    thread 701
    answered 1
    in_work 0
    frames_total 1
    name oot.default-qos
    stat 701 (oot.default-qos) S 1 700 700 0 -1 0 0 0 0 0 0 0 0 0 20 0 3 0 1 1 1
    syscall 202 0x7f00 0x80 0x0 0x0 0x0 0x0 0x7ff0 0x7f10
    f 0x2000
    thread 702
    answered 0
    in_work 0
    frames_total 0
    name (blocked) x
    stat 702 ((blocked) x) S 1 700 700 0 -1 0 0 0 0 0 0 0 0 0 20 0 3 0 1 1 1
    syscall 202 0x7f00 0x80 0x0 0x0 0x0 0x0 0x7ff0 0x7f10
    maps
    00400000-00401000 r-xp 00000000 08:01 1 /usr/bin/server
    end-maps
    END

    """

    @Test func aProbeDumpReadsBackWithEachThreadsStateAndTheRequesterMarked() throws {
        let raw = try #require(ProbeFolder.parseDump(Self.dumpText))
        #expect(raw.threads.map(\.tid) == [700, 701, 702])
        #expect(raw.threads[0].wait == ProbeFolder.tookRequest, "the thread that took the request was interrupted by it")
        #expect(raw.threads[0].state == "answering", "its state says what it did, not \"?\": \(raw.threads[0].state)")
        #expect(raw.threads[0].frames == [0x1000, 0x1010])
        #expect(raw.threads[1].name == "oot.default-qos")
        #expect(raw.threads[1].state == "S")
        #expect(raw.threads[1].wait == "futex wait")
        #expect(raw.threads[2].name == "(blocked) x", "a name with parentheses and a space")
        #expect(raw.threads[2].frames.isEmpty)
        #expect(raw.unanswered == [702])
        #expect(raw.maps == "00400000-00401000 r-xp 00000000 08:01 1 /usr/bin/server")
        #expect(raw.dumpNanoseconds == 412000)
    }

    /// The probe's timers file names an address in the program's memory; strain reads the
    /// deadline there, and a file the program spoiled names nothing.
    @Test func aPendingDispatchTimerIsReadAtTheAddressTheProbeNamesAndABadFileIsNot() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("strain-timers-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let file = (folder as NSString).appendingPathComponent("timers-\(getpid()).txt")
        let now = DispatchTime.now().uptimeNanoseconds  // CLOCK_MONOTONIC on Linux
        let deadline = UnsafeMutablePointer<UInt64>.allocate(capacity: 1)
        defer { deadline.deallocate() }
        deadline.pointee = now + 3_000_000_000
        try "0x\(String(UInt(bitPattern: deadline), radix: 16))\n".write(toFile: file, atomically: true, encoding: .utf8)
        let due = try #require(DispatchTimers.pendingSeconds(pid: getpid(), folder: folder, now: now))
        #expect(abs(due - 3) < 0.001)
        deadline.pointee = now - 1
        #expect(DispatchTimers.pendingSeconds(pid: getpid(), folder: folder, now: now) == nil, "a deadline past")
        deadline.pointee = UInt64.max
        #expect(DispatchTimers.pendingSeconds(pid: getpid(), folder: folder, now: now) == DispatchTimers.longestWaitSeconds)
        for spoiled in ["", "0x\n", "deadbeef\n", "0xffffffffffffffff\n", "0x10\n", String(repeating: "0", count: 100_000)] {
            try spoiled.write(toFile: file, atomically: true, encoding: .utf8)
            #expect(DispatchTimers.pendingSeconds(pid: getpid(), folder: folder, now: now) == nil, "\(spoiled.prefix(20))")
        }
    }

    @Test func aDumpCutShortIsNotRead() {
        #expect(ProbeFolder.parseDump(String(Self.dumpText.dropLast(5))) == nil)
        #expect(ProbeFolder.parseDump("STRAIN-DUMP 2\nEND\n") == nil)
    }

    static func group(_ tids: [Int], wait: String?, symbols: [String]) -> ThreadGroup {
        ThreadGroup(count: tids.count, summary: wait ?? "running", inWork: false,
                    threads: tids.map { DumpedThread(tid: $0, name: "t", state: "S", wait: wait, viaPtrace: false) },
                    frames: symbols.enumerated().map { Frame(address: UInt64($0.offset), symbol: $0.element) })
    }

    /// A spell watched long enough to see a Dispatch pool grow (`DispatchPool.growthWindowSeconds`), unless `watched` says otherwise.
    /// Swift concurrency's pool `width` threads wide (this machine's 2, whatever the machine running the test has).
    static func suspicion(_ waits: [Int: String?], started: Set<Int> = [], watched: Double = 3, width: Int = 2) -> StallWatch.Suspicion {
        StallWatch.Suspicion(silentSeconds: 2, threads: waits.map { ThreadState(tid: $0.key, name: "t", state: "S", syscall: nil, arguments: []) },
                             startedInSpell: started, watchedSeconds: watched, cooperativeWidth: width)
    }

    static func dump(_ groups: [ThreadGroup]) -> ThreadDump {
        ThreadDump(method: "signal", threadCount: groups.map(\.count).reduce(0, +), groups: groups, waitCycle: nil, unreached: [], dumpNanoseconds: 0)
    }

    @Test func poolWorkersAndMainAllWaitingWithNoTimeoutAreDeadlocked() throws {
        let dump = Self.dump([
            Self.group([2, 3], wait: "futex wait", symbols: ["DispatchSemaphore.wait()", "_dispatch_worker_thread"]),
            Self.group([1], wait: "futex wait", symbols: ["DispatchGroup.wait()", "main"]),
            Self.group([4], wait: "futex wait (timed)", symbols: ["_dispatch_sema4_timedwait", "_dispatch_worker_thread"]),
        ])
        let verdict = try #require(StallWatch.judge(dump, suspicion: Self.suspicion([:])))
        #expect(verdict.kind == .deadlocked, "an idle worker cannot wake anyone")
        #expect(verdict.message.contains("2 pool threads"))
    }

    @Test func aSaturatedPoolWithAThreadStillSleepingIsStarved() throws {
        let dump = Self.dump([
            Self.group([2, 3], wait: "futex wait", symbols: ["DispatchSemaphore.wait()", "swift_job_run", "_dispatch_worker_thread"]),
            Self.group([1], wait: "sleep", symbols: ["usleep", "main"]),
        ])
        let verdict = try #require(StallWatch.judge(dump, suspicion: Self.suspicion([:])))
        #expect(verdict.kind == .starved)
        #expect(verdict.message.contains("all 2 pool threads"))
    }

    /// One pool thread and one other thread: each count in its own number ("1 pool
    /// thread", "1 other thread waits"), where the verdicts said "1 pool threads".
    @Test func aVerdictOnOnePoolThreadCountsItInTheSingular() throws {
        let deadlocked = try #require(StallWatch.judge(Self.dump([
            Self.group([2], wait: "futex wait", symbols: ["DispatchSemaphore.wait()", "_dispatch_worker_thread"]),
        ]), suspicion: Self.suspicion([:])))
        #expect(deadlocked.kind == .deadlocked)
        #expect(deadlocked.message.contains("; 1 pool thread under dispatch or concurrency frames waits with no timeout"), "\(deadlocked.message)")
        let starved = try #require(StallWatch.judge(Self.dump([
            Self.group([2], wait: "futex wait", symbols: ["DispatchSemaphore.wait()", "swift_job_run", "_dispatch_worker_thread"]),
            Self.group([1], wait: "sleep", symbols: ["usleep", "main"]),
        ]), suspicion: Self.suspicion([:], width: 1)))
        #expect(starved.kind == .starved)
        #expect(starved.message.contains("the only pool thread waits with no timeout") && starved.message.contains("(1 other thread waits with a timeout, in a sleep, or for a signal or input)"),
                "\(starved.message)")
        for message in [deadlocked.message, starved.message] {
            #expect(message.firstMatch(of: /\b1 [a-z ]*threads\b/) == nil, "\(message)")
            // The quiet time as every page writes a time: `2.00 s`, not `2.00s`.
            #expect(message.contains(/no CPU time for \d+\.\d\d s;/), "\(message)")
        }
    }

    /// libdispatch starts a worker about once a second while work is queued and every
    /// worker is blocked: a pool that keeps growing during the quiet spell is starved,
    /// though every thread waits with no timeout as in a deadlock (re-trial 33i's NEW-2).
    @Test func aBlockedDispatchPoolThatKeepsGrowingIsStarvedNotDeadlocked() throws {
        let groups = [
            Self.group([2, 3, 4], wait: "futex wait", symbols: ["DispatchSemaphore.wait()", "_dispatch_call_block_and_release", "_dispatch_worker_thread"]),
            Self.group([1], wait: "futex wait", symbols: ["DispatchSemaphore.wait()", "main"]),
            Self.group([5], wait: "epoll wait", symbols: ["epoll_wait", "_dispatch_event_loop_drain", "_dispatch_mgr_thread", "_dispatch_worker_thread"]),
        ]
        let grown = try #require(StallWatch.judge(Self.dump(groups), suspicion: Self.suspicion([:], started: [3, 4], watched: 1.9)))
        #expect(grown.kind == .starved, "\(grown.message)")
        #expect(grown.message.contains("all 3 pool threads wait with no timeout under dispatch frames, 2 of them started in the last 1.90 s"), "\(grown.message)")
        #expect(grown.pool == ExecStallVerdict.PoolCount(threads: 3, blocked: 3))
        // Not grown yet, or by one worker only, and watched too short to know it will not: asked again later.
        #expect(StallWatch.judgement(Self.dump(groups), suspicion: Self.suspicion([:], watched: 1.9)) == .watchPoolGrowth)
        #expect(StallWatch.judgement(Self.dump(groups), suspicion: Self.suspicion([:], started: [4], watched: 1.9)) == .watchPoolGrowth)
        // Watched long enough without a new worker: nothing queued wakes them.
        let still = try #require(StallWatch.judge(Self.dump(groups), suspicion: Self.suspicion([:], watched: 2.6)))
        #expect(still.kind == .deadlocked, "\(still.message)")
        // One new worker is a block that came late (a timer's), not a pool that keeps growing (re-trial 33j).
        #expect(StallWatch.judge(Self.dump(groups), suspicion: Self.suspicion([:], started: [4], watched: 2.6))?.kind == .deadlocked)
        // New threads that are not libdispatch's workers are not the pool growing.
        let other = [Self.group([2, 3], wait: "futex wait", symbols: ["DispatchSemaphore.wait()", "_dispatch_worker_thread"]),
                     Self.group([1, 6, 7], wait: "futex wait", symbols: ["pthread_cond_wait", "main"])]
        #expect(StallWatch.judge(Self.dump(other), suspicion: Self.suspicion([:], started: [6, 7], watched: 2.6))?.kind == .deadlocked)
    }

    /// A main thread parked in `dispatch_main` (`sigsuspend`) runs only signal handlers: blocked
    /// libdispatch workers beside it that the pool does not add to are deadlocked (re-trial 33j:
    /// called starved), while Swift concurrency's pool, which never grows, stays starved.
    @Test func aMainThreadParkedInDispatchMainLeavesBlockedWorkersDeadlockedAndBlockedJobsStarved() throws {
        let parked = Self.group([1], wait: "sigsuspend", symbols: ["sigsuspend", "dispatch_main", "main"])
        let workers = Self.dump([Self.group([2, 3], wait: "futex wait", symbols: ["DispatchSemaphore.wait()", "_dispatch_worker_thread"]), parked])
        #expect(StallWatch.judge(workers, suspicion: Self.suspicion([:], watched: 2.6))?.kind == .deadlocked)
        let jobs = Self.dump([Self.group([2, 3], wait: "futex wait", symbols: ["DispatchSemaphore.wait()", "swift_job_run", "_dispatch_worker_thread"]), parked])
        let starved = try #require(StallWatch.judge(jobs, suspicion: Self.suspicion([:], watched: 2.6)))
        #expect(starved.kind == .starved && starved.message.contains("(1 other thread waits with a timeout, in a sleep, or for a signal or input)"), "\(starved.message)")
    }

    /// Fewer of Swift concurrency's threads blocked than the pool may have: a queued job would
    /// have had a thread, so the blocked job waits for one that cannot run (work queued to the
    /// actor it holds), not for a thread: deadlocked when nothing else is awake, no verdict
    /// when something is (re-trial 33j's NEW-1: called starved, "a pool of 1").
    @Test func jobsBlockedInACooperativePoolWithAThreadFreeAreDeadlockedNotStarved() throws {
        let parked = Self.group([1], wait: "sigsuspend", symbols: ["sigsuspend", "dispatch_main", "main"])
        let oneJob = Self.group([2], wait: "futex wait", symbols: ["DispatchSemaphore.wait()", "Box.waitOnSelf(_:)", "swift_job_run", "_dispatch_worker_thread"])
        let deadlocked = try #require(StallWatch.judge(Self.dump([oneJob, parked]), suspicion: Self.suspicion([:], width: 2)))
        #expect(deadlocked.kind == .deadlocked, "\(deadlocked.message)")
        #expect(deadlocked.message.contains("; 1 of Swift concurrency's 2 pool threads waits with no timeout under concurrency frames and every other thread (1) is parked in dispatch_main: the pool had a thread free"),
                "\(deadlocked.message)")
        #expect(deadlocked.pool == ExecStallVerdict.PoolCount(threads: 2, blocked: 1))
        // With a thread awake, it may be what the job waits for.
        let sleeping = Self.group([1], wait: "sleep", symbols: ["usleep", "main"])
        #expect(StallWatch.judgement(Self.dump([oneJob, sleeping]), suspicion: Self.suspicion([:], width: 2)) == .none)
        // Two blocked jobs in a pool of four: room all the same.
        let twoJobs = Self.group([2, 3], wait: "futex wait", symbols: ["DispatchSemaphore.wait()", "swift_job_run", "_dispatch_worker_thread"])
        #expect(StallWatch.judge(Self.dump([twoJobs, parked]), suspicion: Self.suspicion([:], width: 4))?.kind == .deadlocked)
        // As many as it may have: starved, whatever the rest does.
        #expect(StallWatch.judge(Self.dump([twoJobs, parked]), suspicion: Self.suspicion([:], width: 2))?.kind == .starved)
        #expect(StallWatch.judge(Self.dump([twoJobs, sleeping]), suspicion: Self.suspicion([:], width: 2))?.kind == .starved)
        #expect(StallWatch.judge(Self.dump([oneJob, sleeping]), suspicion: Self.suspicion([:], width: 1))?.kind == .starved)
    }

    /// The threads a verdict is judged on are one moment of the process: a thread listed
    /// and gone before its state was read, or a list that changed meanwhile, leaves no
    /// snapshot, and the watch reads again at its next sample. (A test run had kept the
    /// joining thread as it was before the thread it joined ended, and dropped that one:
    /// "every thread (1) waits on a lock", withdrawn when the program ran on.)
    @Test func aThreadThatEndsWhileTheThreadsAreReadLeavesNoSnapshotToJudge() {
        let joining = ThreadState(tid: 10, name: "locks", state: "S", syscall: ThreadState.futexCall, arguments: [0x1000, 0, 11, 0, 0, 0])
        let timed = ThreadState(tid: 11, name: "locks", state: "S", syscall: ThreadState.futexCall, arguments: [0x2000, 0x189, 0, 0x7fff_0000, 0, 0])
        let states = [10: joining, 11: timed]
        let whole = StallWatch.snapshot(tids: { [10, 11] }, read: { states[$0] })
        #expect(whole?.map(\.tid) == [10, 11])
        // Thread 11 ended between the list and its read.
        #expect(StallWatch.snapshot(tids: { [10, 11] }, read: { $0 == 11 ? nil : states[$0] }) == nil)
        // The list changed while the states were read.
        var lists = [[10, 11], [10]]
        #expect(StallWatch.snapshot(tids: { lists.removeFirst() }, read: { states[$0] }) == nil)
    }

    /// Blocked libdispatch workers beside a thread that sleeps and will signal them: a slow
    /// program, not a starved pool, unless the pool keeps growing (nothing waits on the queue
    /// otherwise). It was called starved, then withdrawn when the program ran on (re-trial 33j).
    @Test func blockedDispatchWorkersBesideASleepingThreadAreStarvedOnlyWhenThePoolGrows() throws {
        let groups = [
            Self.group([2, 3], wait: "futex wait", symbols: ["DispatchSemaphore.wait()", "_dispatch_call_block_and_release", "_dispatch_worker_thread"]),
            Self.group([1], wait: "sleep (nanosleep)", symbols: ["sleep", "main"]),
        ]
        #expect(StallWatch.judgement(Self.dump(groups), suspicion: Self.suspicion([:], watched: 1.0)) == .watchPoolGrowth)
        #expect(StallWatch.judgement(Self.dump(groups), suspicion: Self.suspicion([:], watched: 2.6)) == StallWatch.Judgement.none)
        let grown = try #require(StallWatch.judge(Self.dump(groups), suspicion: Self.suspicion([:], started: [2, 3], watched: 2.6)))
        #expect(grown.kind == .starved && grown.message.contains("all of them started in the last 2.60 s"), "\(grown.message)")
    }

    /// Beside blocked workers, a thread that reads (a timerfd, a signalfd, a pipe), polls or
    /// waits in `sigwait` can be woken by what the process does not hold: no verdict, with
    /// or without an idle worker (re-trial 33k: `deadlocked` at 1 s, "none can wake another",
    /// withdrawn when the timer fired or the signal came). A thread in `pause` is parked, as
    /// `dispatch_main`'s is; a futex wait stays what it was.
    @Test func blockedWorkersBesideAThreadWaitingForInputOrASignalAreNotDeadlocked() throws {
        let workers = Self.group([2, 3], wait: "futex wait", symbols: ["DispatchSemaphore.wait()", "_dispatch_worker_thread"])
        let idle = Self.group([4], wait: "futex wait (timed)", symbols: ["_dispatch_sema4_timedwait", "_dispatch_worker_thread"])
        let joining = Self.group([1], wait: "futex wait", symbols: ["pthread_join", "main"])
        for wait in ["read", "sigtimedwait", "poll", "epoll wait", "select", "wait4"] {
            let helper = Self.group([5], wait: wait, symbols: ["helper"])
            for watched in [1.0, 2.6] {
                let judged = StallWatch.judgement(Self.dump([workers, idle, joining, helper]), suspicion: Self.suspicion([:], watched: watched))
                #expect(judged == StallWatch.Judgement.none, "\(wait), watched \(watched) s: \(judged)")
            }
            #expect(StallWatch.judgement(Self.dump([workers, joining, helper]), suspicion: Self.suspicion([:], watched: 2.6)) == StallWatch.Judgement.none, "\(wait)")
        }
        let locked = Self.group([5], wait: "futex wait", symbols: ["pthread_mutex_lock", "helper"])
        #expect(StallWatch.judge(Self.dump([workers, idle, joining, locked]), suspicion: Self.suspicion([:], watched: 1.0))?.kind == .deadlocked)
        let paused = Self.group([1], wait: "pause", symbols: ["pause", "main"])
        #expect(StallWatch.judge(Self.dump([workers, paused]), suspicion: Self.suspicion([:], watched: 2.6))?.kind == .deadlocked)
    }

    @Test func aDispatchPoolAtLibdispatchsLimitWithEveryWorkerBlockedIsStarved() throws {
        let limit = DispatchPool.workerLimit
        let dump = Self.dump([
            Self.group(Array(2..<(2 + limit)), wait: "futex wait", symbols: ["DispatchSemaphore.wait()", "_dispatch_worker_thread"]),
            Self.group([1], wait: "futex wait", symbols: ["DispatchSemaphore.wait()", "main"]),
        ])
        let verdict = try #require(StallWatch.judge(dump, suspicion: Self.suspicion([:], watched: 0.5)))
        #expect(verdict.kind == .starved, "\(verdict.message)")
        #expect(verdict.message.contains("libdispatch's limit"), "\(verdict.message)")
    }

    /// Where a thread waits, for a verdict's message: not where the dump found it running,
    /// which it reached after the watch read its wait (a Ctrl-C during the dump woke it, and
    /// it named "_PyTime_AsMicroseconds" as the place a Python thread waited: re-trial 33i's NEW-4).
    @Test func aThreadTheDumpFoundRunningHasNoPlaceOfWaiting() {
        let waiting = Self.group([1], wait: "futex wait", symbols: ["take_b", "main"])
        var running = Self.group([2], wait: nil, symbols: ["_PyTime_AsMicroseconds", "worker"])
        running.threads[0].state = "R"
        let dump = Self.dump([waiting, running])
        #expect(ExecSupervisor.place(of: 1, in: dump) == "take_b")
        #expect(ExecSupervisor.place(of: 2, in: dump) == nil)
    }

    @Test func aPoolWithAnIdleWorkerAndASleepingMainIsNotCalled() {
        let dump = Self.dump([
            Self.group([2], wait: "futex wait", symbols: ["DispatchSemaphore.wait()", "_dispatch_worker_thread"]),
            Self.group([3], wait: "futex wait (timed)", symbols: ["_dispatch_sema4_timedwait", "_dispatch_worker_thread"]),
            Self.group([1], wait: "sleep", symbols: ["usleep", "main"]),
        ])
        #expect(StallWatch.judge(dump, suspicion: Self.suspicion([:])) == nil)
    }

    @Test func aQuietProgramWithoutPoolThreadsIsNotCalled() {
        let dump = Self.dump([Self.group([1, 2], wait: "futex wait", symbols: ["pthread_mutex_lock", "main"])])
        #expect(StallWatch.judge(dump, suspicion: Self.suspicion([:])) == nil, "a lock-order deadlock without pools is left to strain dump")
    }

    @Test func argumentsAreRecordedAsAShellWouldReadThemBack() {
        #expect(ExecSupervisor.shellQuoted(["--port", "8080", "two words", "it's", ""]) == "--port 8080 'two words' 'it'\\''s' ''")
    }

    @Test func theProbeGoesFirstInLDPRELOADAndNamesItsFolder() {
        let supervisor = ExecSupervisor(probeLibrary: "/opt/strain/libStrainProbe.so", symbolizer: Symbolizer(llvmSymbolizer: nil))
        let request = ExecRequest(program: "server", arguments: [], folder: "/tmp/run", profile: .ios)
        let environment = supervisor.environment(for: request, base: ["LD_PRELOAD": "/usr/lib/libjemalloc.so", "HOME": "/root"])
        #expect(environment["LD_PRELOAD"] == "/opt/strain/libStrainProbe.so:/usr/lib/libjemalloc.so")
        #expect(environment["STRAIN_PROBE_DIR"] == "/tmp/run/probe")
        #expect(environment["STRAIN_PROBE_THREAD_STACK"] == "524288")
        #expect(environment["STRAIN_PROBE_MAIN_STACK"] == "1048576")
        #expect(environment["HOME"] == "/root")
    }
}
