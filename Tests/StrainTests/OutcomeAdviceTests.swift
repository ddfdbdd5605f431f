import Foundation
import StrainRecords
import StrainReports
import StrainText
import Testing

/// Every outcome kind that fails a run gets a "what to do" built from its record's
/// own facts, and report.html, summary.md and the terminal all say it.
@Suite struct OutcomeAdviceTests {
    /// A failing trial of `kind`, with the facts such a trial records.
    static func trial(_ kind: TrialOutcome.Kind, index: Int) -> TrialRecord {
        let key = TrialKey(scenario: "advice", parameters: [.init(name: "kind", value: kind.rawValue)], strategy: .gcdGlobal(.default), profile: .linux)
        var metrics = TrialMetrics()
        var outcome = TrialOutcome(kind: kind)
        var expected = ["completed"]
        switch kind {
        case .completed: expected = ["crashed"]
        case .threw: outcome.message = "DecodingError.keyNotFound"
        case .invariantViolated: outcome.message = "3 updates lost"
        case .stackOverflow:
            outcome.signal = 11
            metrics.stackSizeBytes = 512 * 1024
            metrics.frames = 1_000
        case .crashed: outcome.signal = 11
        case .timedOut: metrics.trialSeconds = 10
        case .harnessError: outcome.message = "the result pipe broke"
        case .confinementViolated, .dataRace, .starved, .deadlocked: break
        }
        var trial = TrialRecord(id: TrialID(key: key, repetition: 1), index: index, seed: 1, outcome: outcome, expected: false,
                                expectedOutcomes: expected, metrics: metrics, startedAt: "")
        switch kind {
        case .confinementViolated:
            trial.confinementViolations = [ConfinementViolation(object: "Note", access: "title (read)", owner: "queue strain.context", threadID: 7,
                                                                threadName: "worker", count: 1, accessStack: [], ownerStack: [])]
        case .dataRace:
            let frame = Frame(address: 0x1000, symbol: "Counter.bump()", file: "/src/Counter.swift", line: 12)
            trial.sanitizerReports = [SanitizerReport(tool: .threadSanitizer, kind: "data race", pid: 1, accesses: [.init(title: "Write", frames: [frame])],
                                                      location: [], threads: [], summary: "data race in Counter.bump()", count: 1, text: "")]
        case .starved:
            trial.stall = StallReport(thresholdSeconds: 1, silentSeconds: 1.2, reportedAfterSeconds: 1.3, queued: 10, started: 4, finished: 0,
                                      threadsInWork: 4, threadsInUntimedWait: 4)
        case .deadlocked:
            let cycle = WaitCycle(description: "thread 1 holds lock A and waits for lock B, held by thread 2, which waits for lock A",
                                  links: [WaitLink(tid: 1, holding: "lock A", waitsFor: "lock B"), WaitLink(tid: 2, holding: "lock B", waitsFor: "lock A")])
            trial.dump = ThreadDump(method: "signal", threadCount: 2, groups: [], waitCycle: cycle, unreached: [], dumpNanoseconds: 1_000)
        case .completed, .threw, .invariantViolated, .stackOverflow, .crashed, .timedOut, .harnessError: break
        }
        return trial
    }

    /// What the advice for `kind` must say: the fix, and the record's own facts where it has them.
    static func phrases(_ kind: TrialOutcome.Kind) -> [String] {
        switch kind {
        case .completed: ["It completed where the suite expects crashed"]
        case .threw: ["work threw (DecodingError.keyNotFound): fix or handle the error where it is thrown"]
        case .invariantViolated: ["wrong result (3 updates lost)", "Guard the shared state"]
        case .stackOverflow: ["Overflows 512 KiB", "to tell deep recursion from unbounded"]
        case .confinementViolated: ["Note.title (read) on thread 7, owned by queue strain.context", "hop to its owner first"]
        case .dataRace: ["Two threads touched the same memory without ordering", "Counter.bump() (Counter.swift:12)", "behind one Mutex, serial queue or actor"]
        case .crashed: ["It died of SIGSEGV", "a bad memory access"]
        case .starved: ["4 blocked items filled a pool of 4 while 6 more waited to start", "size the pool for it"]
        case .deadlocked: ["lock A then lock B, lock B then lock A", "take them in one order everywhere"]
        // Its time is start to end, the stop after the deadline included: "after 2.00 s of running" beside
        // "no result within 1.00 s" read as two deadlines (re-trial 35m, N4).
        case .timedOut: ["The parent killed it at the trial", "deadline (10.0 s from its start to its end, the stop after the deadline included)", "lets the watchdog dump every thread"]
        case .harnessError: ["Strain itself failed (the result pipe broke)"]
        }
    }

    static func run() -> RunRecord {
        RunRecord(
            suite: ResolvedSuite(name: "advice", description: nil, path: "advice.yaml", repetitions: 1, timeoutSeconds: 10, stallSeconds: 1, profiles: ["linux"], runs: []),
            environment: EnvironmentRecord(host: "h", cores: 2, memoryBytes: 0, kernel: "k", architecture: "x86_64", swiftVersion: "6", rlimits: [:], gitCommit: nil),
            startedAt: "", finishedAt: "", runnerPeakRSSBytes: 0,
            trials: TrialOutcome.Kind.allCases.enumerated().map { trial($0.element, index: $0.offset) })
    }

    @Test func everyOutcomeKindHasWhatToDoInTheTerminalSummaryAndPage() throws {
        let run = Self.run()
        let views = [("terminal", TerminalReport(color: false).render(run)), ("summary.md", MarkdownReport.render(run)), ("report.html", TestFiles.readable(HTMLReport.render(run)))]
        for (name, text) in views {
            let why = try #require(text.range(of: "Why, and what to do"), "\(name) has an answer block:\n\(text)")
            let answer = String(text[why.upperBound...])
            for kind in TrialOutcome.Kind.allCases {
                for phrase in Self.phrases(kind) {
                    #expect(answer.contains(phrase), "\(name): \(kind)'s advice says \"\(phrase)\"")
                }
            }
        }
    }

    @Test func anExpectedStallStillSaysWhatToDoInEveryView() throws {
        var run = Self.run()
        var deadlock = Self.trial(.deadlocked, index: 0)
        deadlock.expected = true
        deadlock.expectedOutcomes = ["deadlocked"]
        run.trials = [deadlock]
        let views = [("terminal", TerminalReport(color: false).render(run)), ("summary.md", MarkdownReport.render(run)), ("report.html", HTMLReport.render(run))]
        for (name, text) in views {
            #expect(text.contains("every outcome expected"), "\(name)")
            #expect(text.contains("lock A then lock B, lock B then lock A): take them in one order everywhere"), "\(name) advises on the stall:\n\(text)")
        }
    }

    /// An outcome the suite expects says what to do as an unexpected one does, under its
    /// key, its outcome and ", expected": a passing run advised its expected overflows and
    /// stalls but not its expected crash or throw (re-trial 35o, F5).
    @Test func everyOutcomeTheSuiteExpectsStillSaysWhatToDoInEveryView() throws {
        var run = Self.run()
        let kinds = TrialOutcome.Kind.allCases.filter { $0 != .completed && $0 != .harnessError }
        run.trials = kinds.enumerated().map { index, kind in
            var trial = Self.trial(kind, index: index)
            trial.expected = true
            trial.expectedOutcomes = [kind.rawValue]
            return trial
        }
        let views = [("terminal", TerminalReport(color: false).render(run)), ("summary.md", MarkdownReport.render(run)), ("report.html", TestFiles.readable(HTMLReport.render(run)))]
        for (name, text) in views {
            #expect(text.contains("every outcome expected"), "\(name)")
            let why = try #require(text.range(of: "Why, and what to do"), "\(name) has an answer block:\n\(text)")
            let answer = String(text[why.upperBound...])
            for kind in kinds {
                for phrase in Self.phrases(kind) {
                    #expect(answer.contains(phrase), "\(name): the expected \(kind)'s advice says \"\(phrase)\"")
                }
            }
            #expect(answer.contains("kind=crashed] gcd-global linux: crashed(SIGSEGV), expected"), "\(name):\n\(answer)")
            #expect(!answer.contains("or add threw to the run's expect"), "\(name): threw is already expected")
        }
    }

    /// A program under `strain exec` that completed, whose dump was kept because --stall saw it
    /// wait on an outside event: the page and summary.md say what the watch saw, not the suite
    /// advice "It completed where the suite expects completed: if the fault is fixed, …", and
    /// count its one dumped thread in the singular (re-trial 33k: "1 threads dumped").
    @Test func anExecProgramThatCompletedAfterAWaitOnAnOutsideEventSaysWhatTheWatchSaw() throws {
        var run = Self.run()
        var trial = Self.trial(.completed, index: 0)
        trial.scenario = TrialKey.execScenario
        trial.expected = true
        trial.expectedOutcomes = ["completed"]
        let saw = "--stall saw it waiting on an outside event: no CPU time for 1.02 s; every thread (1) waits on a lock or condition with no timeout; "
            + "not deadlocked: it installed its own handler for SIGHUP, which a signal sent to it runs; then the program exited with status 0"
        trial.outcome.message = saw
        trial.dump = ThreadDump(method: "signal", threadCount: 1, groups: [], waitCycle: nil, unreached: [], dumpNanoseconds: 133_000)
        run.trials = [trial]
        for (name, text) in [("summary.md", MarkdownReport.render(run)), ("report.html", TestFiles.readable(HTMLReport.render(run)))] {
            #expect(text.contains("It completed: nothing to fix (\(saw))."), "\(name):\n\(text)")
            #expect(!text.contains("It completed where the suite expects"), "\(name)")
            #expect(text.contains("completed; 1 thread dumped in") && !text.contains("1 threads"), "\(name):\n\(text)")
        }
    }

    /// A JVM's Java-level deadlock, named by the JVM under `strain exec --stall`, is advised on
    /// its monitors: before, "Every worker blocked with nothing to wake them (among them, 2
    /// threads waited in futex wait ← PosixSemaphore::wait ← GangWorker::loop …)", the garbage
    /// collector's idle threads (re-trial 33k).
    @Test func aJVMsDeadlockIsAdvisedOnItsMonitorsNotOnTheThreadsTheDumpSawFirst() {
        var trial = Self.trial(.deadlocked, index: 0)
        trial.scenario = TrialKey.execScenario
        let cycle = "\"first\" waits to lock a java.lang.Object held by \"second\"; \"second\" waits to lock a java.lang.Object held by \"first\""
        trial.outcome.message = "no CPU time for 1.02 s; the JVM's own thread dump (jcmd 42 Thread.print, kept in out/probe/jvm-threads-42.txt) found a Java-level deadlock: "
            + cycle + "; then the program was killed by SIGTERM"
        trial.dump = ThreadDump(method: "signal", threadCount: 2, groups: [
            ThreadGroup(count: 2, summary: "futex wait", inWork: false, threads: [], frames: [Frame(address: 1, symbol: "PosixSemaphore::wait"), Frame(address: 2, symbol: "GangWorker::loop")]),
        ], waitCycle: nil, unreached: [], dumpNanoseconds: 1_000)
        let advice = OutcomeAdvice.text(for: trial)
        #expect(advice == "The threads wait on each other's monitors (\(cycle)): take them in one order everywhere, or hold only one at a time.", "\(advice)")
    }

    /// glibc's abort on a corrupted heap (the unguarded collection's race, a double free) is
    /// advised as that, not as "a trap or an abort … make the code check for the case it
    /// trapped on" (re-trial 35n, F5, 3 of 3); another abort keeps that advice.
    @Test func anAbortOnACorruptedHeapIsAdvisedAsARaceOrADoubleFreeNotAMissingCheck() {
        var trial = Self.trial(.crashed, index: 0)
        trial.outcome.signal = 6
        for words in ["double free or corruption (!prev)", "corrupted size vs. prev_size while consolidating", "free(): invalid pointer"] {
            trial.lastWords = words + "\n"
            let advice = OutcomeAdvice.text(for: trial)
            #expect(advice.contains("glibc finding its heap corrupted") && advice.contains("ThreadSanitizer") && !advice.contains("make the code check"), "\(words): \(advice)")
        }
        trial.lastWords = "Fatal error: Index out of range\n"
        #expect(OutcomeAdvice.text(for: trial).contains("make the code check for the case it trapped on"))
    }

    /// A key whose repetitions crashed differently gets each outcome's advice, from its own
    /// first trial: an abort on a corrupted heap first, then two SIGSEGVs of the same race, got
    /// only the abort's (re-trial 35n, F5's second half).
    @Test func eachOutcomeOfOneKeyGetsItsOwnAdviceInEveryView() throws {
        var run = Self.run()
        run.trials = (0..<3).map { index in
            var trial = Self.trial(.crashed, index: index)
            trial.id.repetition = index + 1
            if index == 0 {
                trial.outcome.signal = 6
                trial.lastWords = "double free or corruption (!prev)\n"
            }
            return trial
        }
        let views = [("terminal", TerminalReport(color: false).render(run)), ("summary.md", MarkdownReport.render(run)), ("report.html", TestFiles.readable(HTMLReport.render(run)))]
        for (name, text) in views {
            let why = try #require(text.range(of: "Why, and what to do"), "\(name) has an answer block:\n\(text)")
            let answer = String(text[why.upperBound...])
            #expect(answer.contains("crashed(SIGABRT)") && answer.contains("glibc finding its heap corrupted"), "\(name): the abort's advice:\n\(answer)")
            #expect(answer.contains("crashed(SIGSEGV) ×2") && answer.contains("It died of SIGSEGV"), "\(name): the SIGSEGVs' advice:\n\(answer)")
        }
    }

    /// A crash by a signal that is not a fault says who sent it where the record knows: the
    /// runner's thread limit (the outcome's message). Before: "That is the process was killed
    /// by a signal it did not handle" (re-trial 35m, N3).
    @Test func aTrialKilledForItsThreadLimitIsToldWhoSentTheSignal() {
        var trial = Self.trial(.crashed, index: 0)
        trial.outcome.signal = 9
        trial.outcome.message = "the child started more than its limit of 200 threads (292 sampled) and was killed with its process group"
        let advice = OutcomeAdvice.text(for: trial)
        #expect(advice == "It died of SIGKILL. That is a signal it did not handle (the child started more than its limit of 200 threads "
            + "(292 sampled) and was killed with its process group), sent to it from outside or raised by itself (raise or kill in its own code): find who sends it and why, or handle it.", "\(advice)")
    }

    /// A deadlock's advice names the blocked job, not an async main's thread parked in
    /// `dispatch_main` listed first: "(among them, 1 thread waited in sigsuspend)" (re-trial 33k).
    @Test func aDeadlocksAdviceSkipsAMainThreadParkedInDispatchMain() {
        var trial = Self.trial(.deadlocked, index: 0)
        trial.dump = ThreadDump(method: "signal", threadCount: 2, groups: [
            ThreadGroup(count: 1, summary: "sigsuspend", inWork: false, threads: [DumpedThread(tid: 1, name: "main", state: "S", wait: "sigsuspend", viaPtrace: false)],
                        frames: [Frame(address: 1, symbol: "_dispatch_sig_thread")]),
            ThreadGroup(count: 1, summary: "futex wait ← A.blockOnSelf()", inWork: false, threads: [DumpedThread(tid: 2, name: "w", state: "S", wait: "futex wait", viaPtrace: false)],
                        frames: [Frame(address: 2, symbol: "A.blockOnSelf()")]),
        ], waitCycle: nil, unreached: [], dumpNanoseconds: 1_000)
        let advice = OutcomeAdvice.text(for: trial)
        #expect(advice.contains("(among them, 1 thread waited in futex wait ← A.blockOnSelf())") && !advice.contains("sigsuspend"), "\(advice)")
    }

    @Test func aDeadlockOnAQueueSaysWhichSyncToMakeAsync() {
        var trial = Self.trial(.deadlocked, index: 0)
        trial.dump?.waitCycle = WaitCycle(description: "thread 1 runs on queue strain.a and syncs onto queue strain.b, which syncs back",
                                          links: [WaitLink(tid: 1, holding: "queue strain.a", waitsFor: "queue strain.b"),
                                                  WaitLink(tid: 2, holding: "queue strain.b", waitsFor: "queue strain.a")])
        let advice = OutcomeAdvice.text(for: trial)
        #expect(advice.contains("(queue strain.a → queue strain.b → queue strain.a): make the sync onto queue strain.b async"), "\(advice)")
    }
}

/// Real failing trials through the built binary: each outcome the crash and
/// stack-depth scenarios produce for real gets its "what to do" in every view.
@Suite(.timeLimit(.minutes(10))) struct OutcomeAdviceEndToEndTests {
    @Test func aRealCrashThrowTimeoutDeadlockAndOverflowEachSayWhatToDoInEveryView() async throws {
        let (result, run, out) = try await StrainBinary.runSuite("""
            name: advice
            timeout: 1500ms
            runs:
              - scenario: crash
                parameters: {kind: [null-dereference, throw, hang, lock-order]}
                strategies: [main]
              - scenario: stack-depth
                strategies: [thread(512KiB)]
              - scenario: crash
                parameters: {kind: [hang]}
                strategies: [gcd-global]
            """, timeout: 120)
        defer { try? FileManager.default.removeItem(atPath: (out as NSString).deletingLastPathComponent) }
        #expect(result.status == 1, "\(result.stdout)\n\(result.stderr)")
        let record = try #require(run)
        let kinds = Set(record.trials.map(\.outcome.kind))
        #expect(kinds == [.crashed, .threw, .timedOut, .deadlocked, .stackOverflow], "\(record.trials.map(\.outcome))")
        let phrases: [TrialOutcome.Kind: [String]] = [
            .crashed: ["crash[kind=null-dereference] main linux: crashed(SIGSEGV)", "It died of SIGSEGV in", "a bad memory access"],
            .threw: ["crash[kind=throw] main linux: threw", "fix or handle the error where it is thrown"],
            .timedOut: ["crash[kind=hang] main linux", "The parent killed it at the trial"],
            .deadlocked: ["crash[kind=lock-order] main linux", "in one order"],
            .stackOverflow: ["stack-depth[frame=512B, limit=0] thread(512KiB) linux: stackOverflow", "Overflows 512 KiB"],
        ]
        let summary = try String(contentsOfFile: out + "/summary.md", encoding: .utf8)
        let page = try String(contentsOfFile: out + "/report.html", encoding: .utf8)
        // The hang's advice points at the hung work, never at Strain's own wait for its result.
        let hangs = record.trials.filter { $0.outcome.kind == .timedOut }
        #expect(hangs.count == 2, "\(record.trials.map(\.outcome))")
        for hang in hangs {
            let advice = OutcomeAdvice.text(for: hang)
            #expect(!advice.contains("ResultHandoff") && advice.contains("waited in sleep (nanosleep) ← ") && advice.contains("CrashScenario.prepare(context:)"),
                    "\(hang.key): \(advice)")
        }
        for (name, text) in [("terminal", result.stdout), ("summary.md", summary), ("report.html", TestFiles.readable(page))] {
            let why = try #require(text.range(of: "Why, and what to do"), "\(name) has an answer block:\n\(text)")
            let answer = String(text[why.upperBound...])
            for (kind, said) in phrases {
                for phrase in said {
                    #expect(answer.contains(phrase), "\(name): \(kind)'s advice says \"\(phrase)\":\n\(answer.prefix(3000))")
                }
            }
        }
    }
}

/// A wait cycle of one thread is a re-entry, not a lock order; a busy thread is running, not waiting.
extension OutcomeAdviceTests {
    @Test func aThreadThatReentersItsOwnLockIsToldToNotReenterOrUseARecursiveLock() {
        var trial = Self.trial(.deadlocked, index: 0)
        trial.dump?.waitCycle = WaitCycle(description: "thread 7 holds the guard and waits for the guard, which only it can release",
                                          links: [WaitLink(tid: 7, holding: "the guard", waitsFor: "the guard")])
        let advice = OutcomeAdvice.text(for: trial)
        #expect(!advice.contains("opposite orders"), "\(advice)")
        #expect(advice.contains("re-entered the guard while holding it"), "\(advice)")
        #expect(advice.contains("does not call back into code that takes the guard") && advice.contains("recursive lock (NSRecursiveLock)"), "\(advice)")

        trial.dump?.waitCycle = WaitCycle(description: "thread 7 runs on queue strain.q and syncs onto it",
                                          links: [WaitLink(tid: 7, holding: "queue strain.q", waitsFor: "queue strain.q")])
        let queue = OutcomeAdvice.text(for: trial)
        #expect(queue.contains("waits for queue strain.q while already running on it (a sync onto it, or a wait for work queued behind it there)"), "\(queue)")
        #expect(!queue.contains("→"), "no ring of one queue: \(queue)")
    }

    /// A one-thread dump by signal of `groups`, with no wait cycle.
    static func dump(_ groups: [ThreadGroup]) -> ThreadDump {
        ThreadDump(method: "signal", threadCount: 1, groups: groups, waitCycle: nil, unreached: [], dumpNanoseconds: 1_000)
    }

    @Test func aTimeoutWhileAThreadRanSaysItWasRunningNotWaiting() {
        var trial = Self.trial(.timedOut, index: 0)
        let thread = DumpedThread(tid: 9, name: "worker", state: "R", wait: nil, viaPtrace: false)
        trial.dump = Self.dump([ThreadGroup(count: 1, summary: "running ← static FaultScenario.fail(_:) ← …", inWork: true, threads: [thread], frames: [])])
        let advice = OutcomeAdvice.text(for: trial)
        #expect(advice.contains("while 1 thread was running in static FaultScenario.fail(_:) ← …:"), "\(advice)")
        #expect(!advice.contains("waited in running"), "\(advice)")
        // A waiting thread still waited.
        trial.dump?.groups = [ThreadGroup(count: 2, summary: "futex wait ← f()", inWork: true, threads: [thread, thread], frames: [])]
        #expect(OutcomeAdvice.text(for: trial).contains("while 2 threads waited in futex wait ← f():"))
        // The thread that answered the dump waited where its summary says, not "in took the dump
        // request in …" (re-trial 33c).
        trial.dump?.groups = [ThreadGroup(count: 1, summary: "took the dump request in __new_sem_wait_slow64 ← main", inWork: true, threads: [thread], frames: [])]
        let answered = OutcomeAdvice.text(for: trial)
        #expect(answered.contains("while 1 thread waited in __new_sem_wait_slow64 ← main:") && !answered.contains("waited in took"), "\(answered)")
    }

    /// A deadlock in a descendant of `strain exec`'s program: the dump holds the program's
    /// threads (a launcher in `wait4`), not the deadlocked process's, so the advice names the
    /// process and how to see its stacks. It said "1 thread waited in __wait4 ← main" (re-trial 33c, F4).
    @Test func aDeadlockInADescendantProcessNamesThatProcessNotTheProgramsWait() {
        var trial = Self.trial(.deadlocked, index: 0)
        trial.outcome.message = "in process 4242 (a descendant of the program, ./service): no CPU time for 2.01 s; every thread (2) waits on a lock or condition with no timeout"
        let thread = DumpedThread(tid: 4241, name: "sh", state: "S", wait: nil, viaPtrace: false)
        trial.dump = Self.dump([ThreadGroup(count: 1, summary: "took the dump request in __wait4 ← main", inWork: false, threads: [thread], frames: [])])
        let advice = OutcomeAdvice.text(for: trial)
        #expect(advice.hasPrefix("Every thread of process 4242 blocked with nothing to wake them: find what they wait for"), "\(advice)")
        #expect(advice.contains("gdb -p 4242") && !advice.contains("__wait4"), "\(advice)")
    }

    /// A program's deadlock with no cycle read: the advice names the threads that wait on the
    /// locks, not the main thread that took the dump request while it joined them. A Rust
    /// program's said "1 thread waited in __pthread_clockjoin_ex ← …::join" (re-trial 35l).
    @Test func aProgramsDeadlockIsAdvisedByTheLockWaitersNotTheJoiningMainThread() {
        var trial = Self.trial(.deadlocked, index: 0)
        let thread = DumpedThread(tid: 4241, name: "main", state: "S", wait: nil, viaPtrace: false)
        let main = ThreadGroup(count: 1, summary: "took the dump request in __pthread_clockjoin_ex ← <std::sys::thread::unix::Thread>::join ← rust_deadlock::main",
                               inWork: false, threads: [thread], frames: [])
        let waiters = ThreadGroup(count: 2, summary: "<std::sys::sync::mutex::futex::Mutex>::lock_contended ← rust_deadlock::restock", inWork: false,
                                  threads: [thread, thread], frames: [Self.frame("rust_deadlock::restock", "/home/team/shop/src/main.rs")])
        trial.dump = Self.dump([main, waiters])
        let advice = OutcomeAdvice.text(for: trial)
        #expect(advice.contains("(among them, 2 threads waited in <std::sys::sync::mutex::futex::Mutex>::lock_contended ← rust_deadlock::restock)"), "\(advice)")
        #expect(!advice.contains("join"), "\(advice)")
        // The thread that took the request is still named when it is the only one.
        trial.dump = Self.dump([main])
        #expect(OutcomeAdvice.text(for: trial).contains("(among them, 1 thread waited in __pthread_clockjoin_ex"))
        // Nor a main thread that joins while the dump was asked on another, listed first; and a
        // program with no pool has threads, not workers (re-trial 33l, F6: "Every worker blocked …
        // (among them, 1 thread waited in futex wait ← <std::sys::thread::unix::Thread>::join …").
        let joining = ThreadGroup(count: 1, summary: "futex wait ← <std::sys::thread::unix::Thread>::join ← rs_abba::main", inWork: false, threads: [thread], frames: [])
        trial.dump = Self.dump([joining, waiters])
        let joined = OutcomeAdvice.text(for: trial)
        #expect(joined.hasPrefix("Every thread blocked with nothing to wake them (among them, 2 threads waited in <std::sys::sync::mutex::futex::Mutex>::lock_contended"), "\(joined)")
    }

    /// A GCD deadlock's dump with an idle worker beside the blocked ones: the idle worker waits
    /// with a timeout, so it is not "among" the blocked threads the advice names; it was named
    /// first, "among them, 1 thread waited in futex wait (timed) ← …" (re-trial 33j's NEW-7).
    @Test func aDeadlocksAdviceNamesTheThreadsThatWaitWithNoTimeoutNotAnIdleWorker() {
        var trial = Self.trial(.deadlocked, index: 0)
        let idleThread = DumpedThread(tid: 4242, name: "worker", state: "S", wait: "futex wait (timed)", viaPtrace: false)
        let blockedThread = DumpedThread(tid: 4243, name: "worker", state: "S", wait: "futex wait", viaPtrace: false)
        let idle = ThreadGroup(count: 1, summary: "futex wait (timed) ← start_wqthread", inWork: false, threads: [idleThread], frames: [])
        let blocked = ThreadGroup(count: 2, summary: "futex wait ← closure #1 in transfer(_:_:) ← main", inWork: false,
                                  threads: [blockedThread, blockedThread], frames: [])
        trial.dump = Self.dump([idle, blocked])
        let advice = OutcomeAdvice.text(for: trial)
        #expect(advice.contains("(among them, 2 threads waited in futex wait ← closure #1 in transfer(_:_:) ← main)") && !advice.contains("(timed)"), "\(advice)")
        // A stall that is not a deadlock may still name the idle worker's group.
        trial.outcome.kind = .timedOut
        #expect(OutcomeAdvice.text(for: trial).contains("1 thread waited in futex wait (timed)"), "\(OutcomeAdvice.text(for: trial))")
    }

    /// A deadlock's dump in which a thread runs: a Ctrl-C during the dump woke it, and it was
    /// exiting. The advice names a group that waits, not where the exit ran; it said "among
    /// them, 1 thread was running in _dl_call_fini" (re-trial 33i's NEW-4).
    @Test func aDeadlocksAdviceNamesThreadsThatWaitNotOneTheDumpFoundRunning() {
        var trial = Self.trial(.deadlocked, index: 0)
        let thread = DumpedThread(tid: 4241, name: "intrn", state: "R", wait: nil, viaPtrace: false)
        let exiting = ThreadGroup(count: 1, summary: "running ← _dl_call_fini ← exit", inWork: false, threads: [thread],
                                  frames: [Self.frame("_dl_call_fini", "/home/team/intrn/src/main.c")])
        let waiting = ThreadGroup(count: 2, summary: "futex wait ← idle ← start_thread", inWork: false, threads: [thread, thread], frames: [])
        trial.dump = Self.dump([exiting, waiting])
        let advice = OutcomeAdvice.text(for: trial)
        #expect(advice.contains("(among them, 2 threads waited in futex wait ← idle ← start_thread)") && !advice.contains("_dl_call_fini"), "\(advice)")
        // A stall that is not a deadlock still names a busy thread as busy.
        trial.outcome.kind = .timedOut
        #expect(OutcomeAdvice.text(for: trial).contains("_dl_call_fini"), "\(OutcomeAdvice.text(for: trial))")
    }
}

/// The built-in reentrant-guard scenario for real: its advice, in every view, is about re-entry.
@Suite(.timeLimit(.minutes(10))) struct ReentryAdviceEndToEndTests {
    @Test func theReentrantGuardsDeadlockIsAdvisedAsAReentryInEveryView() async throws {
        let (result, run, out) = try await StrainBinary.runSuite("""
            name: reentry
            runs:
              - scenario: reentrant-guard
                strategies: [thread(512KiB)]
                stall: 500ms
            """, timeout: 120)
        defer { try? FileManager.default.removeItem(atPath: (out as NSString).deletingLastPathComponent) }
        #expect(result.status == 1, "\(result.stdout)\n\(result.stderr)")
        let record = try #require(run)
        #expect(record.trials.map(\.outcome.kind) == [.deadlocked], "\(record.trials.map(\.outcome))")
        let summary = try String(contentsOfFile: out + "/summary.md", encoding: .utf8)
        let page = try String(contentsOfFile: out + "/report.html", encoding: .utf8)
        // A stall's advice stands with the stall (report.html lists it under Stalls).
        for (name, answer) in [("terminal", result.stdout), ("summary.md", summary), ("report.html", TestFiles.readable(page))] {
            #expect(!answer.contains("opposite orders"), "\(name):\n\(answer.prefix(2000))")
            #expect(answer.contains("One thread re-entered the guard while holding it"), "\(name):\n\(answer.prefix(3000))")
            #expect(answer.contains("recursive lock (NSRecursiveLock)"), "\(name):\n\(answer.prefix(3000))")
        }
    }
}

/// A trial killed at its deadline is pointed at the code under test, not at Strain's own
/// wait for the work's result; counts of what is left out are in their number.
extension OutcomeAdviceTests {
    static func frame(_ symbol: String, _ file: String?) -> Frame {
        Frame(address: 0x1000, symbol: symbol, file: file, line: file == nil ? nil : 10)
    }

    @Test func aTimeoutNamesTheHungWorkNotTheHostsWaitForItsResult() {
        var trial = Self.trial(.timedOut, index: 0)
        let thread = DumpedThread(tid: 9, name: "worker", state: "S", wait: nil, viaPtrace: false)
        // As a real `crash kind=hang` trial's dump lists them: the host's wait first, then the hung work (neither in work).
        let host = ThreadGroup(count: 1, summary: "futex wait ← ResultHandoff.wait() ← handOff(_:context:start:)", inWork: false, threads: [thread],
                               frames: [Self.frame("__futex_abstimed_wait_common", nil),
                                        Self.frame("ResultHandoff.wait()", "/src/strain/Sources/StrainKit/Strategy/StrategyExecutor.swift"),
                                        Self.frame("main", "/src/strain/Sources/strain/main.swift")])
        let idle = ThreadGroup(count: 2, summary: "futex wait ← _dispatch_worker_thread", inWork: false, threads: [thread, thread],
                               frames: [Self.frame("_dispatch_worker_thread", nil)])
        let work = ThreadGroup(count: 1, summary: "sleep (nanosleep) ← closure #1 in CrashScenario.prepare(context:)", inWork: false, threads: [thread],
                               frames: [Self.frame("__GI___clock_nanosleep", "./time/../sysdeps/unix/sysv/linux/clock_nanosleep.c"),
                                        Self.frame("closure #1 in CrashScenario.prepare(context:)", "/src/strain/Sources/StrainScenarios/CrashScenario.swift")])
        trial.dump = ThreadDump(method: "signal", threadCount: 4, groups: [host, idle, work], waitCycle: nil, unreached: [], dumpNanoseconds: 1_000)
        let advice = OutcomeAdvice.text(for: trial)
        #expect(advice.contains("while 1 thread waited in sleep (nanosleep) ← closure #1 in CrashScenario.prepare(context:): if that wait never ends, fix it there"), "\(advice)")
        #expect(!advice.contains("ResultHandoff"), "\(advice)")
        // Spelled as words, not as suite keys with their colons (`timeout:.` read as a typo).
        #expect(advice.hasSuffix("if the work is only slow, raise the run's timeout."), "\(advice)")
        // With only the host's wait, it is still named: the dump has nothing else.
        trial.dump?.groups = [host]
        #expect(OutcomeAdvice.text(for: trial).contains("while 1 thread waited in futex wait ← ResultHandoff.wait()"))
    }

    /// A timeout while a thread ran in the runtime's C++ names that frame without its template
    /// arguments, in a summary cut between frames, then the code under test it ran for: gate.md
    /// cut the advice at 300 characters inside `std::pair<swift::GenericCacheEntry*, …`, before
    /// its fix, and "fix it there" pointed at the runtime (re-trial 35p, F2).
    @Test func aTimeoutInTheRuntimesCodeNamesTheCodeUnderTestAndKeepsItsFixWithinWhatGateMdQuotes() {
        var trial = Self.trial(.timedOut, index: 0)
        let thread = DumpedThread(tid: 9, name: "worker", state: "R", wait: nil, viaPtrace: false)
        let runtime = "std::pair<swift::GenericCacheEntry*, bool> swift::StableAddressConcurrentReadableHashMap<swift::GenericCacheEntry, "
            + "swift::TaggedMetadataAllocator<(unsigned short)14>, swift::Mutex>::getOrInsert<swift::MetadataCacheKey, swift::MetadataRequest&>"
        var game = Self.frame("Game.init(coder:)", "/src/app/Sources/App/GraphModel.swift")
        game.line = 85
        let work = ThreadGroup(count: 1, summary: "running ← " + Array(repeating: runtime, count: 3).joined(separator: " ← ") + " ← swift_getGenericMetadata",
                               inWork: true, threads: [thread], frames: [Self.frame(runtime, nil), Self.frame("swift_getGenericMetadata", nil), game])
        trial.dump = ThreadDump(method: "signal", threadCount: 1, groups: [work], waitCycle: nil, unreached: [], dumpNanoseconds: 1_000)
        let advice = OutcomeAdvice.text(for: trial)
        #expect(advice.contains("while 1 thread was running in std::pair<…> swift::StableAddressConcurrentReadableHashMap<…>::getOrInsert<…> ← "), "\(advice)")
        #expect(advice.contains(" ← … (in Game.init(coder:) at GraphModel.swift:85): if that work never ends, fix it there"), "\(advice)")
        #expect(!advice.contains("TaggedMetadataAllocator"), "\(advice)")
        #expect(advice.count <= 600, "gate.md quotes 600 characters of advice: \(advice.count)")
        // As gate.html showed it: the code under test at the summary's end, past where it is cut, is still named.
        trial.dump?.groups[0].summary += " ← Game.init(coder:) ← Game.__allocating_init(coder:)"
        let named = OutcomeAdvice.text(for: trial)
        #expect(named.contains(" ← … (in Game.init(coder:) at GraphModel.swift:85): if that work never ends"), "\(named)")
    }

    /// A program's overflow in one function that calls itself names it so ("in the cycle
    /// depth" read as a cycle's depth), and a bad memory access names a race as a cause
    /// (an unguarded collection's SIGSEGV was sent to AddressSanitizer alone): re-trial 35p, F18 and F6.
    @Test func aSelfCallingFunctionsOverflowAndABadAccessAreWordedForWhatTheyAre() {
        var overflow = Self.trial(.stackOverflow, index: 0)
        overflow.scenario = TrialKey.execScenario
        overflow.trace = FaultTrace(signal: 11, faultAddress: 0, isStackOverflow: true, stackLow: nil, stackHigh: nil, guardSizeBytes: nil, totalFrames: 1_000,
                                    omittedFrames: 0, firstFrames: [], lastFrames: [],
                                    cycle: RecursionCycle(frames: [Self.frame("depth", nil)], repetitions: 999, startIndex: 0),
                                    markedDepth: nil, walkNanoseconds: 0, captureNanoseconds: nil)
        let advice = OutcomeAdvice.text(for: overflow)
        #expect(advice.contains("after 1,000 frames in depth, which calls itself: make the recursion iterative"), "\(advice)")
        let crash = OutcomeAdvice.text(for: Self.trial(.crashed, index: 0))
        #expect(crash.contains("or threads changing shared memory without a lock") && crash.contains("or ThreadSanitizer where threads share it"), "\(crash)")
    }

    /// Counted in their number, and in the same words in every view (the terminal said
    /// `1 more group in run.json`, summary.md `1 more thread group`).
    @Test func theGroupsLeftOutOfAStallAreCountedInTheirNumber() {
        var run = Self.run()
        var trial = Self.trial(.deadlocked, index: 0)
        let thread = DumpedThread(tid: 9, name: "worker", state: "S", wait: nil, viaPtrace: false)
        trial.dump?.groups = (0..<5).map { ThreadGroup(count: 1, summary: "futex wait ← f\($0)()", inWork: true, threads: [thread], frames: []) }
        run.trials = [trial]
        let terminal = TerminalReport(color: false).render(run)
        #expect(terminal.contains("… 1 more thread group in run.json"), "\(terminal)")
        #expect(!terminal.contains("1 more thread groups"), "\(terminal)")
        let summary = MarkdownReport.render(run)
        #expect(summary.contains("… 1 more thread group in run.json\n"), "\(summary)")
    }

    /// A deadlock's wait cycle is said in its "Why" item in every view (the terminal's
    /// gave only the advice, summary.md's and report.html's the cycle first).
    @Test func aStallsWaitCycleOpensItsWhyItemInEveryView() throws {
        var run = Self.run()
        var trial = Self.trial(.deadlocked, index: 0)
        let cycle = "thread 11 holds strain.a and waits for strain.b, held by thread 12, which waits for strain.a"
        trial.dump?.waitCycle = WaitCycle(description: cycle, links: [WaitLink(tid: 11, holding: "strain.a", waitsFor: "strain.b"),
                                                                     WaitLink(tid: 12, holding: "strain.b", waitsFor: "strain.a")])
        run.trials = [trial]
        let terminal = TerminalReport(color: false, columns: 400).render(run)
        let why = try #require(terminal.range(of: "Why, and what to do"), "\(terminal)")
        let item = "\(trial.key): deadlocked: \(cycle). "
        #expect(terminal[why.upperBound...].contains(item), "\(terminal)")
        #expect(MarkdownReport.render(run).contains("**: \(cycle). "))
        #expect(TestFiles.readable(HTMLReport.render(run)).contains("\(cycle). "))
    }
}
