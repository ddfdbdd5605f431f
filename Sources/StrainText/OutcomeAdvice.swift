import Foundation
import StrainRecords

/// What to do about a trial that ended as the suite did not expect, built from the
/// trial's own facts where it has them (the wait cycle, the stall's counts, the
/// frame it died in): the one place every view's "Why, and what to do" is written.
/// A stack overflow's advice in a run's reports is its configuration's stack verdict
/// (StrainReports' `StackVerdict`), which weighs every stack size tried; the line here
/// is for an overflow no verdict covers.
package enum OutcomeAdvice {
    /// Who reads the advice: a suite's reports (its runs' expect, timeout and
    /// strategies are what to change) or a test's failed StrainTesting expectation
    /// (its arguments are).
    package enum Audience: Sendable {
        /// The terminal, summary.md, report.html and the gate of a suite's run.
        case suite
        /// The issue a failed expectation records in `swift test`.
        case test
    }

    /// How a program under `strain exec` gets a larger stack: it has no strategy to choose.
    static let programStack = "ulimit -s for the main thread, the size the program asks for when it starts another"

    /// The advice for `trial`, one sentence or two, worded for `audience`; an overflow's
    /// suggests a stack `fittingStackBytes` fits where a larger stack's run measured it.
    package static func text(for trial: TrialRecord, audience: Audience = .suite, fittingStackBytes: Int? = nil) -> String {
        let outcome = trial.outcome
        switch outcome.kind {
        case .completed:  // Under `strain exec`, what --stall saw of a program that completed: a verdict withdrawn, a wait on an outside event.
            if trial.key.scenario == TrialKey.execScenario { return "It completed: nothing to fix" + (outcome.message.map { " (\($0))" } ?? "") + "." }
            if audience == .test { return "It completed where the test expected it not to: if the fault is fixed, change the expectation." }
            return "It completed where the suite expects \(trial.expectedOutcomes.joined(separator: " or ")): if the fault is fixed, change the run's expect to completed; if not, the run no longer reaches it (check its parameters and strategies)."
        case .threw:
            let error = outcome.message.map { " (\(Format.quoted($0)))" } ?? ""
            return (audience == .test ? "The closure threw" : "The scenario's work threw") + "\(error): fix or handle the error where it is thrown" + (trial.expected || audience == .test ? "." : ", or add threw to the run's expect if throwing is the point.")
        case .invariantViolated:
            let broken = outcome.message.map { " (\(Format.quoted($0)))" } ?? ""
            return "The work ran to its end with a wrong result\(broken): check the invariant's code first; where threads share the state, updates were lost or reordered between them. Guard the shared state with one lock, serial queue or actor for every access, or use an atomic for a counter."
        case .stackOverflow:
            let stack = trial.metrics.stackSizeBytes.map { " of \(ByteSize.prose($0))" } ?? ""
            let frames = trial.metrics.frames.map { " after \(Format.count(Double($0))) frames" } ?? ""
            // One function that calls itself is not "the cycle depth" (a C function named `depth`: re-trial 35p, F18).
            let cycle = trial.trace?.cycle.map { cycle in
                cycle.frames.count == 1 ? " in \(cycle.frames[0].symbol ?? "?"), which calls itself" : " in the cycle \(cycle.frames.map { $0.symbol ?? "?" }.joined(separator: " → "))"
            } ?? ""
            // A program under `strain exec` has no strategy to choose: its stacks are its own.
            if trial.key.scenario == TrialKey.execScenario {
                return "The stack\(stack) ran out\(frames)\(cycle): make the recursion iterative (an explicit stack), or give that thread a larger stack "
                    + "(\(programStack)); run it again on a larger one to tell deep recursion from unbounded."
            }
            if audience == .test {
                // A size the measured need fits with a quarter to spare, a power of two in MiB (it needed 30.5 MiB: not 8, re-trial 35q, F4).
                let mebibytes = fittingStackBytes.map { need in max(1, 1 << Int(ceil(log2(max(1, Double(need) * 1.25 / 1_048_576))))) } ?? 8
                let fits = fittingStackBytes.map { ", which its \(ByteSize.prose($0)) fits" } ?? ""
                return "The stack\(stack) ran out\(frames)\(cycle): make the recursion iterative (an explicit stack), or run it on a larger stack (on: .thread(stackBytes: \(mebibytes) << 20)\(fits))."
            }
            return "The stack\(stack) ran out\(frames)\(cycle): make the recursion iterative (an explicit stack), or run it on a thread with a larger stackSize; run it on a larger stack too (e.g. thread(8MiB)) to tell deep recursion from unbounded."
        case .confinementViolated:
            let first = trial.confinementViolations?.first
            let what = first.map { " (\($0.object).\($0.access) on thread \($0.threadID), owned by \($0.owner))" } ?? ""
            return "An object was touched off the queue or thread that owns it\(what): hop to its owner first (its queue's perform/sync, or make it an actor's state), or hand it over as a value instead of sharing it."
        case .dataRace:
            let race = trial.sanitizerReports?.first { $0.isRace }
            let places = race.map { report in
                report.accesses.prefix(2).compactMap { $0.frames.first { $0.location != nil || $0.symbol != nil }.map(SanitizerReport.place) }
            } ?? []
            let at = places.isEmpty ? "" : " (\(places.joined(separator: " and ")))"
            return "Two threads touched the same memory without ordering, one of them writing\(at): put every access to it behind one Mutex, serial queue or actor, or make it an atomic."
        case .crashed:
            return crashAdvice(trial)
        case .starved:
            return starvedAdvice(trial)
        case .deadlocked:
            return deadlockAdvice(trial)
        case .timedOut:
            let deadline = trial.metrics.trialSeconds.map { " at the trial's deadline (\(Format.duration($0)) from its start to its end, the stop after the deadline included)" } ?? " at the trial's deadline"
            let (stall, timeout) = audience == .test ? ("expectNoStall(within:)", "the expectation's timeout") : ("a stall shorter than the run's timeout", "the run's timeout")
            guard let waiting = Self.topGroup(trial) else {
                return "The parent killed it\(deadline), with no thread dump. If it hangs, \(stall) lets the watchdog dump every thread and name the wait; if it is only slow, raise \(timeout)."
            }
            // A thread that was running is in a loop or slow work, not a wait.
            let what = waiting.contains(" was running") || waiting.contains(" were running") ? "that work" : "that wait"
            // Where the code under test runs, past the runtime's frames a summary starts with (re-trial 35p, F2).
            // Named after the summary unless the summary, as shortened, still names it (a cut one had `Game.init(coder:)` past its end).
            let summary = Self.brief(waiting)
            let place = Self.topThreadGroup(trial).flatMap(Self.placeUnderTest).map { summary.contains($0.symbol) ? "" : " (in \($0.place))" } ?? ""
            return "The parent killed it\(deadline) while \(summary)\(place): if \(what) never ends, fix it there; if the work is only slow, raise \(timeout)."
        case .harnessError:
            let message = outcome.message.map { " (\(Format.quoted($0)))" } ?? ""
            let strain = "Strain itself failed: run it again, and if it repeats, report it with run.json."
            // A trial's process that exits, or whose result pipe carries something else, may be the code under test's doing (re-trial 35q, F1).
            if outcome.message?.hasPrefix("the child exited with status") == true {
                return "The trial's process exited before it sent its result\(message). If the code under test calls exit (or a library it calls does, on an error), "
                    + "that ends the trial: make it return or throw instead. If it does not, \(strain)"
            }
            if outcome.message?.hasPrefix("the result pipe broke the child protocol") == true {
                return "The trial's result pipe carried something that is not a result\(message). Code under test that writes to or closes file descriptors "
                    + "it did not open can do that: check its writes and closes. If it does not, \(strain)"
            }
            return "Strain itself failed\(message), not the code under test: run it again, and if it repeats, report it with run.json."
        }
    }

    /// A crash: the signal, the frame it died in and the runtime's words, then the fix for that kind of signal.
    static func crashAdvice(_ trial: TrialRecord) -> String {
        let signal = trial.outcome.signal.map(SignalName.of) ?? "a signal"
        let frame = trial.trace.flatMap(TraceText.pointOfFailure)
        // A long C++ or Swift name in a sentence without its template arguments: the trace has it whole.
        let at = frame.map { " in \($0.displayName.count > 60 ? TerminalStyle.argumentsElided($0.displayName) ?? $0.displayName : $0.displayName)" } ?? ""
        let reason = CrashReason.message(for: trial).map { ": \(Format.quoted($0))" } ?? ""
        // libdispatch's own trap for a sync onto the queue the caller runs on (`self-sync`): not a check to add, a call to change.
        if trial.trace?.firstFrames.prefix(4).contains(where: { $0.symbol == "__DISPATCH_WAIT_FOR_QUEUE__" }) == true {
            return "It died of \(signal)\(at)\(reason). That is libdispatch stopping a sync onto the queue the work already runs on, which would wait for itself: do the work directly when already on that queue, or make the call async."
        }
        if trial.outcome.signal == nil, let report = trial.sanitizerReports?.first {  // a sanitizer's error ends it by a status, not a signal from outside (ASan exits 1: re-trial 33l, F2)
            let at = report.accesses.first?.frames.first { ($0.location != nil || $0.symbol != nil) && $0.symbol?.hasPrefix("__interceptor_") != true && !($0.moduleName ?? "").contains("san.so") }
            return "\(report.tool.displayName) stopped it: \(report.kind)\(at.map { " at " + SanitizerReport.place($0) } ?? ""). Fix that memory's use there: its report (sanitizerReports in run.json) says which memory it was and where it was allocated and freed."
        }
        // glibc's abort on a heap it found corrupted (a race on shared state, a double free): not a check to add (re-trial 35n, F5).
        if let glibc = CrashReason.message(for: trial), ["double free", "corrupted", "invalid pointer", "unaligned tcache"].contains(where: glibc.contains) {
            return "It died of \(signal)\(at)\(reason). That is glibc finding its heap corrupted: a block freed twice or written after it was freed, often by threads changing shared memory without a lock. Run it under ThreadSanitizer (a race) or AddressSanitizer (a use after free) to see where."
        }
        let fix = switch trial.outcome.signal {
        case 4, 5, 6:
            "a trap or an abort (a force unwrap, a precondition, an index out of range, a failed check in the C library): make the code check for the case it trapped on, there."
        case 7, 11:
            "a bad memory access (a null or dangling pointer, a use after free, unsafe pointer arithmetic, or threads changing shared memory without a lock): "
                + "fix the pointer's lifetime there; run it under AddressSanitizer to see where the memory was freed, or ThreadSanitizer where threads share it."
        case 8:
            "an arithmetic fault (a division by zero): check the divisor there."
        case 13:
            "a write to a pipe or socket whose reader had closed it (SIGPIPE, the program's own write): read the pipe to its end where it is read (`cmd | head` ends early), or ignore SIGPIPE and handle EPIPE from the write."
        default:
            // Not `strain exec`'s own "killed by SIGTERM (sent to it, or raised by itself: …)" again, which the advice goes on to say.
            "a signal it did not handle" + (trial.outcome.message.flatMap { $0.hasPrefix("the program was killed by") ? nil : " (\($0))" } ?? "")
                + ", sent to it from outside or raised by itself (raise or kill in its own code): find who sends it and why, or handle it."
        }
        return "It died of \(signal)\(at)\(reason). That is \(fix)"
    }

    /// A starved pool: how many blocked items filled how many threads, and what waited behind them.
    static func starvedAdvice(_ trial: TrialRecord) -> String {
        let fix = "don't block pool threads (await, or a completion, instead of waiting), move blocking work to threads of its own, or size the pool for it."
        guard let stall = trial.stall else { return "Work waited while the pool's threads made no progress: " + fix }
        // Threads in a wait with no timeout, else the items started and not finished (a semaphore's timed wait is a wait all the same).
        let blocked = stall.threadsInUntimedWait > 0 ? stall.threadsInUntimedWait : max(0, stall.started - stall.finished)
        let waiting = max(0, stall.queued - stall.started)
        let pool = "\(blocked) blocked item\(blocked == 1 ? "" : "s") filled a pool of \(stall.threadsInWork)"
        let behind = waiting > 0 ? " while \(waiting) more waited to start" : ""
        return "\(pool)\(behind): " + fix
    }

    /// A deadlock: the lock order or the `sync` back onto a queue to break, from the wait cycle when the record has one.
    static func deadlockAdvice(_ trial: TrialRecord) -> String {
        let syncs = trial.dump?.groups.contains { group in group.inWork && group.frames.contains { $0.symbol?.contains("DispatchQueue.sync") == true } } ?? false
        guard let cycle = trial.dump?.waitCycle, !cycle.links.isEmpty else {
            if syncs { return "Every worker is blocked in DispatchQueue.sync with nothing left to run the blocks: a sync onto a queue (or a pool) that is waiting for the caller. Make that call async, or never sync onto a queue from work that runs on it." }
            // A JVM's deadlock, named by the JVM (`strain exec`): its cycle of monitors, not the threads a dump saw waiting first; or its threads all
            // waiting with no timeout and no cycle it names (latches, conditions): a release that never comes.
            if let java = trial.outcome.message?.firstMatch(of: /found a Java-level deadlock: (.*?)(?:; then the program|$)/)?.1 {
                return "The threads wait on each other's monitors (\(java)): take them in one order everywhere, or hold only one at a time."
            }
            if let java = trial.outcome.message?.firstMatch(of: /every thread of the program waiting with no timeout \((.*?)\): none can wake another/)?.1 {
                return "Each thread waits for a release only another waiting thread would give (\(java)): make every release happen on every path (countDown or signal in a finally block, before any wait of its own), or wait with a timeout (await(timeout, unit)) to see it."
            }
            // A read of a pipe nothing left in the program will write to (`strain exec`): a write, not a lock order.
            if trial.outcome.message?.contains("a pipe that only the program's own processes can write to") == true {
                return "A thread reads a pipe that no thread or process of the program is left to write to (\(Self.topGroup(trial) ?? "its read")): write to it where the data or the wake-up is meant to come from (a signal handler of the self-pipe trick, a worker), close every write end so the read ends, or read with a timeout (poll) to see it."
            }
            let fix = "find what they wait for that no running thread will signal, and take locks in one order, or wait with a timeout to see it"
            if let process = trial.outcome.message?.firstMatch(of: /in process (\d+) \(a descendant of the program/)?.1 {
                return "Every thread of process \(process) blocked with nothing to wake them: \(fix) (only the program's own threads are dumped: `gdb -p \(process) -batch -ex 'thread apply all bt'` shows that process's while it waits)."
            }
            let who = (trial.stall?.threadsInWork ?? 0) > 0 ? "worker" : "thread"  // no pool (`strain exec` of a C or Rust program): threads (re-trial 33l, F6)
            return "Every \(who) blocked with nothing to wake them\(Self.topGroup(trial).map { " (among them, \($0))" } ?? ""): \(fix)."
        }
        let held = cycle.links.map { $0.holding ?? "?" }
        let waited = cycle.links.map(\.waitsFor)
        let queues = (held + waited).contains { $0.localizedCaseInsensitiveContains("queue") } || syncs
        // A cycle of one thread: it waits for what it holds itself, a re-entry, not an order.
        if Set(cycle.links.map(\.tid)).count == 1 {
            let resource = waited[0]
            if queues {
                return "The work waits for \(resource) while already running on it (a sync onto it, or a wait for work queued behind it there), so it waits for itself: "
                    + "do the work directly when already on that queue, or make the sync or the wait async."
            }
            return "One thread re-entered \(resource) while holding it; \(resource) is not recursive, so the thread waits for itself: "
                + "restructure so the locked region does not call back into code that takes \(resource) (split out a variant that expects it held), "
                + "or use a recursive lock (NSRecursiveLock) if re-entry is meant."
        }
        if queues {
            let ring = (held + [held[0]]).joined(separator: " → ")
            return "Each queue's work syncs onto the next while the next waits for it (\(ring)): make the sync onto "
                + "\(waited[0]) async, or do the work directly when already on that queue."
        }
        let order = zip(held, waited).map { "\($0) then \($1)" }.joined(separator: ", ")
        return "The threads take the same locks in opposite orders (\(order)): take them in one order everywhere "
            + "(always \(held.sorted().first ?? "the first") first), or hold only one at a time."
    }

    /// `2 threads waited in futex wait ← closure #1 in lockOrderDeadlock() ← …`, or `1 thread was running in static
    /// FaultScenario.fail…` for busy threads: the dump's group that held the work, else one in the code under test, else
    /// one that did not take the dump request (a program's main thread in `join`, re-trial 35l), as advice names it.
    static func topGroup(_ trial: TrialRecord) -> String? {
        guard let group = topThreadGroup(trial) else { return nil }
        let threads = "\(group.count) thread\(group.count == 1 ? "" : "s")"
        // A busy thread is not waiting: its summary starts with `running`, not a wait.
        if group.summary == "running" { return "\(threads) \(group.count == 1 ? "was" : "were") running" }
        if group.summary.hasPrefix("running ← ") {
            return "\(threads) \(group.count == 1 ? "was" : "were") running in \(group.summary.dropFirst("running ← ".count))"
        }
        // Not "1 thread waited in took the dump request in …" (re-trial 33c).
        return "\(threads) waited in \(group.summary.trimmingPrefix("took the dump request in "))"
    }

    /// The group ``topGroup(_:)`` names.
    static func topThreadGroup(_ trial: TrialRecord) -> ThreadGroup? {
        // Not a deadlock's blocked: threads running (woken by a Ctrl-C in the dump: 33i's NEW-4), all in timed waits (idle workers: 33j's NEW-7), or parked in
        // `dispatch_main` (33k); nor, while another waits on a lock, one that waits for another's end (main's `join`, re-trial 33l's F6).
        guard let all = trial.dump?.groups.filter({ trial.outcome.kind != .deadlocked || !($0.summary.hasPrefix("running") || $0.summary == "sigsuspend" || !$0.threads.isEmpty && $0.threads.allSatisfy { $0.wait?.hasSuffix("(timed)") == true }) }) else { return nil }
        let locking = all.filter { !$0.summary.contains("join") }, groups = trial.outcome.kind == .deadlocked && !locking.isEmpty ? locking : all
        return groups.first(where: \.inWork) ?? groups.first(where: waitsInCodeUnderTest)
            ?? groups.first(where: { !$0.summary.hasPrefix("took the dump request") }) ?? groups.first
    }

    /// `summary` for a sentence: template arguments left out, and at most 160 characters,
    /// cut between frames (a C++ frame's name made a timeout's advice too long for gate.md).
    static func brief(_ summary: String) -> String {
        let short = TerminalStyle.argumentsElided(summary) ?? summary
        guard short.count > 160 else { return short }
        var kept = ""
        for part in short.components(separatedBy: " ← ") {
            guard kept.count + part.count <= 150 else { break }
            kept += (kept.isEmpty ? "" : " ← ") + part
        }
        return (kept.isEmpty ? String(short.prefix(150)) : kept) + " ← …"
    }

    /// The first frame of `group` in a package's sources that is not Strain's harness,
    /// inlined functions first, and it as `NAME at FILE:LINE`; nil when it has none.
    static func placeUnderTest(_ group: ThreadGroup) -> (symbol: String, place: String)? {
        for frame in group.frames {
            let candidates = (frame.inlined ?? []).map { ($0.symbol, $0.file, $0.line) } + [(frame.symbol, frame.file, frame.line)]
            for (symbol, file, line) in candidates {
                guard let symbol, let file, let line, file.hasPrefix("Sources/") || file.contains("/Sources/"), !FunctionCost.isHarness(file) else { continue }
                return (symbol, "\(symbol) at \((file as NSString).lastPathComponent):\(line)")
            }
        }
        return nil
    }

    /// Whether the first frame of `group` from a package's sources (a `Sources` folder),
    /// inlined functions first, is not Strain's harness: a thread in the code under test,
    /// not the host's wait for the work's result (`ResultHandoff.wait ← handOff ← …`), which
    /// a trial killed at its deadline also has, often listed first. A group with no such
    /// frame (a pool's idle thread, a stripped binary) says nothing either way.
    static func waitsInCodeUnderTest(_ group: ThreadGroup) -> Bool {
        let files = group.frames.lazy.flatMap { frame in (frame.inlined ?? []).map(\.file) + [frame.file] }
        guard let file = files.first(where: { $0.map { $0.hasPrefix("Sources/") || $0.contains("/Sources/") } ?? false }) else { return false }
        return !FunctionCost.isHarness(file)
    }

}
