import Foundation
import StrainKit
import StrainExec
import StrainRunner
import Testing

/// `strain exec` and `strain dump` on real programs built here (C with cc, Swift
/// with swiftc), run through the built binary as a user would.
@Suite(.serialized, .timeLimit(.minutes(10))) struct ExecTests {
    /// `strain exec --out DIR -- PROGRAM ARGUMENTS` with Swift's own backtracer off
    /// (it would spend a second symbolizing each crash after Strain's record).
    static func exec(_ program: String, _ arguments: [String], out: String, options: [String] = [], timeout: Double = 60) async throws -> (ProgramRun.Result, RunRecord?) {
        let result = try await ProgramRun.run(StrainBinary.path, ["exec", "--out", out] + options + ["--", program] + arguments,
                                        environment: ["SWIFT_BACKTRACE": "enable=no"], timeout: timeout)
        let record = try? RunRecordFile.read(from: (out as NSString).appendingPathComponent("run.json"))
        return (result, record)
    }

    static func folder() -> String {
        TestFolders.root.appendingPathComponent("strain-exec-\(UUID().uuidString)").path
    }

    /// A relative `--out` still tells the probe and a sanitizer an absolute folder: a program
    /// built with AddressSanitizer that changed its directory could not open its log there,
    /// and spun (re-trial 33n, F1). The program's environment keeps its own order, Strain's
    /// variables after it (a dictionary's order put `B` before `A`: re-trial 33n, F2).
    @Test func aProgramThatChangesItsDirectoryIsToldAbsoluteFoldersAndItsEnvironmentKeepsItsOrder() async throws {
        let folder = Self.folder()
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let result = try await CommandRun.run(["exec", "--out", "relative", "--", "/bin/sh", "-c", "cd / && printenv ASAN_OPTIONS && env"], in: folder,
                                              environment: ["STRAIN_ORDER_B": "2", "STRAIN_ORDER_A": "1"])
        #expect(result.status == 0, "\(result.stderr)")
        let lines = result.stdout.split(separator: "\n").map(String.init)
        let probe = URL(fileURLWithPath: folder).standardizedFileURL.path + "/relative/probe/"
        #expect(lines.first?.hasPrefix("log_path=" + probe) == true, "\(result.stdout)")
        let given = ["STRAIN_ORDER_B=2", "STRAIN_ORDER_A=1", "PATH=/usr/bin:/bin"]
        let ordered = try await ProgramRun.run("/usr/bin/env", ["-i"] + given + [StrainBinary.path, "exec", "--out", folder + "/ordered", "--", "/usr/bin/env"], timeout: 60)
        let seen = ordered.stdout.split(separator: "\n").map(String.init)
        #expect(Array(seen.prefix(3)) == given, "in the order strain was given them: \(ordered.stdout)\(ordered.stderr)")
        #expect(Set(seen.dropFirst(3).map { $0.prefix { $0 != "=" } }) == ["ASAN_OPTIONS", "TSAN_OPTIONS"], "Strain's own after them: \(ordered.stdout)")
    }

    @Test(arguments: ["main", "thread", "gcd", "task"])
    func aSwiftOverflowOnEachThreadKindGivesItsRecursionCycleAndKeepsStatus139(kind: String) async throws {
        let program = try await TestPrograms.swiftOverflow()
        let out = Self.folder()
        let (result, run) = try await Self.exec(program, [kind], out: out)
        #expect(result.termination == .signaled(SIGSEGV), "strain ends as its program did: \(result.stderr)")
        let trial = try #require(run?.trials.first)
        #expect(trial.outcome.kind == .stackOverflow)
        #expect(trial.scenario == "exec")
        #expect(trial.key[parameter: "arguments"] == kind)
        let cycle = try #require(trial.trace?.cycle, "\(result.stderr)")
        #expect(cycle.frames.contains { $0.symbol == "descend(_:_:)" }, "\(cycle.frames.map(\.symbol))")
        #expect(cycle.repetitions > 1000)
        #expect(result.stderr.contains("descend(_:_:)"), "strain prints the trace on its standard error")
        let schema = try await SchemaCheck.validate((out as NSString).appendingPathComponent("run.json"))
        #expect(schema.valid, "\(schema.output)")
    }

    /// A program's counted allocations are its own: the probe's start (its dlsym misses, the
    /// read of its own stack through pthread_getattr_np) added 9 blocks, 2,214 bytes, to a
    /// program that makes none, and 1,000 read 1,009 (re-trial 33l, F5, 12 of 12).
    @Test func aProgramsCountedAllocationsAreItsOwnNotTheProbes() async throws {
        let programs = try await TestPrograms.c()
        let out = Self.folder()
        defer { try? FileManager.default.removeItem(atPath: out) }
        let (result, run) = try await Self.exec(programs.faults, ["mallocs"], out: out)
        #expect(result.termination == .exited(0), "\(result.stderr)")
        let metrics = try #require(run?.trials.first).metrics
        #expect(metrics.allocations == 1000 && metrics.allocatedBytes == 24_000, "\(metrics)")
    }

    @Test func aCThreadOverflowUnderTheIOSProfileHasA512KiBStack() async throws {
        let programs = try await TestPrograms.c()
        let out = Self.folder()
        let (result, run) = try await Self.exec(programs.faults, ["thread-overflow"], out: out, options: ["--profile", "ios"])
        #expect(result.termination == .signaled(SIGSEGV))
        let trial = try #require(run?.trials.first)
        #expect(trial.profile == .ios)
        #expect(trial.outcome.kind == .stackOverflow)
        #expect(trial.trace?.stackSizeBytes == 512 * 1024, "pthread_create with default attributes got the profile's stack")
        #expect(trial.trace?.cycle?.frames.contains { $0.symbol == "recurse" } == true)
        // Which thread died, by the name the program gave it (re-trial 33l, N3: the record had only its stack).
        #expect(trial.trace?.threadName == "deep-decoder" && trial.trace?.threadID != nil, "\(String(describing: trial.trace))")
        #expect(trial.outcome.message?.contains("the fault was in thread \(trial.trace?.threadID ?? 0) (deep-decoder), not the main thread") == true, "\(trial.outcome)")
        // What to do, on the terminal as in the reports, for a program (no strategy to pick).
        #expect(result.stderr.contains("strain: what to do: The stack of 512"), "\(result.stderr.suffix(1500))")
        #expect(result.stderr.contains("ulimit -s for the main thread"), "\(result.stderr.suffix(1500))")
        #expect(!result.stderr.contains("thread(8MiB)"), "a program is given no strategy: \(result.stderr.suffix(1500))")
        // The command that reads the record is a line of its own, whole ("(strain report" / "PATH)": re-trial 35n, F7).
        #expect(result.stderr.contains("\nstrain: read it with strain report \(out)/run.json"), "\(result.stderr.suffix(300))")
        let summary = try await ProgramRun.run(StrainBinary.path, ["report", (out as NSString).appendingPathComponent("run.json"), "--format", "md", "--out", "-"])
        // The same advice in every view (the reports' left out the iterative fix the terminal gave).
        #expect(summary.stdout.contains("make the recursion iterative (an explicit stack), or give that thread a larger stack (ulimit -s for the main thread"), "\(summary.stdout)")
        #expect(!summary.stdout.contains("thread(8MiB)"), "\(summary.stdout)")
    }

    @Test(arguments: [("handler-after", 42, "own handler ran"), ("handler-signal", 42, "own handler ran")])
    func aCProgramsOwnHandlerInstalledAfterTheProbeStillRunsAfterTheRecord(mode: String, status: Int32, printed: String) async throws {
        let programs = try await TestPrograms.c()
        let (result, run) = try await Self.exec(programs.faults, [mode], out: Self.folder())
        #expect(result.termination == .exited(status), "\(result.stderr)")
        #expect(result.stdout == printed + "\n")
        // The program's handler took the fault and the program exited by its status: it
        // threw, as it would be judged alone; the fault's trace stays as evidence.
        let trial = try #require(run?.trials.first)
        #expect(trial.outcome.kind == .threw)
        #expect(trial.outcome.message?.contains("handled SIGSEGV at 0x0 itself") == true, "\(trial.outcome)")
        #expect(trial.trace?.firstFrames.first?.symbol == "null_write")
        #expect(trial.outcome.message?.contains("exited with status \(status)") == true, "\(trial.outcome)")
    }

    @Test func aHandlerALibraryInstalledBeforeTheProbeStillRunsAfterTheRecord() async throws {
        let programs = try await TestPrograms.c()
        let (result, run) = try await Self.exec(programs.faultsWithEarlyHandler, ["handler-before"], out: Self.folder())
        #expect(result.termination == .exited(43), "\(result.stderr)")
        #expect(result.stdout == "early handler ran\n")
        let trial = try #require(run?.trials.first)
        #expect(trial.outcome.kind == .threw, "the early handler exited 43: \(trial.outcome)")
        #expect(trial.trace?.firstFrames.first?.symbol == "null_write")
    }

    @Test func aForkedChildKeepsTheProbeAndRecordsItsFaultUnderItsOwnPid() async throws {
        let programs = try await TestPrograms.c()
        let out = Self.folder()
        let (result, run) = try await Self.exec(programs.faults, ["fork-child-fault"], out: out)
        #expect(result.termination == .exited(0))
        let fields = result.stdout.split(separator: " ")
        #expect(fields.count == 4 && fields[2] == "signal" && fields[3] == "11\n", "the child died of its own SIGSEGV: \(result.stdout)")
        let child = try #require(Int32(fields.count > 1 ? String(fields[1]) : ""))
        let fault = try #require(ProbeFolder(path: (out as NSString).appendingPathComponent("probe")).faultRecord(pid: child))
        #expect(fault.signal == SIGSEGV)
        #expect(fault.isComplete)
        #expect(run?.trials.first?.outcome.kind == .completed, "the program itself completed")

        // Every report format and the gate's comparison read an exec run like any other.
        let runJSON = (out as NSString).appendingPathComponent("run.json")
        for format in ["html", "md", "junit"] {
            var report = try await ProgramRun.run(StrainBinary.path, ["report", runJSON, "--format", format, "--out", "-"])
            #expect(report.termination == .exited(0), "\(format): \(report.stderr)")
            report.stdout = TestFiles.readable(report.stdout)
            #expect(report.stdout.contains("exec[program=\(programs.faults), arguments=fork-child-fault]") || report.stdout.contains("program=\(programs.faults)"),
                    "\(format) names the program run: \(report.stdout.prefix(400))")
        }
        // `compare` never fails (exit 0 whatever it finds), so its output is the check:
        // the run against itself is one row, the program's, every timing unchanged at +0.0 %.
        let compare = try await ProgramRun.run(StrainBinary.path, ["compare", runJSON, runJSON])
        #expect(compare.termination == .exited(0), "\(compare.stdout)\(compare.stderr)")
        let lines = compare.stdout.split(separator: "\n").map(String.init)
        #expect(lines.first?.hasPrefix("Compared \(runJSON) (suite exec) against the run \(runJSON): 1 ") == true, "\(compare.stdout)")
        #expect(lines.first?.hasSuffix("; strain gate would say passed (exit 0)") == true, "\(compare.stdout)")
        #expect(lines.filter { $0.hasPrefix("exec[") }.count == 1, "\(compare.stdout)")
        #expect(lines.contains { $0.hasPrefix("exec[program=\(programs.faults), arguments=fork-child-fault] main linux") }, "\(compare.stdout)")
        let metrics = lines.filter { $0.hasPrefix("    ") }
        #expect(metrics.contains { $0.hasPrefix("    wall: ") } && metrics.contains { $0.hasPrefix("    cpu: ") }, "\(compare.stdout)")
        #expect(metrics.allSatisfy { $0.contains("+0.0%") }, "the same run on both sides: \(metrics)")
        #expect(!compare.stdout.contains("regressed") && !compare.stdout.contains("improved"), "\(compare.stdout)")
    }

    @Test func aProgramThatNeverFaultsPrintsExactlyWhatItPrintsWithoutStrain() async throws {
        let programs = try await TestPrograms.c()
        let arguments = ["quiet", "one", "two words", "--out", "x"]
        let alone = try await ProgramRun.run(programs.faults, arguments)
        let out = Self.folder()
        let (under, run) = try await Self.exec(programs.faults, arguments, out: out)
        #expect(alone.termination == .exited(3))
        #expect(under.termination == alone.termination)
        #expect(under.stdout == alone.stdout)
        #expect(under.stderr == alone.stderr)
        #expect(alone.stdout.contains("LD_PRELOAD=(unset)\nSTRAIN_PROBE variables: 0\nSIGSEGV handler: default\n"), "\(alone.stdout)")
        let trial = try #require(run?.trials.first)
        #expect(trial.outcome.kind == .threw)
        #expect(trial.outcome.message == "the program exited with status 3")
        #expect(trial.key[parameter: "arguments"] == "quiet one 'two words' --out x")
        #expect(trial.trace == nil)
    }

    @Test func aHungProgramAnswersStrainDumpWithItsGroupedStacksAndGoesOn() async throws {
        let programs = try await TestPrograms.c()
        let out = Self.folder()
        let running = try ProgramRun.start(StrainBinary.path, ["exec", "--out", out, "--", programs.faults, "hang"])
        defer { running.stop() }
        let ready = try #require(await running.readLine(timeout: 20), "the program said it was ready")
        let pid = try #require(Int32(ready.split(separator: " ").last ?? ""))

        let dump = try await ProgramRun.run(StrainBinary.path, ["dump", String(pid)], timeout: 30)
        #expect(dump.termination == .exited(0), "\(dump.stderr)")
        #expect(dump.stdout.hasPrefix("asked with SIGQUIT"), "\(dump.stdout)")
        #expect(dump.stdout.contains("6 threads"), "\(dump.stdout)")
        #expect(dump.stdout.contains("3 threads — futex wait ← wait_for_nothing"), "the three waiters are one group: \(dump.stdout)")
        #expect(dump.stdout.contains("lock_first_then_second") && dump.stdout.contains("lock_second_then_first"), "\(dump.stdout)")
        #expect(kill(pid, 0) == 0, "the dump did not stop the program")

        kill(pid, SIGKILL)
        let result = try await running.wait(timeout: 20)
        #expect(result.termination == .signaled(SIGKILL))
        let run = try RunRecordFile.read(from: (out as NSString).appendingPathComponent("run.json"))
        let trial = try #require(run.trials.first)
        #expect(trial.outcome.kind == .crashed)
        #expect(trial.outcome.signal == SIGKILL)
        #expect(trial.dump?.threadCount == 6, "the run keeps the last dump")
        let text = try String(contentsOfFile: (out as NSString).appendingPathComponent("dump-1.txt"), encoding: .utf8)
        #expect(text.contains("wait_for_nothing"))
        #expect(result.stderr.contains("thread dump 1 of"), "strain exec says where the dump went: \(result.stderr)")
    }

    /// A script's background job (`strain exec -- PROGRAM &`) starts with SIGQUIT
    /// ignored, and the program keeps it so: `strain dump` still dumps it, and says why
    /// it asked with SIGSYS (it said the program handled SIGQUIT, which it does not).
    @Test func aProgramStartedWithSIGQUITIgnoredKeepsItIgnoredAndStrainDumpSaysSo() async throws {
        let programs = try await TestPrograms.c()
        let running = try ProgramRun.start("/bin/sh", ["-c", "trap '' QUIT; exec \"$0\" \"$@\"", StrainBinary.path,
                                                        "exec", "--out", Self.folder(), "--", programs.faults, "hang"])
        defer { running.stop() }
        let ready = try #require(await running.readLine(timeout: 20), "the program said it was ready")
        let pid = try #require(Int32(ready.split(separator: " ").last ?? ""))
        let dump = try await ProgramRun.run(StrainBinary.path, ["dump", String(pid)], timeout: 30)
        #expect(dump.termination == .exited(0), "\(dump.stderr)")
        #expect(dump.stdout.hasPrefix("asked with SIGSYS carrying Strain's sigqueue value (the program ignores SIGQUIT: it started with SIGQUIT ignored"),
                "\(dump.stdout)")
        #expect(dump.stdout.contains("6 threads"), "\(dump.stdout)")
        kill(pid, SIGQUIT)
        try await Task.sleep(for: .milliseconds(300))
        #expect(kill(pid, 0) == 0, "SIGQUIT stays ignored: the program runs on")
        kill(pid, SIGKILL)
        _ = try await running.wait(timeout: 20)
    }

    @Test func aProgramThatHandlesSIGQUITKeepsItAndIsDumpedWithSIGSYS() async throws {
        let programs = try await TestPrograms.c()
        let running = try ProgramRun.start(StrainBinary.path, ["exec", "--out", Self.folder(), "--", programs.faults, "own-quit"])
        defer { running.stop() }
        let ready = try #require(await running.readLine(timeout: 20))
        let pid = try #require(Int32(ready.split(separator: " ").last ?? ""))
        let dump = try await ProgramRun.run(StrainBinary.path, ["dump", String(pid)], timeout: 30)
        #expect(dump.termination == .exited(0), "\(dump.stderr)")
        #expect(dump.stdout.hasPrefix("asked with SIGSYS carrying Strain's sigqueue value (the program handles SIGQUIT itself)"), "\(dump.stdout)")
        #expect(dump.stdout.contains("2 threads"))
        kill(pid, SIGQUIT)
        #expect(await running.readLine(timeout: 20) == "own SIGQUIT handler ran", "SIGQUIT still reaches the program's handler")
        kill(pid, SIGKILL)
        _ = try await running.wait(timeout: 20)
    }

    /// Starts `strain exec --out OUT ARGUMENTS` on a program that prints "… PID" when ready,
    /// and waits (30 s at most) for the watchdog's first dump; the caller kills and reaps.
    static func untilFirstDump(_ arguments: [String], out: String, environment: [String: String] = [:], readyTimeout: Double = 20) async throws
        -> (running: ProgramRun.Running, pid: Int32, dumped: Bool) {
        let running = try ProgramRun.start(StrainBinary.path, ["exec", "--out", out] + arguments, environment: environment)
        let pid: Int32
        do {
            let ready = try #require(await running.readLine(timeout: readyTimeout), "the program said it was ready")
            pid = try #require(Int32(ready.split(separator: " ").last ?? ""), "its ready line ends with its pid: \(ready)")
        } catch {
            running.stop()
            throw error
        }
        let first = (out as NSString).appendingPathComponent("dump-1.txt")
        let deadline = Date().addingTimeInterval(30)
        while !FileManager.default.fileExists(atPath: first) && Date() < deadline { await pause(50_000) }
        return (running, pid, FileManager.default.fileExists(atPath: first))
    }

    /// Runs `overflow MODE` under `strain exec --stall 1s` until the watchdog's dump, then kills it.
    static func stalled(_ mode: String) async throws -> (ProgramRun.Result, TrialRecord, String) {
        let program = try await TestPrograms.swiftOverflow()
        let out = Self.folder()
        let (running, pid, dumped) = try await untilFirstDump(["--stall", "1s", "--", program, mode], out: out, environment: ["SWIFT_BACKTRACE": "enable=no"])
        defer { running.stop() }
        #expect(dumped, "the watchdog dumped the stuck pool")
        kill(pid, SIGKILL)
        let result = try await running.wait(timeout: 20)
        #expect(result.termination == .signaled(SIGKILL))
        #expect(!FileManager.default.fileExists(atPath: (out as NSString).appendingPathComponent("dump-2.txt")), "it dumps once")
        let run = try RunRecordFile.read(from: (out as NSString).appendingPathComponent("run.json"))
        return (result, try #require(run.trials.first), out)
    }

    /// The fixture's `mode` under `--stall 1s`, a program that waits a while and then finishes:
    /// it exits 0 having printed "done", completed, with no stall, no dump, and never `notCalled`.
    static func completedWithoutVerdict(_ mode: String, notCalled verdict: String) async throws -> TrialRecord {
        let program = try await TestPrograms.swiftOverflow()
        let out = Self.folder()
        let (result, run) = try await Self.exec(program, [mode], out: out, options: ["--stall", "1s"])
        #expect(result.termination == .exited(0), "\(result.stderr)")
        #expect(result.stdout == "done\n")
        let trial = try #require(run?.trials.first)
        #expect(trial.outcome.kind == .completed, "\(trial.outcome)")
        #expect(trial.stall == nil && !(trial.outcome.message ?? "").contains(verdict), "\(trial.outcome)")
        #expect(!FileManager.default.fileExists(atPath: (out as NSString).appendingPathComponent("dump-1.txt")))
        return trial
    }

    @Test func theStallWatchdogDumpsADeadlockedGCDPoolOnceAndNamesIt() async throws {
        let (result, trial, _) = try await Self.stalled("gcd-deadlock")
        #expect(trial.outcome.kind == .deadlocked, "\(trial.outcome)")
        #expect(trial.outcome.message?.contains("pool threads under dispatch or concurrency frames") == true, "\(trial.outcome)")
        #expect(trial.stall?.thresholdSeconds == 1)
        let dump = try #require(trial.dump)
        #expect(dump.groups.contains { $0.count >= 2 && $0.summary.contains("futex wait") && $0.frames.contains { $0.symbol?.contains("_dispatch_worker_thread") == true } },
                "\(dump.groups.map(\.summary))")
        #expect(result.stderr.contains("deadlocked"), "\(result.stderr)")
        // After a verdict the program runs on, and strain waits: it says so, and how to end it (re-trial 35q, F2).
        #expect(result.stderr.contains("strain: --stall only watches: the program is left running, and strain exec waits for it to end"), "\(result.stderr)")
    }

    /// Every thread waits with no timeout, as in a deadlock, but libdispatch keeps
    /// starting workers for the blocks still queued, each of which blocks in turn: a
    /// starved pool (re-trial 33i's NEW-2: it was called deadlocked).
    @Test func theStallWatchdogCallsAGCDPoolThatKeepsStartingWorkersThatBlockStarved() async throws {
        let (_, trial, _) = try await Self.stalled("gcd-starve")
        #expect(trial.outcome.kind == .starved, "\(trial.outcome)")
        #expect(trial.outcome.message?.contains(/started in the last [\d.]+ m?s, so work is queued to a pool whose threads all block/) == true, "\(trial.outcome.message ?? "")")
        let stall = try #require(trial.stall)
        #expect(stall.threadsInWork >= 3 && stall.threadsInUntimedWait == stall.threadsInWork, "\(stall)")
    }

    /// A pool that keeps growing, each new worker blocking on a named mutex cycle: the cycle
    /// is the deadlock, whatever the pool does (re-trial 33j: a late block waiting on a cycle).
    @Test func aGrowingGCDPoolBlockedOnANamedMutexCycleIsDeadlocked() async throws {
        let (_, trial, _) = try await Self.stalled("gcd-cycle-crowd")
        #expect(trial.outcome.kind == .deadlocked, "\(trial.outcome)")
        #expect(trial.outcome.message?.contains("2 threads wait on each other's mutexes with no timeout") == true, "\(trial.outcome.message ?? "")")
        #expect(trial.dump?.waitCycle?.links.count == 2, "\(String(describing: trial.dump?.waitCycle))")
    }

    /// A lock-order deadlock between two GCD blocks: the verdict and the dump's title name the
    /// cycle, as a program without pools has it (re-trial 33j: only run.json and the advice did).
    @Test func aLockOrderDeadlockOfGCDBlocksNamesItsCycleInTheVerdictAndTheDump() async throws {
        let (_, trial, out) = try await Self.stalled("gcd-lock-order")
        #expect(trial.outcome.kind == .deadlocked, "\(trial.outcome)")
        #expect(trial.outcome.message?.contains("2 threads wait on each other's mutexes with no timeout: thread ") == true, "\(trial.outcome.message ?? "")")
        let dump = try String(contentsOfFile: (out as NSString).appendingPathComponent("dump-1.txt"), encoding: .utf8)
        #expect(dump.prefix(while: { $0 != "\n" }).contains("wait on each other's mutexes"), "\(dump.prefix(400))")
    }

    /// The same deadlock with the main thread parked in dispatchMain(): it was called starved,
    /// the parked thread taken for one still awake (re-trial 33j).
    @Test func aGCDDeadlockBesideAMainThreadInDispatchMainIsDeadlocked() async throws {
        let (_, trial, _) = try await Self.stalled("gcd-deadlock-parked")
        #expect(trial.outcome.kind == .deadlocked, "\(trial.outcome)")
        let dump = try #require(trial.dump)
        // dispatch_main ends the main thread with pthread_exit, which parks it in libdispatch's
        // `_dispatch_sig_thread`: named by its wait, not by the probe's own `sigsuspend` it calls
        // through ("sigsuspend ← sigsuspend").
        #expect(dump.groups.contains { $0.summary == "sigsuspend" && $0.frames.contains { $0.symbol == "_dispatch_sig_thread" } }, "\(dump.groups.map(\.summary))")
    }

    /// Blocked workers beside a main thread that sleeps and then signals them: a slow program,
    /// not a starved pool (it was called starved at 1 s, then withdrawn: re-trial 33j).
    @Test func gcdWorkersWaitingForASleepingMainThreadGetNoStallVerdict() async throws {
        _ = try await Self.completedWithoutVerdict("gcd-slow", notCalled: "starved")
    }

    /// Blocked workers beside a thread in `sigwait` for the SIGALRM a kernel timer raises in
    /// 4 s: a wait that is not a lock's, which something the process does not hold ends. No
    /// verdict (re-trial 33k: `deadlocked` at 1 s when an idle worker was in the dump, else at
    /// 2.5 s, "every other thread (2) wait with no timeout", withdrawn when the alarm came).
    @Test func gcdWorkersWaitingForAThreadInSigwaitGetNoStallVerdict() async throws {
        _ = try await Self.completedWithoutVerdict("gcd-sigwait", notCalled: "deadlocked")
    }

    /// Blocked workers and a main thread waiting for a block an `asyncAfter` timer runs: every
    /// thread waits with no timeout, but the timer will wake them. No verdict (re-trial 33j's
    /// NEW-8: deadlocked, then withdrawn when it fired), and the record says the watch waited.
    @Test func gcdWorkersWaitingForAnAsyncAfterBlockGetNoStallVerdict() async throws {
        let trial = try await Self.completedWithoutVerdict("gcd-timer", notCalled: "deadlocked")
        #expect(trial.leftOut?.contains { $0.contains("a Dispatch timer the program armed") } == true, "\(trial.leftOut ?? [])")
    }

    @Test func theStallWatchdogCallsABlockedCooperativePoolStarved() async throws {
        let (_, trial, _) = try await Self.stalled("task-starve")
        #expect(trial.outcome.kind == .starved, "\(trial.outcome)")
        // The pool's own figures, which the advice reads ("2 blocked items filled a pool of 2";
        // re-trial 33i's NEW-5: "3 … of 0").
        #expect(trial.stall?.threadsInWork == ProcessInfo.processInfo.activeProcessorCount, "\(String(describing: trial.stall))")
        #expect(trial.stall?.threadsInUntimedWait == ProcessInfo.processInfo.activeProcessorCount, "\(String(describing: trial.stall))")
        let dump = try #require(trial.dump)
        let cores = ProcessInfo.processInfo.activeProcessorCount
        #expect(dump.groups.contains { $0.count == cores && $0.frames.contains { $0.symbol == "swift_job_run" } }, "\(dump.groups.map(\.summary))")
        // The cooperative pool's threads, not libdispatch's event manager thread beside them.
        #expect(trial.outcome.message?.contains("all \(cores) pool threads wait") == true, "\(trial.outcome.message ?? "")")
    }

    /// A job that waits for work queued to its own actor, the pool's other threads free and the
    /// main thread parked: deadlocked, not starved (re-trial 33j's NEW-1: "1 blocked item filled a
    /// pool of 1").
    @Test func aJobWaitingOnWorkQueuedToItsOwnActorIsDeadlockedNotStarved() async throws {
        let (_, trial, _) = try await Self.stalled("task-actor-self")
        let cores = ProcessInfo.processInfo.activeProcessorCount
        // A one-thread pool is full: starved is right there.
        #expect(trial.outcome.kind == (cores > 1 ? .deadlocked : .starved), "\(trial.outcome)")
        guard cores > 1 else { return }
        #expect(trial.outcome.message?.contains("1 of Swift concurrency's \(cores) pool threads waits with no timeout under concurrency frames") == true,
                "\(trial.outcome.message ?? "")")
        #expect(trial.dump?.groups.contains { $0.count == 1 && $0.summary.hasPrefix("futex wait") && $0.frames.contains { $0.symbol?.contains("runJob") == true } } == true,
                "\(String(describing: trial.dump?.groups.map(\.summary)))")
    }

    @Test func aProgramThatNeedsMoreGCDWorkersThanApplesCapGetsTheCapVerdict() async throws {
        let program = try await TestPrograms.swiftOverflow()
        let (result, run) = try await Self.exec(program, ["gcd-wide"], out: Self.folder(), options: ["--profile", "ios"])
        #expect(result.termination == .exited(0), "\(result.stderr)")
        #expect(result.stdout == "done\n")
        let trial = try #require(run?.trials.first)
        #expect(trial.outcome.kind == .completed)
        let verdict = try #require(trial.capVerdicts?.first, "\(trial.metrics)")
        #expect(verdict.cap == 64)
        #expect(verdict.needed >= 100, "\(verdict.message)")
    }

    @Test func aProgramIsSampledThroughTheTrialPipelineAndGetsATrialsThreadTimeline() async throws {
        // One pipeline: the program's /proc is sampled as a trial's is, so its record
        // has the thread-count timeline a trial's has (it had none before).
        let program = try await TestPrograms.swiftOverflow()
        let (result, run) = try await Self.exec(program, ["gcd-wide"], out: Self.folder())
        #expect(result.termination == .exited(0), "\(result.stderr)")
        let trial = try #require(run?.trials.first)
        let timeline = try #require(trial.threadTimeline, "\(trial.metrics)")
        #expect(timeline.count >= 2)
        #expect(timeline.map(\.threads).max() == trial.metrics.peakThreads, "the peak and the timeline are one sampling")
        #expect((trial.metrics.peakThreads ?? 0) >= 100, "\(timeline)")
        #expect(zip(timeline, timeline.dropFirst()).allSatisfy { $0.seconds <= $1.seconds })
    }

    @Test func badInvocationsFailWithTheirOwnCodes() async throws {
        let missing = try await ProgramRun.run(StrainBinary.path, ["exec", "--out", Self.folder(), "--", "/nonexistent/program"])
        #expect(missing.termination == .exited(127))
        #expect(missing.stderr.contains("cannot run /nonexistent/program"), "\(missing.stderr)")
        let badOption = try await ProgramRun.run(StrainBinary.path, ["exec", "--stall", "forever", "--", "/bin/true"])
        #expect(badOption.termination == .exited(125))
        #expect(badOption.stderr.contains("--stall 'forever' is not a duration"), "\(badOption.stderr)")
        let unknownOption = try await ProgramRun.run(StrainBinary.path, ["exec", "--stal", "1s", "--", "/bin/true"])
        #expect(unknownOption.termination == .exited(125), "\(unknownOption.stderr)")
        let nothing = try await ProgramRun.run(StrainBinary.path, ["exec", "--out", Self.folder()])
        #expect(nothing.termination == .exited(125))
        #expect(nothing.stderr.contains("no program to run"))
        let notAPID = try await ProgramRun.run(StrainBinary.path, ["dump", "twelve"])
        #expect(notAPID.termination == .exited(2))
        let notProbed = try await ProgramRun.run(StrainBinary.path, ["dump", String(getpid())])
        #expect(notProbed.termination == .exited(2))
        #expect(notProbed.stderr.contains("was not started under strain exec"), "\(notProbed.stderr)")
    }

    @Test func execsStartedInTheSameSecondWithoutOutEachRunAndGetTheirOwnFolder() async throws {
        // The collision is forced, not hoped for: every default folder name of the next
        // two minutes (Reports/exec-sh-<UTC second>) already holds another run,
        // so each exec must take the next free name (`-2`, `-3`…) and still run.
        let directory = Self.folder()
        let reports = (directory as NSString).appendingPathComponent("Reports")
        try FileManager.default.createDirectory(atPath: reports, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let formatter = DateFormatter()
        formatter.dateFormat = "yyyyMMdd-HHmmss"
        formatter.timeZone = TimeZone(identifier: "UTC")
        let now = Date()
        var taken: Set<String> = []
        for second in -1...120 {
            let name = "exec-sh-" + formatter.string(from: now.addingTimeInterval(Double(second)))
            let held = (reports as NSString).appendingPathComponent(name)
            try FileManager.default.createDirectory(atPath: held, withIntermediateDirectories: true)
            _ = FileManager.default.createFile(atPath: (held as NSString).appendingPathComponent(".strain.lock"), contents: nil)
            _ = FileManager.default.createFile(atPath: (held as NSString).appendingPathComponent("run.json"), contents: Data("{}".utf8))
            taken.insert(name)
        }
        let script = "cd \"$1\" || exit 99; for i in 1 2 3; do \"$2\" exec -- /bin/sh -c 'echo ran' || echo \"failed $?\"; done"
        let result = try await ProgramRun.run("/bin/sh", ["-c", script, "sh", directory, StrainBinary.path], timeout: 60)
        #expect(result.termination == .exited(0))
        #expect(result.stdout == "ran\nran\nran\n", "\(result.stdout)\(result.stderr)")
        let made = try FileManager.default.contentsOfDirectory(atPath: reports).filter { $0.hasPrefix("exec-sh-") && !taken.contains($0) }
        #expect(made.count == 3, "three new folders beside the held ones: \(made.sorted())")
        for folder in made {
            #expect(folder.firstMatch(of: /^exec-sh-\d{8}-\d{6}-\d+$/) != nil, "a held name with a number after it: \(folder)")
            #expect(FileManager.default.fileExists(atPath: (reports as NSString).appendingPathComponent("\(folder)/run.json")), "\(folder)")
        }
    }

    @Test func strainDumpGivenStrainExecsOwnPidDumpsTheProgramItRuns() async throws {
        // `strain exec -- PROGRAM &` makes $! strain's pid, not the program's.
        let programs = try await TestPrograms.c()
        let running = try ProgramRun.start(StrainBinary.path, ["exec", "--out", Self.folder(), "--", programs.faults, "hang"])
        defer { running.stop() }
        let ready = try #require(await running.readLine(timeout: 20), "the program said it was ready")
        let program = try #require(Int32(ready.split(separator: " ").last ?? ""))
        let strain = running.process.processIdentifier
        let dump = try await ProgramRun.run(StrainBinary.path, ["dump", String(strain)], timeout: 30)
        #expect(dump.termination == .exited(0), "\(dump.stderr)")
        #expect(dump.stdout.hasPrefix("asked with SIGQUIT (process \(strain) is strain exec; asked the program it runs, process \(program))"), "\(dump.stdout)")
        #expect(dump.stdout.contains("thread dump of process \(program): 6 threads"), "\(dump.stdout)")
        #expect(kill(program, 0) == 0, "the dump did not stop the program")
        kill(program, SIGKILL)
        _ = try await running.wait(timeout: 20)
    }

    @Test func aProgramDoesNotOutliveAStrainExecKilledBySIGKILL() async throws {
        let programs = try await TestPrograms.c()
        let out = Self.folder()
        try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: out) }
        // In a shell, with strain's output in a file: an orphaned program must not hold
        // the test's pipes. The script cleans up a program it finds still running.
        let script = """
        "$1" exec --out "$2/run" -- "$3" hang > "$2/output" 2>&1 &
        strain=$!
        for i in $(seq 200); do grep -q ready "$2/output" 2>/dev/null && break; sleep 0.05; done
        program=$(grep ready "$2/output" | awk '{print $NF}')
        [ -n "$program" ] || { kill -9 $strain; echo "no ready line"; exit 0; }
        kill -9 $strain; wait $strain
        for i in $(seq 200); do
            state=$(grep '^State:' /proc/$program/status 2>/dev/null)
            case "$state" in ""|*zombie*) echo gone; exit 0;; esac
            sleep 0.05
        done
        kill -9 $program; echo "still running: $state"
        """
        let result = try await ProgramRun.run("/bin/sh", ["-c", script, "sh", StrainBinary.path, out, programs.faults], timeout: 60)
        #expect(result.stdout == "gone\n", "the program runs on after strain exec was killed: \(result.stdout)\(result.stderr)")
    }

    @Test func theProbeLibraryBesideStrainNeedsNoSwiftRuntime() async throws {
        let library = try ProbeLibrary.locate(executable: StrainBinary.path)
        #expect(library.hasSuffix("/libStrainProbe.so"))
        let readelf = try await ProgramRun.run("/usr/bin/env", ["readelf", "-d", library])
        let needed = readelf.stdout.split(separator: "\n").filter { $0.contains("(NEEDED)") }
        #expect(!needed.isEmpty, "\(readelf.stdout)\(readelf.stderr)")
        #expect(needed.allSatisfy { $0.contains("libc.so") || $0.contains("libunwind.so") || $0.contains("ld-linux") }, "\(needed)")
    }
}

/// A process started for a test, with a time bound, its output collected.
enum ProgramRun {
    struct Result {
        var termination: TerminationStatus
        var stdout: String
        var stderr: String
    }

    static func status(of process: Process) -> TerminationStatus {
        process.terminationReason == .uncaughtSignal ? .signaled(process.terminationStatus) : .exited(process.terminationStatus)
    }

    /// Runs `executable ARGUMENTS` to its end; kills it past `timeout` seconds.
    static func run(_ executable: String, _ arguments: [String], environment: [String: String] = [:], timeout: Double = 60) async throws -> Result {
        try await BoundedProcess.slots.withLock {
            let running = try start(executable, arguments, environment: environment)
            return try await running.wait(timeout: timeout)
        }
    }

    static func start(_ executable: String, _ arguments: [String], environment: [String: String] = [:]) throws -> Running {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        let output = Pipe()
        let error = Pipe()
        process.standardOutput = output
        process.standardError = error
        try process.run()
        return Running(process: process, output: output.fileHandleForReading, error: error.fileHandleForReading)
    }

    /// A started process. Lines are read from its output one at a time, and the
    /// rest when it ends; each wait on a thread of its own (`OffPool`).
    // @unchecked Sendable: one test owns it and awaits each read before the next, so
    // `pending` is touched by one thread at a time (the await orders them).
    final class Running: @unchecked Sendable {
        let process: Process
        let output: FileHandle
        let error: FileHandle
        private var pending = Data()

        init(process: Process, output: FileHandle, error: FileHandle) {
            self.process = process
            self.output = output
            self.error = error
        }

        /// The next line of standard output, or nil after `timeout` seconds.
        func readLine(timeout: Double) async -> String? {
            await OffPool.run("read a line") { self.readLineWaiting(timeout: timeout) }
        }

        private func readLineWaiting(timeout: Double) -> String? {
            OffPool.assertOffPool()
            let deadline = Date().addingTimeInterval(timeout)
            while Date() < deadline {
                if let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                    let line = String(decoding: pending[pending.startIndex..<newline], as: UTF8.self)
                    pending = Data(pending[(newline + 1)...])
                    return line
                }
                var descriptor = pollfd(fd: output.fileDescriptor, events: Int16(POLLIN), revents: 0)
                guard poll(&descriptor, 1, 100) > 0 else { continue } // off the pool: readLineWaiting runs on an OffPool thread
                let chunk = output.availableData
                if chunk.isEmpty { return nil }
                pending.append(chunk)
            }
            return nil
        }

        /// Waits for the end and collects the rest of its output; past `timeout`
        /// seconds the process is killed and the call throws `BoundedProcess.TimedOut`.
        func wait(timeout: Double) async throws -> Result {
            try await OffPool.run("wait for a program") { try self.waitWaiting(timeout: timeout) }
        }

        private func waitWaiting(timeout: Double) throws -> Result {
            OffPool.assertOffPool()
            let readers = DispatchGroup()
            let collected = Collected()
            OffPool.detach("read stderr", group: readers) { [error] in collected.stderr = error.readDataToEndOfFile() } // off the pool: a thread of its own
            OffPool.detach("read stdout", group: readers) { [output] in collected.stdout = output.readDataToEndOfFile() } // off the pool: a thread of its own
            if readers.wait(timeout: .now() + timeout) == .timedOut { // off the pool: waitWaiting runs on an OffPool thread
                kill(process.processIdentifier, SIGKILL)
                _ = readers.wait(timeout: .now() + 5) // off the pool: waitWaiting runs on an OffPool thread
                process.waitUntilExit() // off the pool: waitWaiting runs on an OffPool thread
                let commandLine = ([process.executableURL?.path ?? "?"] + (process.arguments ?? [])).joined(separator: " ")
                throw BoundedProcess.TimedOut(commandLine: commandLine, seconds: timeout)
            }
            process.waitUntilExit() // off the pool: waitWaiting runs on an OffPool thread
            return Result(termination: ProgramRun.status(of: process), stdout: String(decoding: pending + collected.stdout, as: UTF8.self),
                          stderr: String(decoding: collected.stderr, as: UTF8.self))
        }

        private final class Collected: @unchecked Sendable {
            var stdout = Data()
            var stderr = Data()
        }

        /// Kills the process if it still runs (the test's cleanup, from a `defer`:
        /// the kill is immediate, and Foundation reaps it).
        func stop() {
            if process.isRunning {
                kill(process.processIdentifier, SIGKILL)
            }
        }
    }
}

/// The test programs in Fixtures/programs, built once per test process.
enum TestPrograms {
    struct BuildError: Error, CustomStringConvertible {
        var description: String
    }

    struct CPrograms: Sendable {
        var faults: String
        var faultsWithEarlyHandler: String
    }

    static let sources = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures/programs").path
    static let folder: String = {
        let path = TestFolders.root.appendingPathComponent("strain-programs-\(getpid())").path
        try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }()

    /// `cc`, or the Swift toolchain's own clang where there is no system compiler.
    static let compiler: String = {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
        let hasCC = path.split(separator: ":").contains { FileManager.default.isExecutableFile(atPath: "\($0)/cc") }
        return hasCC ? "cc" : "clang"
    }()

    private static let builtC = AsyncOnce<CPrograms> {
        let faults = folder + "/faults"
        let early = folder + "/faults-early"
        try await compile([compiler, "-O0", "-g", "-o", faults, sources + "/faults.c", "-lpthread"])
        try await compile([compiler, "-shared", "-fPIC", "-o", folder + "/libearly.so", sources + "/early.c"])
        try await compile([compiler, "-O0", "-g", "-DWITH_EARLY_HANDLER", "-o", early, sources + "/faults.c", "-L" + folder, "-learly", "-Wl,-rpath," + folder, "-lpthread"])
        return CPrograms(faults: faults, faultsWithEarlyHandler: early)
    }

    private static let builtSwift = AsyncOnce<String> {
        let overflow = folder + "/overflow"
        try await compile(["swiftc", "-Onone", "-g", "-o", overflow, sources + "/overflow.swift"])
        return overflow
    }

    /// The same program built optimised (`-O -g`), as a release build is.
    private static let builtSwiftOptimized = AsyncOnce<String> {
        let optimized = folder + "/overflow-optimized"
        try await compile(["swiftc", "-O", "-g", "-o", optimized, sources + "/overflow.swift"])
        return optimized
    }

    static func c() async throws -> CPrograms { try await builtC.value() }
    static func swiftOverflow() async throws -> String { try await builtSwift.value() }
    static func swiftOptimized() async throws -> String { try await builtSwiftOptimized.value() }

    static func compile(_ command: [String]) async throws(BuildError) {
        let result: ProgramRun.Result
        do {
            result = try await ProgramRun.run("/usr/bin/env", command, environment: Tool.toolchainEnvironment(command), timeout: 180)
        } catch {
            throw BuildError(description: "could not start \(command[0]): \(error)")
        }
        guard result.termination == .exited(0) else {
            throw BuildError(description: "\(command.joined(separator: " ")) failed: \(result.stderr)")
        }
    }
}
