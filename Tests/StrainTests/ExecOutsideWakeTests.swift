import Foundation
import Glibc
import StrainKit
import StrainReports
import StrainRunner
import StrainText
import StrainWire
import Testing
@testable import StrainExec

/// `strain exec --stall` on programs whose every thread waits with no timeout and names
/// no holder, though something outside will wake them: a handler the program installed,
/// or a live process of its tree. They are waiting on an outside event, not deadlocked;
/// and a stall verdict the program then runs on from by itself is withdrawn. Before,
/// each of them was recorded `deadlocked … then the program exited with status 0`.
@Suite(.serialized, .timeLimit(.minutes(10))) struct ExecOutsideWakeTests {
    static var hasPython: Bool {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
        return path.split(separator: ":").contains { FileManager.default.isExecutableFile(atPath: "\($0)/python3") }
    }

    /// Runs `strain exec --stall 500ms -- ARGUMENTS` until the watchdog's first dump, then
    /// `wake(pid)`, and waits (30 s at most) for the end: the result, the trial, the first dump's text.
    static func stalledThenWoken(_ arguments: [String], out: String, readyTimeout: Double = 20,
                                 wake: (Int32) async throws -> Void) async throws -> (ProgramRun.Result, TrialRecord, String) {
        let (running, pid, dumped) = try await ExecTests.untilFirstDump(["--stall", "500ms", "--"] + arguments, out: out, readyTimeout: readyTimeout)
        defer { running.stop() }
        defer { kill(pid, SIGKILL) }
        #expect(dumped, "the watchdog looked at the quiet program")
        let dump = ProgramFile.head((out as NSString).appendingPathComponent("dump-1.txt"), limit: 1 << 20)?.text ?? ""
        try await wake(pid)
        let result = try await running.wait(timeout: 30)
        let trial = try #require(try RunRecordFile.read(from: (out as NSString).appendingPathComponent("run.json")).trials.first)
        return (result, trial, dump)
    }

    /// The Python program `source` (written as `name`) under `stalledThenWoken`, started by
    /// `command` (given its path; `python3 PATH` by default): the result, the trial, the first
    /// dump's text. Nil, with an issue that says what to install, where there is no python3.
    static func pythonStalledThenWoken(_ name: String, _ source: String, checking what: String, command: (String) -> [String] = { ["python3", $0] },
                                       wake: (Int32) async throws -> Void) async throws -> (ProgramRun.Result, TrialRecord, String)? {
        guard hasPython else {
            Issue.record("no python3 on PATH: install it (Debian: python3; .ci/setup does) to check --stall on \(what)")
            return nil
        }
        let program = try ExecTreeTests.script(name, source)
        defer { try? FileManager.default.removeItem(atPath: (program as NSString).deletingLastPathComponent) }
        let out = ExecTests.folder()
        defer { try? FileManager.default.removeItem(atPath: out) }
        return try await stalledThenWoken(command(program), out: out, readyTimeout: 30, wake: wake)
    }

    /// "Run until Ctrl-C": a Python service whose own SIGINT handler sets the `Event` its
    /// main thread waits on, then prints `stopped`.
    static let untilInterrupted = """
        import os, signal, threading
        event = threading.Event()
        signal.signal(signal.SIGINT, lambda *_: event.set())
        print("ready", os.getpid(), flush=True)
        event.wait()
        print("stopped", flush=True)
        """

    @Test func aDaemonWaitingOnASemaphoreItsSIGHUPHandlerPostsIsWaitingOnAnOutsideEvent() async throws {
        let program = try await ExecLockStallTests.built.value()
        let out = ExecTests.folder()
        defer { try? FileManager.default.removeItem(atPath: out) }
        let (result, trial, dump) = try await Self.stalledThenWoken([program, "reload"], out: out) { pid in kill(pid, SIGHUP) }
        #expect(result.termination == .exited(0), "\(result.stderr)")
        #expect(result.stdout.hasSuffix("reloaded\n"), "\(result.stdout)")
        #expect(trial.outcome.kind == .completed, "\(trial.outcome): \(trial.outcome.message ?? "")")
        #expect(trial.stall == nil, "no stall was called")
        let message = trial.outcome.message ?? ""
        #expect(message.contains("waiting on an outside event") && message.contains("its own handler for SIGHUP"), "\(message)")
        #expect(message.hasSuffix("then the program exited with status 0"), "\(message)")
        #expect(dump.contains("waiting on an outside event") && !dump.contains(", deadlocked:"), "\(dump.prefix(400))")
    }

    @Test func aPythonProgramWaitingOnAnEventItsSignalHandlerSetsIsWaitingOnAnOutsideEvent() async throws {
        guard let (result, trial, _) = try await Self.pythonStalledThenWoken("event.py", """
            import os, signal, threading
            event = threading.Event()
            signal.signal(signal.SIGUSR1, lambda *_: event.set())
            print("ready", os.getpid(), flush=True)
            event.wait()
            print("woke", flush=True)
            """, checking: "a Python signal handler", wake: { pid in kill(pid, SIGUSR1) }) else { return }
        #expect(result.termination == .exited(0), "\(result.stderr)")
        #expect(result.stdout.hasSuffix("woke\n"), "\(result.stdout)")
        #expect(trial.outcome.kind == .completed, "\(trial.outcome): \(trial.outcome.message ?? "")")
        let message = trial.outcome.message ?? ""
        // Python's own SIGINT handler (KeyboardInterrupt) is its runtime's: not named.
        #expect(message.contains("waiting on an outside event") && message.contains("its own handler for SIGUSR1,"), "\(message)")
    }

    /// "Run until Ctrl-C": the program's own SIGINT handler sets the `Event` its main thread
    /// waits on. To the kernel it is CPython's handler (the one behind KeyboardInterrupt),
    /// so it was called `deadlocked`; the probe counts the program's second install of it.
    /// Started with SIGINT ignored, as a script's background job is, CPython installs no
    /// KeyboardInterrupt handler, so the program's own install is the first, and was taken
    /// for CPython's: `deadlocked` (re-trial 33e). The probe notes the signals an image
    /// starts with ignored, for which the runtime installs none.
    @Test(arguments: [false, true])
    func aPythonProgramWhoseOwnSIGINTHandlerSetsItsEventIsWaitingOnAnOutsideEvent(startedIgnoringSIGINT: Bool) async throws {
        let command = { (program: String) in startedIgnoringSIGINT ? ["/bin/sh", "-c", "trap '' INT; exec python3 \"$0\"", program] : ["python3", program] }
        guard let (result, trial, dump) = try await Self.pythonStalledThenWoken("interrupt.py", Self.untilInterrupted, checking: "a Python SIGINT handler", command: command,
                                                                                  wake: { pid in kill(pid, SIGINT) }) else { return }
        #expect(result.termination == .exited(0), "\(result.stderr)")
        #expect(result.stdout.hasSuffix("stopped\n"), "\(result.stdout)")
        #expect(trial.outcome.kind == .completed && trial.stall == nil, "\(trial.outcome): \(trial.outcome.message ?? "")")
        let message = trial.outcome.message ?? ""
        #expect(message.contains("waiting on an outside event") && message.contains("its own handler for SIGINT,"), "\(message)")
        #expect(!message.contains("withdrawn") && !dump.contains(", deadlocked:"), "\(message)\n\(dump.prefix(400))")
    }

    /// `strain exec --stall 500ms -- ARGUMENTS`, a program that prints `ready HELPER PID` and
    /// ends with status 3 once SIGINT ends its main thread's wait: SIGINT is sent once the
    /// dump has asked the helper thread (its SIGSYS pending). The result, and the `dump_ns`
    /// lines of the probe's dumps.
    static func interruptedDuringTheDump(_ arguments: [String]) async throws -> (ProgramRun.Result, [Int]) {
        let out = ExecTests.folder()
        defer { try? FileManager.default.removeItem(atPath: out) }
        let running = try ProgramRun.start(StrainBinary.path, ["exec", "--out", out, "--stall", "500ms", "--"] + arguments)
        defer { running.stop() }
        let ready = try #require(await running.readLine(timeout: 30), "the program said it was ready")
        let words = ready.split(separator: " ").compactMap { Int32($0) }
        try #require(words.count == 2, "ready HELPER PID: \(ready)")
        let (helper, pid) = (words[0], words[1])
        defer { kill(pid, SIGKILL) }
        let status = "/proc/\(pid)/task/\(helper)/status"
        let asked = await eventually(within: 30, every: 1_000) {
            let line = TestFiles.read(status).split(separator: "\n").first { $0.hasPrefix("SigPnd:") }
            return line.map { OutsideWake.signals(inMask: $0.dropFirst("SigPnd:".count).drop { $0 == "\t" || $0 == " " }).contains(SIGSYS) } ?? false
        }
        try #require(asked, "the dump asked the helper thread")
        kill(pid, SIGINT)
        let result = try await running.wait(timeout: 20)
        let probe = (out as NSString).appendingPathComponent("probe")
        let dumps = ((try? FileManager.default.contentsOfDirectory(atPath: probe)) ?? []).filter { $0.hasPrefix("dump-") && $0.hasSuffix(".txt") }
        let lengths = dumps.compactMap { name in
            TestFiles.read((probe as NSString).appendingPathComponent(name)).split(separator: "\n").first { $0.hasPrefix("dump_ns ") }.flatMap { Int($0.dropFirst("dump_ns ".count)) }
        }
        return (result, lengths)
    }

    /// A C program, `held [handled]`, that prints `ready HELPER PID` and waits on a
    /// semaphore no one posts, while its helper thread is held in `vfork` (no signal but a
    /// fatal one reaches it, so it cannot answer a dump, which waits its 300 ms answer
    /// timeout for it: the window). With `handled`, a SIGINT handler without SA_RESTART
    /// ends the wait with EINTR, and it exits 3; without, SIGINT is at its default.
    static func heldProgram(in folder: String) async throws -> String {
        let source = folder + "/held.c", program = folder + "/held"
        try TestFiles.write("""
            #define _GNU_SOURCE
            #include <errno.h>
            #include <pthread.h>
            #include <semaphore.h>
            #include <signal.h>
            #include <stdio.h>
            #include <string.h>
            #include <sys/syscall.h>
            #include <sys/wait.h>
            #include <time.h>
            #include <unistd.h>
            static sem_t never;
            static volatile sig_atomic_t stop;
            static volatile int helper_tid;
            static void interrupted(int number) { (void)number; stop = 1; }
            // In vfork until its child has slept a second, again and again: no signal but a
            // fatal one reaches the thread meanwhile, so it cannot answer a dump.
            static void *helper(void *argument) {
                (void)argument;
                helper_tid = (int)syscall(SYS_gettid);
                for (;;) {
                    pid_t child = vfork();
                    if (child == 0) {
                        struct timespec pause = {1, 0};
                        syscall(SYS_nanosleep, &pause, NULL);
                        _exit(0);
                    }
                    if (child > 0) waitpid(child, NULL, 0);
                }
                return NULL;
            }
            int main(int count, char **arguments) {
                sem_init(&never, 0, 0);
                struct sigaction action;
                memset(&action, 0, sizeof(action));
                action.sa_handler = interrupted;  // no SA_RESTART: the wait fails with EINTR
                if (count > 1 && strcmp(arguments[1], "handled") == 0) sigaction(SIGINT, &action, NULL);
                pthread_t thread;
                pthread_create(&thread, NULL, helper, NULL);
                while (helper_tid == 0) usleep(1000);
                printf("ready %d %d\\n", helper_tid, (int)getpid());
                fflush(stdout);
                while (sem_wait(&never) != 0) {
                    if (errno == EINTR && stop) {
                        printf("interrupted\\n");
                        fflush(stdout);
                        _exit(3);
                    }
                }
                return 0;
            }
            """, to: source)
        try await TestPrograms.compile([TestPrograms.compiler, "-O0", "-g", "-o", program, source, "-lpthread"])
        return program
    }

    /// A Ctrl-C that comes while --stall's dump has the program's thread still interrupts
    /// its wait. A program whose handler has no SA_RESTART learns of the signal when its
    /// wait fails with EINTR (a C loop on a flag, as here; CPython's KeyboardInterrupt), and
    /// the dump's SA_RESTART had the kernel restart it: the program waited on, its signal
    /// handled and lost (re-trial 33e). A helper thread held in `vfork` cannot answer the
    /// dump, which waits its 300 ms answer timeout for it: the window.
    @Test func aSIGINTThatComesDuringADumpStillEndsAWaitThatExpectsEINTR() async throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let program = try await Self.heldProgram(in: folder)
        let (result, _) = try await Self.interruptedDuringTheDump([program, "handled"])
        #expect(result.termination == .exited(3), "\(result.stderr.suffix(1500))")
        #expect(result.stdout.hasSuffix("interrupted\n"), "\(result.stdout)")
    }

    /// A thread that blocks every signal (a Python helper that leaves signals to the main
    /// thread) cannot answer a dump: the dump no longer waits its 300 ms answer timeout for
    /// it, a window in which the program's own signals wait too (re-trial 33f: a Ctrl-C in
    /// it went to another thread, and CPython's main thread waited on). The Ctrl-C then
    /// ends the Python program's wait with KeyboardInterrupt.
    @Test func aThreadThatBlocksEverySignalDoesNotHoldTheDumpOpen() async throws {
        guard Self.hasPython else {
            Issue.record("no python3 on PATH: install it (Debian: python3; .ci/setup does) to check a dump of a thread that blocks every signal")
            return
        }
        let program = try ExecTreeTests.script("helper.py", """
            import os, signal, threading
            started = threading.Event()
            def helper():
                signal.pthread_sigmask(signal.SIG_BLOCK, signal.valid_signals())
                started.set()
                threading.Event().wait()
            thread = threading.Thread(target=helper, daemon=True)
            thread.start()
            started.wait()
            print("ready", thread.native_id, os.getpid(), flush=True)
            try:
                threading.Event().wait()
            except KeyboardInterrupt:
                print("interrupted", flush=True)
                os._exit(3)
            """)
        defer { try? FileManager.default.removeItem(atPath: (program as NSString).deletingLastPathComponent) }
        let (result, lengths) = try await Self.interruptedDuringTheDump(["python3", program])
        #expect(result.termination == .exited(3), "\(result.stderr.suffix(1500))")
        #expect(result.stdout.hasSuffix("interrupted\n"), "\(result.stdout)")
        #expect(!lengths.isEmpty && lengths.allSatisfy { $0 < 250_000_000 }, "each dump took less than the 300 ms answer timeout: \(lengths) ns")
    }

    /// C: `descend_deeply(DEPTH)` recurses DEPTH frames, posts `deep` and waits on `never`
    /// for ever (both semaphores for the caller to initialise).
    static let descent = """
        static sem_t never, deep;
        static int descend_deeply(int depth) {
            volatile char room[32];
            room[0] = (char)depth;
            if (depth == 0) {
                sem_post(&deep);
                while (sem_wait(&never) != 0) {}
                return room[0];
            }
            return descend_deeply(depth - 1) + room[0];
        }
        """

    /// A thread that took the dump's signal blocks SIGSYS in the handler while it walks its
    /// stack: one 50,000 frames deep takes longer than the millisecond after which a thread
    /// that holds SIGSYS back is not waited for, and it is still waited for and dumped
    /// whole (re-trial 33g: its stack was dropped). Asked with `strain dump`.
    @Test func aThreadStillAnsweringTheDumpIsWaitedFor() async throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let source = folder + "/deep.c", program = folder + "/deep"
        try TestFiles.write("""
            #define _GNU_SOURCE
            #include <pthread.h>
            #include <semaphore.h>
            #include <signal.h>
            #include <stdio.h>
            #include <unistd.h>
            \(Self.descent)
            static void *walker(void *argument) {
                (void)argument;
                sigset_t quit;  // the dump's request goes to the main thread
                sigemptyset(&quit);
                sigaddset(&quit, SIGQUIT);
                pthread_sigmask(SIG_BLOCK, &quit, NULL);
                return (void *)(long)descend_deeply(50000);
            }
            int main(void) {
                sem_init(&never, 0, 0);
                sem_init(&deep, 0, 0);
                pthread_attr_t attributes;
                pthread_attr_init(&attributes);
                pthread_attr_setstacksize(&attributes, 64 << 20);
                pthread_t thread;
                pthread_create(&thread, &attributes, walker, NULL);
                while (sem_wait(&deep) != 0) {}
                printf("ready %d\\n", (int)getpid());
                fflush(stdout);
                while (sem_wait(&never) != 0) {}
                return 0;
            }
            """, to: source)
        try await TestPrograms.compile([TestPrograms.compiler, "-O0", "-g", "-o", program, source, "-lpthread"])
        let out = ExecTests.folder()
        defer { try? FileManager.default.removeItem(atPath: out) }
        let running = try ProgramRun.start(StrainBinary.path, ["exec", "--out", out, "--", program])
        defer { running.stop() }
        let ready = try #require(await running.readLine(timeout: 30), "the program said it was ready")
        let pid = try #require(Int32(ready.split(separator: " ").last ?? ""))
        defer { kill(pid, SIGKILL) }
        let dump = try await ProgramRun.run(StrainBinary.path, ["dump", String(pid)], timeout: 30)
        #expect(dump.termination == .exited(0), "\(dump.stderr)")
        #expect(dump.stdout.contains("descend_deeply at deep.c"), "the deep thread's stack is in the dump: \(dump.stdout)")
        // Its innermost 128 frames are kept, and the dump says how many more it had (re-trial 33h: it said nothing).
        let more = dump.stdout.firstMatch(of: /… ([\d,]+) more frames, not kept \(the dump keeps a stack's innermost 128\)/).flatMap { Int($0.1.filter(\.isNumber)) }
        #expect(more.map { (49_800...50_000).contains($0) } == true, "about 50,000 frames less the 128 kept: \(dump.stdout.suffix(600))")
        kill(pid, SIGKILL)
        _ = try await running.wait(timeout: 20)
        let record = (out as NSString).appendingPathComponent("run.json")
        let kept = try RunRecordFile.read(from: record).trials.first?.dump?.groups.flatMap(\.threads).compactMap(\.framesNotKept)
        #expect(kept == more.map { [$0] }, "run.json says it too: \(String(describing: kept))")
        let schema = try await SchemaCheck.validate(record)
        #expect(schema.valid, "\(schema.output)")
    }

    /// A shell's `exec python3 -c '…setpgid…'` prefix: strain leads a process group of its
    /// own, which a test signals as a terminal's Ctrl-C does (strain and its program).
    static let ownGroup = "exec python3 -c 'import os, sys; os.setpgid(0, 0); os.execv(sys.argv[1], sys.argv[1:])' \"$0\" \"$@\""

    /// A Ctrl-C during --stall's dump of a program that leaves SIGINT at its default ends it
    /// at once, as alone, with no verdict. strain waited its 3 s for the dump the program,
    /// dead mid-dump, never wrote, then judged the dead program from its threads' states
    /// (re-trial 33h). A helper thread held in `vfork` holds the dump open: the window.
    @Test func aCtrlCDuringADumpEndsAProgramThatLeavesSIGINTAtItsDefaultAtOnce() async throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let program = try await Self.heldProgram(in: folder)
        let out = folder + "/out"
        let strain = try BackgroundStrain(["exec", "--out", out, "--stall", "500ms", "--", program], in: folder, shellPrefix: Self.ownGroup)
        defer { if strain.process.isRunning { kill(strain.pid, SIGKILL) } }
        #expect(await strain.waitForOutput("ready"), "the program started: \(TestFiles.read(strain.stderrPath))")
        let words = TestFiles.read(strain.stdoutPath).split(whereSeparator: { $0 == " " || $0 == "\n" }).compactMap { Int32($0) }
        try #require(words.count == 2, "ready HELPER PID: \(TestFiles.read(strain.stdoutPath))")
        let (helper, pid) = (words[0], words[1])
        defer { kill(pid, SIGKILL) }
        let group = getpgid(strain.pid)
        try #require(group == strain.pid && group != getpgrp(), "strain leads a group of its own: \(group)")
        let asked = await eventually(within: 30, every: 1_000) {
            let line = TestFiles.read("/proc/\(pid)/task/\(helper)/status").split(separator: "\n").first { $0.hasPrefix("SigPnd:") }
            return line.map { OutsideWake.signals(inMask: $0.dropFirst("SigPnd:".count).drop { $0 == "\t" || $0 == " " }).contains(SIGSYS) } ?? false
        }
        try #require(asked, "the dump asked the helper thread")
        let sent = Date()
        kill(-group, SIGINT)
        let result = await strain.finish(timeout: 60)
        let took = Date().timeIntervalSince(sent)
        #expect(result.status == 128 + SIGINT, "\(result.stderr)")
        #expect(took < 2, "strain ended \(took) s after the Ctrl-C")
        let trial = try #require(RunRecordFile.read(from: out + "/run.json").trials.first)
        #expect(trial.outcome.kind == .crashed && trial.outcome.signal == SIGINT, "\(trial.outcome.description): \(trial.outcome.message ?? "")")
    }

    /// A terminal's Ctrl-C during --stall's dump ends a deadlocked Python program (its
    /// KeyboardInterrupt, then `os._exit(5)`): the verdict stays, and the record says the
    /// program then exited with status 5. strain counted signals from when it had called
    /// the verdict, after the dump: the Ctrl-C did not count, and the verdict was withdrawn
    /// as if the program had run on by itself (re-trial 33h's NEW-4). The main thread waits
    /// under 50,000 C frames (ctypes calls back into Python at the bottom), so the Ctrl-C
    /// lands while it walks its stack and is taken when the dump is over; two other threads
    /// answered the dump before and take SIGINT like any (re-trial 33h's NEW-2: one of them
    /// took it, and the program slept on).
    @Test func aCtrlCDuringADumpDoesNotWithdrawTheVerdictAsIfTheProgramRanOnByItself() async throws {
        guard Self.hasPython else {
            Issue.record("no python3 on PATH: install it (Debian: python3; .ci/setup does) to check a Ctrl-C during a dump")
            return
        }
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let source = folder + "/deep.c", library = folder + "/libdeep.so", program = folder + "/deadlocked.py"
        try TestFiles.write("""
            int descend_then(int depth, int (*bottom)(void)) {
                volatile char room[32];
                room[0] = (char)depth;
                return depth == 0 ? bottom() : descend_then(depth - 1, bottom) + room[0];
            }
            """, to: source)
        try await TestPrograms.compile([TestPrograms.compiler, "-O0", "-g", "-shared", "-fPIC", "-o", library, source])
        try TestFiles.write("""
            import ctypes, os, sys, threading
            lib = ctypes.CDLL(sys.argv[1])
            for _ in range(2):
                threading.Thread(target=threading.Event().wait, daemon=True).start()
            @ctypes.CFUNCTYPE(ctypes.c_int)
            def bottom():
                print("ready", os.getpid(), flush=True)
                try:
                    threading.Event().wait()
                except KeyboardInterrupt:
                    print("interrupted", flush=True)
                    os._exit(5)
                return 0
            lib.descend_then(50000, bottom)
            """, to: program)
        let (result, out) = try await Self.ctrlCDuringTheDump(of: ["python3", program, library], in: folder)
        #expect(result.status == 5 && result.stdout.hasSuffix("interrupted\n"), "\(result.stdout)\n\(result.stderr)")
        let trial = try #require(RunRecordFile.read(from: out + "/run.json").trials.first)
        let message = trial.outcome.message ?? ""
        #expect(trial.outcome.kind == .deadlocked && message.contains("then the program exited with status 5") && !message.contains("withdrawn"),
                "\(trial.outcome.description): \(message)")
    }

    /// Runs `command` (it prints `ready PID` once it waits) under `strain exec --stall 500ms`
    /// in a process group of its own, sends the group a Ctrl-C into the dump, and waits for
    /// strain to end (killed after 20 s). The result, and the run folder.
    static func ctrlCDuringTheDump(of command: [String], in folder: String) async throws -> (result: StrainBinary.Result, out: String) {
        let out = folder + "/out"
        let strain = try BackgroundStrain(["exec", "--out", out, "--stall", "500ms", "--"] + command, in: folder, shellPrefix: Self.ownGroup)
        defer { if strain.process.isRunning { kill(strain.pid, SIGKILL) } }
        #expect(await strain.waitForOutput("ready"), "the program started: \(TestFiles.read(strain.stderrPath))")
        let pid = try #require(TestFiles.read(strain.stdoutPath).split(whereSeparator: { $0 == " " || $0 == "\n" }).compactMap { Int32($0) }.first)
        defer { kill(pid, SIGKILL) }
        let group = getpgid(strain.pid)
        try #require(group == strain.pid && group != getpgrp(), "strain leads a group of its own: \(group)")
        try #require(await Self.ctrlCIntoTheDump(of: pid, group: group), "the program was quiet, then its threads ran for the dump")
        return (await strain.finish(timeout: 20), out)
    }

    /// A terminal's Ctrl-C (SIGINT to `group`) at the first CPU time the main thread of `pid`
    /// uses after 0.4 s of none: --stall's dump, while the main thread walks its stack (it is
    /// asked last). False when that did not come within 30 s.
    static func ctrlCIntoTheDump(of pid: Int32, group: pid_t) async -> Bool {
        await OffPool.run("aim") { () -> Bool in
            func cpu() -> Int { Int(TestFiles.read("/proc/\(pid)/task/\(pid)/schedstat").split(separator: " ").first ?? "") ?? 0 }
            var last = cpu(), quietSince = Date()
            let giveUp = Date().addingTimeInterval(30)
            while Date() < giveUp {
                usleep(500) // off the pool: inside OffPool.run
                let now = cpu()
                if now != last {
                    if Date().timeIntervalSince(quietSince) >= 0.4 { kill(-group, SIGINT); return true }
                    last = now
                    quietSince = Date()
                }
            }
            return false
        }
    }

    /// A Ctrl-C that lands in --stall's dump of a program with other threads reaches the
    /// main thread, as alone: the C program learns of it only from its main thread's
    /// `sem_wait` failing with EINTR (its handler sets a flag, without SA_RESTART). A thread
    /// that had answered the dump and gone back to its wait took it, and the program slept on
    /// (re-trial 33h's NEW-2, 8 of 8 aimed); the threads that answered now wait in the
    /// handler until the main thread is out of it. The main thread waits 50,000 frames deep,
    /// so the Ctrl-C lands while it walks its stack; its two helpers block no signal.
    @Test func aCtrlCDuringADumpOfAProgramWithOtherThreadsReachesItsMainThread() async throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let source = folder + "/flag.c", program = folder + "/flag"
        try TestFiles.write("""
            #include <errno.h>
            #include <pthread.h>
            #include <semaphore.h>
            #include <signal.h>
            #include <stdio.h>
            #include <stdlib.h>
            #include <string.h>
            #include <unistd.h>
            static sem_t never, alone;
            static volatile sig_atomic_t interrupted;
            static void on_interrupt(int number) { (void)number; interrupted = 1; }
            static void *helper(void *argument) { (void)argument; while (sem_wait(&never) != 0) {} return NULL; }
            static int descend(int depth) {
                volatile char room[32];
                room[0] = (char)depth;
                if (depth == 0) {
                    printf("ready %d\\n", (int)getpid());
                    fflush(stdout);
                    while (sem_wait(&alone) != 0) {
                        if (errno == EINTR && interrupted) { printf("interrupted\\n"); exit(3); }
                    }
                    return room[0];
                }
                return descend(depth - 1) + room[0];
            }
            int main(void) {
                sem_init(&never, 0, 0);
                sem_init(&alone, 0, 0);
                struct sigaction action;
                memset(&action, 0, sizeof(action));
                action.sa_handler = on_interrupt;  // no SA_RESTART: sem_wait fails with EINTR
                sigaction(SIGINT, &action, NULL);
                pthread_t first, second;
                pthread_create(&first, NULL, helper, NULL);
                pthread_create(&second, NULL, helper, NULL);
                return descend(50000);
            }
            """, to: source)
        try await TestPrograms.compile([TestPrograms.compiler, "-O0", "-g", "-o", program, source, "-lpthread"])
        let (result, out) = try await Self.ctrlCDuringTheDump(of: [program], in: folder)
        #expect(result.status == 3 && result.stdout.hasSuffix("interrupted\n"), "\(result.stdout)\n\(result.stderr)")
        // Its own handler makes it a wait on an outside event, not a stall.
        let trial = try #require(RunRecordFile.read(from: out + "/run.json").trials.first)
        #expect(trial.stall == nil, "\(trial.outcome.description): \(trial.outcome.message ?? "")")
    }

    /// The same service started by a launcher that waits for it (no `exec`): the child's own
    /// install is counted too (every process of the tree notes its handlers), so it is waiting
    /// on an outside event. Before, only the program's process noted them: the child's
    /// handler was taken for CPython's and the service called `deadlocked` (re-trial 33c, F1).
    @Test func aLaunchersPythonChildWhoseOwnSIGINTHandlerSetsItsEventIsWaitingOnAnOutsideEvent() async throws {
        guard let (result, trial, _) = try await Self.pythonStalledThenWoken("service.py", Self.untilInterrupted, checking: "a launched Python service", command: { program in ["/bin/sh", "-c", "python3 \"$0\"; echo launched", program] }, wake: { pid in kill(pid, SIGINT) }) else { return }
        #expect(result.termination == .exited(0), "\(result.stderr)")
        #expect(result.stdout.hasSuffix("stopped\nlaunched\n"), "\(result.stdout)")
        #expect(trial.outcome.kind == .completed && trial.stall == nil, "\(trial.outcome): \(trial.outcome.message ?? "")")
        let message = trial.outcome.message ?? ""
        #expect(message.contains("(a descendant of the program, ") && message.contains("service.py)") && message.contains("waiting on an outside event"), "\(message)")
        #expect(message.contains("its own handler for SIGINT,") && !message.contains("withdrawn"), "\(message)")
    }

    /// A `multiprocessing` worker, forked, installs its own SIGINT handler: its count begins
    /// with the install it inherited (CPython's, in the parent), so its own is the second,
    /// and it is waiting on an outside event. Counted from zero, its own looked like CPython's.
    @Test func aForkedPythonWorkerWhoseOwnSIGINTHandlerSetsItsEventIsWaitingOnAnOutsideEvent() async throws {
        guard let (result, trial, _) = try await Self.pythonStalledThenWoken("forked.py", """
            import multiprocessing, os, signal, threading
            def work():
                event = threading.Event()
                signal.signal(signal.SIGINT, lambda *_: event.set())
                print("ready", os.getpid(), flush=True)
                event.wait()
                print("stopped", flush=True)
            if __name__ == "__main__":
                multiprocessing.set_start_method("fork")
                worker = multiprocessing.Process(target=work)
                worker.start()
                worker.join()
                print("joined", worker.exitcode, flush=True)
            """, checking: "a forked Python worker", wake: { pid in kill(pid, SIGINT) }) else { return }
        #expect(result.termination == .exited(0), "\(result.stderr)")
        #expect(result.stdout.hasSuffix("stopped\njoined 0\n"), "\(result.stdout)")
        #expect(trial.outcome.kind == .completed && trial.stall == nil, "\(trial.outcome): \(trial.outcome.message ?? "")")
        let message = trial.outcome.message ?? ""
        #expect(message.contains("(a descendant of the program, ") && message.contains("forked.py)") && message.contains("its own handler for SIGINT,"), "\(message)")
        #expect(message.contains("waiting on an outside event") && !message.contains("withdrawn"), "\(message)")
    }

    /// "Install the handler, then start the workers": a worker forked after its parent's own
    /// `signal.signal(SIGINT, …)` inherits that handler and installs nothing itself. Its file,
    /// begun at the fork, keeps the parent's count; it was called `deadlocked` (re-trial 33d).
    @Test func aWorkerForkedAfterItsParentsOwnSIGINTHandlerIsWaitingOnAnOutsideEvent() async throws {
        guard let (result, trial, _) = try await Self.pythonStalledThenWoken("inherited.py", """
            import multiprocessing, os, signal, threading
            event = threading.Event()
            def work():
                print("ready", os.getpid(), flush=True)
                event.wait()
                print("stopped", flush=True)
            if __name__ == "__main__":
                signal.signal(signal.SIGINT, lambda *_: event.set())
                multiprocessing.set_start_method("fork")
                worker = multiprocessing.Process(target=work)
                worker.start()
                worker.join()
                print("joined", worker.exitcode, flush=True)
            """, checking: "a worker that keeps its parent's handler", wake: { pid in kill(pid, SIGINT) }) else { return }
        #expect(result.termination == .exited(0), "\(result.stderr)")
        #expect(result.stdout.hasSuffix("stopped\njoined 0\n"), "\(result.stdout)")
        #expect(trial.outcome.kind == .completed && trial.stall == nil, "\(trial.outcome): \(trial.outcome.message ?? "")")
        let message = trial.outcome.message ?? ""
        #expect(message.contains("(a descendant of the program, ") && message.contains("its own handler for SIGINT,"), "\(message)")
        #expect(message.contains("waiting on an outside event") && !message.contains("withdrawn"), "\(message)")
    }

    /// Only a runtime whose own handler makes `SigCgt` ambiguous (CPython) notes its installs:
    /// when every process of the tree did, a shell loop left a file per subshell in the run
    /// folder (200 `$(ls | wc -l)` left 205), without end for a loop that runs for hours.
    @Test func aShellLoopOfSubshellsLeavesNoHandlerNotes() async throws {
        let out = ExecTests.folder()
        defer { try? FileManager.default.removeItem(atPath: out) }
        let result = try await ProgramRun.run(StrainBinary.path, ["exec", "--out", out, "--", "/bin/bash", "-c", "for i in $(seq 40); do x=$(ls / | wc -l); done; echo looped"],
                                              timeout: 120)
        #expect(result.termination == .exited(0) && result.stdout == "looped\n", "\(result.stderr)")
        let probe = (out as NSString).appendingPathComponent("probe")
        let notes = ((try? FileManager.default.contentsOfDirectory(atPath: probe)) ?? []).filter { $0.hasPrefix("handlers-") }
        #expect(notes.isEmpty, "\(notes.count) handler notes: \(notes.prefix(5))")
    }

    /// A launcher's child that nothing in the tree can wake (a C program on a process-shared
    /// semaphore) is called `deadlocked`; posted from outside the tree, it ends, the launcher
    /// exits 0, and the verdict is withdrawn. It stayed `deadlocked … then the program exited
    /// with status 0`: a descendant's stall was never checked for withdrawal.
    @Test func aLaunchersChildCalledDeadlockedThatEndsAndLetsTheLauncherExitByItselfIsWithdrawn() async throws {
        let program = try await ExecLockStallTests.built.value()
        let out = ExecTests.folder()
        defer { try? FileManager.default.removeItem(atPath: out) }
        let semaphore = out + "-semaphore"
        defer { unlink(semaphore) }
        let (result, trial, _) = try await Self.stalledThenWoken(["/bin/sh", "-c", "\"$0\" shared \"$1\"; echo launched", program, semaphore], out: out) { _ in
            let posted = try await ProgramRun.run(program, ["post", semaphore], timeout: 20)
            #expect(posted.termination == .exited(0), "\(posted.stderr)")
        }
        #expect(result.termination == .exited(0), "\(result.stderr)")
        #expect(result.stdout.hasSuffix("posted\nlaunched\n"), "\(result.stdout)")
        #expect(trial.outcome.kind == .completed && trial.stall == nil, "\(trial.outcome): \(trial.outcome.message ?? "")")
        let message = trial.outcome.message ?? ""
        #expect(message.hasPrefix("--stall called it deadlocked (") && message.contains("(a descendant of the program, "), "\(message)")
        #expect(message.contains("but the program then ran on by itself: the verdict is withdrawn"), "\(message)")
    }

    @Test func aPythonProgramWaitingOnAMultiprocessingEventItsSleepingWorkerSetsIsWaitingOnAnOutsideEvent() async throws {
        guard let (result, trial, _) = try await Self.pythonStalledThenWoken("worker.py", """
            import multiprocessing, os, time
            def work(event):
                time.sleep(6)
                event.set()
            if __name__ == "__main__":
                event = multiprocessing.Event()
                worker = multiprocessing.Process(target=work, args=(event,))
                worker.start()
                print("ready", os.getpid(), flush=True)
                event.wait()
                worker.join()
                print("done", flush=True)
            """, checking: "a multiprocessing wait", wake: { _ in }) else { return }
        #expect(result.termination == .exited(0), "\(result.stderr)")
        #expect(result.stdout.hasSuffix("done\n"), "\(result.stdout)")
        #expect(trial.outcome.kind == .completed, "\(trial.outcome): \(trial.outcome.message ?? "")")
        let message = trial.outcome.message ?? ""
        #expect(message.contains("waiting on an outside event") && message.contains("of its tree is alive and not stuck"), "\(message)")
        #expect(message.contains("python3 /") && message.contains("/worker.py)"), "the worker is named by its command line: \(message)")
    }

    /// Woken through shared memory by a process outside its tree, which no rule can see:
    /// called `deadlocked`, then withdrawn once the program runs on by itself.
    @Test func aStallVerdictIsWithdrawnWhenTheProgramThenRunsOnByItself() async throws {
        let program = try await ExecLockStallTests.built.value()
        let out = ExecTests.folder()
        defer { try? FileManager.default.removeItem(atPath: out) }
        let semaphore = out + "-semaphore"
        defer { unlink(semaphore) }
        let (result, trial, dump) = try await Self.stalledThenWoken([program, "shared", semaphore], out: out) { _ in
            let posted = try await ProgramRun.run(program, ["post", semaphore], timeout: 20)
            #expect(posted.termination == .exited(0), "\(posted.stderr)")
        }
        #expect(dump.contains(", deadlocked:"), "the watchdog called it: \(dump.prefix(400))")
        #expect(result.termination == .exited(0), "\(result.stderr)")
        #expect(result.stdout.hasSuffix("posted\n"), "\(result.stdout)")
        #expect(trial.outcome.kind == .completed, "\(trial.outcome): \(trial.outcome.message ?? "")")
        #expect(trial.stall == nil)
        let message = trial.outcome.message ?? ""
        #expect(message.hasPrefix("--stall called it deadlocked (") && message.contains("but the program then ran on by itself: the verdict is withdrawn"), "\(message)")
        #expect(result.stderr.contains("strain: the program's outcome is completed: --stall called it deadlocked ("), "the terminal, shown the verdict, hears it withdrawn: \(result.stderr.suffix(1500))")
    }

    /// No way out: a thread that takes a non-reentrant `threading.Lock` it holds stays `deadlocked`.
    @Test func aPythonProgramTakingANonReentrantLockTwiceStaysDeadlocked() async throws {
        guard let (result, trial, _) = try await Self.pythonStalledThenWoken("twice.py", """
            import os, threading
            lock = threading.Lock()
            print("ready", os.getpid(), flush=True)
            lock.acquire()
            lock.acquire()
            """, checking: "a Python self-deadlock", wake: { pid in kill(pid, SIGKILL) }) else { return }
        #expect(result.termination == .signaled(SIGKILL))
        #expect(trial.outcome.kind == .deadlocked, "\(trial.outcome): \(trial.outcome.message ?? "")")
        #expect(trial.outcome.message?.contains("every thread (1) waits on a lock or condition with no timeout") == true, "\(trial.outcome.message ?? "")")
    }

    static let outsideWake = AsyncOnce<String> {
        let output = TestPrograms.folder + "/outsidewake"
        try await TestPrograms.compile([TestPrograms.compiler, "-O0", "-g", "-o", output, TestPrograms.sources + "/outsidewake.c", "-lpthread"])
        return output
    }

    /// `outsidewake wait FILE MODE` under `--stall 500ms`, woken through FILE by a process
    /// outside its tree once the watchdog has judged it (a futex in a shared mapping: no
    /// way out --stall can see, so the verdict is `deadlocked`); then `after(pid)`.
    static func wokenThroughSharedMemory(_ mode: String, after: (Int32, ProgramRun.Running) async throws -> Void)
        async throws -> (ProgramRun.Result, TrialRecord) {
        let program = try await Self.outsideWake.value()
        let out = ExecTests.folder()
        defer { try? FileManager.default.removeItem(atPath: out) }
        let word = out + "-word"
        defer { try? FileManager.default.removeItem(atPath: word) }
        let (running, pid, dumped) = try await ExecTests.untilFirstDump(["--stall", "500ms", "--", program, "wait", word, mode], out: out)
        defer { running.stop() }
        defer { kill(pid, SIGKILL) }
        #expect(dumped, "the watchdog looked at the waiting program")
        let dump = ProgramFile.head((out as NSString).appendingPathComponent("dump-1.txt"), limit: 1 << 20)?.text ?? ""
        #expect(dump.contains(", deadlocked:"), "the verdict before the wake: \(dump.prefix(400))")
        let woken = try await BoundedProcess.run(program, ["wake", word], timeout: 30)
        #expect(woken.status == 0, "\(woken.stderr)")
        try await after(pid, running)
        let result = try await running.wait(timeout: 30)
        let trial = try #require(try RunRecordFile.read(from: (out as NSString).appendingPathComponent("run.json")).trials.first)
        return (result, trial)
    }

    /// A verdict the program's own later run contradicts is withdrawn even when a signal
    /// ends it: here it used 0.3 s of CPU after the verdict, then SIGTERM killed it.
    /// Before, the record stayed `deadlocked … then the program was killed by SIGTERM`.
    @Test func aProgramWokenFromOutsideThatRunsOnAndIsThenKilledIsNotLeftDeadlocked() async throws {
        let (result, trial) = try await Self.wokenThroughSharedMemory("serve") { pid, running in
            let woke = await running.readLine(timeout: 30)
            #expect(woke == "woke", "the program ran on: \(woke ?? "nothing")")
            kill(pid, SIGTERM)
        }
        #expect(result.termination == .signaled(SIGTERM), "\(result.stderr)")
        #expect(trial.outcome.kind == .crashed && trial.outcome.signal == SIGTERM, "\(trial.outcome): \(trial.outcome.message ?? "")")
        #expect(trial.stall == nil, "no stall kept")
        let message = trial.outcome.message ?? ""
        #expect(message.contains("but the program then ran on by itself (it used ") && message.contains("s of CPU after the verdict): the verdict is withdrawn"), "\(message)")
    }

    /// A program woken from outside that then faults in its own code is recorded as its
    /// crash, with the fault's trace on the terminal. Before, `deadlocked … then the
    /// program was killed by SIGSEGV`, and its trace only in run.json.
    @Test func aProgramWokenFromOutsideThatThenFaultsIsRecordedAsItsCrash() async throws {
        let (result, trial) = try await Self.wokenThroughSharedMemory("crash") { _, _ in }
        #expect(result.termination == .signaled(SIGSEGV), "\(result.stderr)")
        #expect(trial.outcome.kind == .crashed && trial.outcome.signal == SIGSEGV, "\(trial.outcome): \(trial.outcome.message ?? "")")
        #expect(trial.stall == nil, "no stall kept")
        #expect(trial.outcome.message?.contains("but the program then ran on by itself") == true, "\(trial.outcome.message ?? "")")
        #expect(result.stderr.contains("outsidewake.c:"), "the fault's trace, with the program's own line: \(result.stderr.suffix(1500))")
    }

    /// A program that serves events it is sent from outside its tree (through a futex in a
    /// shared mapping, a way out --stall cannot see), each in microseconds: no clock tick
    /// of CPU time in seconds, so it looked quiet and was called `deadlocked` while it
    /// worked, withdrawn only when it exited. The scheduler's count of each waiting
    /// thread's runs shows the wake-ups: it is not judged at all. Under --stall 2s, pulses
    /// 1.5 s apart fall outside a spell's second half one spell in three: read there (as
    /// before re-trial 33c's F2, which saw 700 ms under --stall 1s), the run's 7 or so
    /// spells called it `deadlocked` at least once in about 9 runs of 10.
    @Test(arguments: [(pulses: 40, milliseconds: 250), (pulses: 10, milliseconds: 1500)])
    func aProgramWokenFromOutsideForLessThanATickIsNotCalledDeadlocked(pulses: Int, milliseconds: Int) async throws {
        let program = try await Self.outsideWake.value()
        let out = ExecTests.folder()
        defer { try? FileManager.default.removeItem(atPath: out) }
        let word = out + "-word"
        defer { try? FileManager.default.removeItem(atPath: word) }
        // The pulses start first: on a loaded machine (a CI run) a pulser started after the
        // program's "ready" began 1 s late, and the program was rightly quiet until then.
        let pulser = try ProgramRun.start(program, ["pulse", word, "\(pulses)", "\(milliseconds)"])
        defer { pulser.stop() }
        let running = try ProgramRun.start(StrainBinary.path, ["exec", "--out", out, "--stall", "2s", "--", program, "wait", word, "pulses", "\(pulses)"],
                                           environment: ["SWIFT_BACKTRACE": "enable=no"])
        defer { running.stop() }
        let ready = await running.readLine(timeout: 30)
        #expect(ready?.hasPrefix("ready ") == true, "\(ready ?? "nothing")")
        let pulsed = try await pulser.wait(timeout: 60)
        #expect(pulsed.termination == .exited(0), "\(pulsed.stderr)")
        let result = try await running.wait(timeout: 30)
        #expect(result.termination == .exited(0), "\(result.stderr.suffix(1500))")
        #expect(result.stdout.hasSuffix("served \(pulses)\n"), "\(result.stdout)")
        let trial = try #require(try RunRecordFile.read(from: (out as NSString).appendingPathComponent("run.json")).trials.first)
        #expect(trial.outcome.kind == .completed && trial.stall == nil, "\(trial.outcome): \(trial.outcome.message ?? "")")
        #expect(!(trial.outcome.message ?? "").contains("deadlocked") && !result.stderr.contains("deadlocked"),
                "\(trial.outcome.message ?? "")\n\(result.stderr.suffix(1500))")
        #expect(!FileManager.default.fileExists(atPath: (out as NSString).appendingPathComponent("dump-1.txt")), "no dump was asked of a program at work")
    }

    /// A wait that a SIGHUP handler of the tree's own ends, the signal sent from outside.
    /// `hup-child`: a parent waits on a process-shared semaphore its forked child posts once the
    /// child's own handler has run; before, the child's handler was not looked at: `deadlocked`,
    /// withdrawn when the child posted (re-trial 33k, 2 of 2, in C and with a Python worker).
    /// `self-pipe`: the self-pipe trick, a read of the program's own pipe that its handler
    /// writes to (a read of a pipe only the tree can write to is otherwise `deadlocked`, below).
    @Test(arguments: [("hup-child", "of its tree installed its own handler for SIGHUP"), ("self-pipe", "it installed its own handler for SIGHUP")])
    func aWaitThatAHandlerOfItsTreeEndsIsWaitingOnAnOutsideEvent(mode: String, handler: String) async throws {
        let (result, trial, dump) = try await Self.outsideWakeSignalled(mode, SIGHUP)
        #expect(result.termination == .exited(0), "\(result.stderr)")
        #expect(result.stdout.hasSuffix("woke\n"), "\(result.stdout)")
        #expect(trial.outcome.kind == .completed && trial.stall == nil, "\(trial.outcome): \(trial.outcome.message ?? "")")
        let message = trial.outcome.message ?? ""
        #expect(message.contains("waiting on an outside event") && message.contains(handler), "\(message)")
        #expect(!message.contains("withdrawn") && !dump.contains(", deadlocked:"), "\(message)\n\(dump.prefix(400))")
        // Not "so none is left to write to it; not deadlocked: …" (re-trial 33l, F4).
        #expect(!message.contains("none is left"), "\(message)")
    }

    /// `outsidewake MODE` under ``stalledThenWoken(_:out:readyTimeout:wake:)``, sent `signal`
    /// (to the pid it printed: the child's, for `hup-child`) once the watch has judged it.
    static func outsideWakeSignalled(_ mode: String, _ signal: Int32) async throws -> (ProgramRun.Result, TrialRecord, String) {
        let program = try await Self.outsideWake.value()
        let out = ExecTests.folder()
        defer { try? FileManager.default.removeItem(atPath: out) }
        return try await Self.stalledThenWoken([program, mode], out: out) { pid in kill(pid, signal) }
    }

    /// A thread reading a pipe whose write end only the program holds, with nothing left to
    /// write to it: no verdict before (re-trial 33k, finding 4, in C and Python, 2 of 2).
    @Test func aThreadReadingAPipeOnlyItsOwnProgramCanWriteIsDeadlocked() async throws {
        let (result, trial, dump) = try await Self.outsideWakeSignalled("own-pipe", SIGKILL)
        #expect(result.termination == .signaled(SIGKILL), "\(result.stderr)")
        #expect(trial.outcome.kind == .deadlocked, "\(trial.outcome): \(trial.outcome.message ?? "")")
        #expect(trial.outcome.message?.contains("reads a pipe that only the program's own processes can write to") == true, "\(trial.outcome.message ?? "")")
        #expect(dump.contains(", deadlocked:"), "\(dump.prefix(400))")
        // Advised as a read nothing will answer, not as a lock order ("take locks in one order").
        let advice = OutcomeAdvice.text(for: trial)
        #expect(advice.contains("reads a pipe that no thread or process of the program is left to write to") && !advice.contains("locks in one order"), "\(advice)")
    }

    /// `producer | program` where the program watches its input with a Dispatch read source:
    /// libdispatch's event thread waits in epoll for the pipe, whose writer is outside the
    /// tree, while the blocks the source's handler will release block the pool. Before,
    /// `deadlocked` ("none can wake another"), withdrawn when the line came (re-trial 33k,
    /// 2 of 2, in Swift and in C; a listening socket the same).
    @Test func aDispatchReadSourceOnAPipeWrittenFromOutsideTheTreeIsWaitingOnAnOutsideEvent() async throws {
        // Past the 2.5 s a blocked Dispatch pool is watched for growth before it is judged.
        try await Self.fedFromOutside([try await TestPrograms.swiftOverflow(), "gcd-read-source"], after: 6, printing: "done\n",
                                      waits: "waits in epoll for descriptor 0, a pipe whose other end process ")
    }

    /// `producer | program`: a process of the tree blocked reading a pipe whose writer is
    /// outside the tree (the shell's) waits on an outside event. Before, `deadlocked` at
    /// the threshold on the terminal, withdrawn only when the program exited 0.
    @Test func aChildReadingAPipeWrittenFromOutsideTheTreeIsWaitingOnAnOutsideEvent() async throws {
        try await Self.fedFromOutside([try await Self.outsideWake.value(), "stdin-child"], after: 3, printing: "child read go\n",
                                      waits: "reads descriptor 0, a pipe whose other end process ")
    }

    /// `(sleep SECONDS; echo go) | strain exec --stall 500ms -- COMMAND`: the program ends by
    /// itself with status 0, its output ending `printing`, and is recorded as waiting on an
    /// outside event whose message says `waits`, with no verdict withdrawn.
    static func fedFromOutside(_ command: [String], after seconds: Int, printing: String, waits: String) async throws {
        let out = ExecTests.folder()
        defer { try? FileManager.default.removeItem(atPath: out) }
        let quoted = { (text: String) in "'" + text.replacingOccurrences(of: "'", with: "'\\''") + "'" }
        let pipeline = "(sleep \(seconds); echo go) | SWIFT_BACKTRACE=enable=no \(quoted(StrainBinary.path)) exec --out \(quoted(out)) --stall 500ms -- "
            + command.map(quoted).joined(separator: " ")
        let ended = try await BoundedProcess.run("/bin/sh", ["-c", pipeline], timeout: 60)
        #expect(ended.status == 0, "\(ended.stderr.suffix(2000))")
        #expect(ended.stdout.hasSuffix(printing), "\(ended.stdout)")
        let trial = try #require(try RunRecordFile.read(from: (out as NSString).appendingPathComponent("run.json")).trials.first)
        #expect(trial.outcome.kind == .completed && trial.stall == nil, "\(trial.outcome): \(trial.outcome.message ?? "")")
        let message = trial.outcome.message ?? ""
        #expect(message.contains("waiting on an outside event") && message.contains(waits), "\(message)")
        #expect(!message.contains("withdrawn") && !ended.stderr.contains(", deadlocked:"), "\(message)\n\(ended.stderr.suffix(1500))")
    }
}

/// The rule itself, on masks and threads as /proc shows them.
@Suite struct OutsideWakeTests {
    @Test func aSigCgtMaskReadsAsSignalNumbers() {
        #expect(OutsideWake.signals(inMask: "00000000400004fe") == [2, 3, 4, 5, 6, 7, 8, 11, 31])
        #expect(OutsideWake.signals(inMask: "0000000000000001") == [SIGHUP])
    }

    @Test func thePythonRuntimesSIGINTAndTheProbesFaultHandlersAreNotTheProgramsOwn() {
        let python = "55d0 r-xp 00000000 08:01 1 /usr/bin/python3.11\n"
        let caught = OutsideWake.signals(inMask: "00000000400004fe")
        #expect(OutsideWake.ownHandlers(caught: caught, maps: python).isEmpty)
        #expect(OutsideWake.ownHandlers(caught: caught, maps: "55d0 r-xp 00000000 08:01 1 /usr/bin/daemon\n") == [SIGINT])
        #expect(OutsideWake.ownHandlers(caught: caught.union([SIGUSR1]), maps: python) == [SIGUSR1])
        // CPython installs SIGINT's handler once; a second install is the program's `signal.signal(SIGINT, …)`.
        #expect(OutsideWake.ownHandlers(caught: caught, maps: python, installs: [SIGINT: 1]).isEmpty)
        #expect(OutsideWake.ownHandlers(caught: caught, maps: python, installs: [SIGINT: 2, SIGSEGV: 1]) == [SIGINT])
        // Started with SIGINT ignored, CPython installs none: the first install is the program's.
        #expect(OutsideWake.ownHandlers(caught: caught, maps: python, installs: [SIGINT: 1], ignoredAtStart: [SIGINT, SIGQUIT]) == [SIGINT])
    }

    /// `handlers-PID.txt` as the probe writes it: `-N` for a signal the image started with
    /// ignored, `N` for an install; anything else, or out of 1–64, is skipped.
    @Test func theProbesHandlerNotesReadAsInstallsAndSignalsIgnoredAtStart() throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try TestFiles.write("-2\n-3\n2\n2\n10\n-2147483648\n65\n-0\nx\n", to: folder + "/handlers-42.txt")
        let notes = try #require(OutsideWake.handlerNotes(pid: 42, folder: folder))
        #expect(notes.installs == [SIGINT: 2, SIGUSR1: 1])
        #expect(notes.ignoredAtStart == [SIGINT, SIGQUIT])
        #expect(OutsideWake.handlerNotes(pid: 43, folder: folder) == nil)
    }

    /// The record of C program `source` (built here as NAME) run with `arguments` under
    /// `strain exec --stall 1s` until the watchdog's first dump, then killed: what it judged.
    /// The program prints `ready PID` when its threads are started.
    static func judged(_ source: String, name: String, arguments: [String] = [], cxx: String? = nil) async throws -> TrialRecord {
        let folder = TestFolders.root.appendingPathComponent("strain-\(name)-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let program = folder + "/" + name
        let file = program + (cxx == nil ? ".c" : ".cpp")
        try TestFiles.write(source, to: file)
        try await TestPrograms.compile([cxx ?? TestPrograms.compiler, "-O0", "-g", "-o", program, file, "-pthread"])
        let out = folder + "/out"
        let (running, pid, dumped) = try await ExecTests.untilFirstDump(["--stall", "1s", "--", program] + arguments, out: out)
        defer { running.stop() }
        #expect(dumped, "the watchdog judged \(name) \(arguments)")
        kill(pid, SIGKILL)
        _ = try await running.wait(timeout: 20)
        let trial = try #require(try RunRecordFile.read(from: out + "/run.json").trials.first)
        if !dumped { Issue.record("kept \(folder)") } else { try? FileManager.default.removeItem(atPath: folder) }
        return trial
    }

    /// A way out that cannot be taken is none: a child that exited and was never reaped (a
    /// zombie, taken for a process "alive and not stuck": re-trial 33n, F4), and a handler
    /// whose signal every thread blocks, which a signal sent to it leaves pending for good
    /// (taken for a handler "which a signal sent to it runs": F5). Each program's only other
    /// thread waits on a semaphore nothing posts, and each is deadlocked.
    @Test(arguments: ["zombie", "blocked"])
    func aZombieChildOrAHandlerEveryThreadBlocksIsNoWayOut(_ kind: String) async throws {
        let trial = try await Self.judged("""
            #include <pthread.h>
            #include <semaphore.h>
            #include <signal.h>
            #include <stdio.h>
            #include <string.h>
            #include <unistd.h>
            static sem_t never;
            static void on_usr1(int number) { (void)number; sem_post(&never); }
            static void *worker(void *argument) { (void)argument; sem_wait(&never); return 0; }
            int main(int argc, char **argv) {
                sem_init(&never, 0, 0);
                if (argc > 1 && strcmp(argv[1], "zombie") == 0) {
                    if (fork() == 0) _exit(0);
                } else {
                    struct sigaction action;
                    memset(&action, 0, sizeof action);
                    action.sa_handler = on_usr1;
                    sigaction(SIGUSR1, &action, 0);
                    sigset_t set;
                    sigemptyset(&set);
                    sigaddset(&set, SIGUSR1);
                    pthread_sigmask(SIG_BLOCK, &set, 0);
                }
                pthread_t thread;
                pthread_create(&thread, 0, worker, 0);
                printf("ready %d\\n", getpid());
                fflush(stdout);
                pthread_join(thread, 0);
                return 0;
            }
            """, name: "noway", arguments: [kind])
        #expect(trial.outcome.kind == .deadlocked, "\(kind): \(trial.outcome): \(trial.outcome.message ?? "")")
        #expect(!(trial.outcome.message ?? "").contains("not deadlocked"), "\(trial.outcome.message ?? "")")
    }

    /// A dump asked with a signal ended a wait no handler may end with SA_RESTART: a
    /// program in `pause` exited 0, one in `sigwaitinfo` shut down as if signalled (re-trial
    /// 33o, F1). `pause` is dumped with ptrace; `sigwaitinfo`, which a ptrace stop ends
    /// too, is not dumped, and the record says so. Each program waits on, to be killed.
    @Test(arguments: ["pause", "sigwaitinfo"])
    func aWaitThatAnySignalHandlerEndsIsLeftWaitingUnderTheStallWatch(_ kind: String) async throws {
        let folder = TestFolders.root.appendingPathComponent("strain-anysignal-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let program = folder + "/anysignal"
        try TestFiles.write("""
            #include <signal.h>
            #include <stdio.h>
            #include <string.h>
            #include <unistd.h>
            int main(int argc, char **argv) {
                sigset_t set;
                sigemptyset(&set);
                sigaddset(&set, SIGUSR1);
                sigprocmask(SIG_BLOCK, &set, 0);
                printf("ready %d\\n", getpid());
                fflush(stdout);
                if (strcmp(argv[1], "pause") == 0) {
                    pause();
                } else {
                    siginfo_t info;
                    sigwaitinfo(&set, &info);
                }
                return 0;
            }
            """, to: program + ".c")
        try await TestPrograms.compile([TestPrograms.compiler, "-O0", "-g", "-o", program, program + ".c"])
        let out = folder + "/out"
        let running = try ProgramRun.start(StrainBinary.path, ["exec", "--out", out, "--stall", "1s", "--", program, kind])
        defer { running.stop() }
        let ready = try #require(await running.readLine(timeout: 20), "the program said it was ready")
        let pid = try #require(Int32(ready.split(separator: " ").last ?? ""), "\(ready)")
        // Three thresholds: time for the watch to ask, and for a disturbed wait to end.
        await pause(3_000_000)
        #expect(kill(pid, 0) == 0, "\(kind): the program still waits under --stall")
        kill(pid, SIGKILL)
        let result = try await running.wait(timeout: 20)
        let trial = try #require(try RunRecordFile.read(from: out + "/run.json").trials.first, "\(result.stderr)")
        #expect(trial.outcome.description == "crashed(SIGKILL)", "\(kind) waited until it was killed: \(trial.outcome): \(trial.outcome.message ?? "")")
        if kind == "sigwaitinfo" {
            #expect(trial.leftOut?.contains { $0.contains("a thread waits in sigtimedwait, which a dump's signal or ptrace stop would end") } == true,
                    "\(trial.leftOut ?? [])")
        }
        try? FileManager.default.removeItem(atPath: folder)
    }

    /// A child stopped by SIGSTOP does nothing by itself, but a SIGCONT from outside resumes
    /// it: the program waits on an outside event, and the record says the child is
    /// stopped, not that it "runs, sleeps or waits with a timeout" (re-trial 33n, R7).
    @Test func aStoppedChildIsSaidToBeStoppedNotRunning() async throws {
        let trial = try await Self.judged("""
            #include <pthread.h>
            #include <signal.h>
            #include <stdio.h>
            #include <sys/prctl.h>
            #include <unistd.h>
            static pthread_mutex_t mutex = PTHREAD_MUTEX_INITIALIZER;
            static pthread_cond_t never = PTHREAD_COND_INITIALIZER;
            int main(void) {
                if (fork() == 0) {
                    prctl(PR_SET_PDEATHSIG, SIGKILL);  // ends with the test's kill of the program
                    raise(SIGSTOP);
                    _exit(0);
                }
                printf("ready %d\\n", getpid());
                fflush(stdout);
                pthread_mutex_lock(&mutex);
                pthread_cond_wait(&never, &mutex);
                return 0;
            }
            """, name: "stoppedchild")
        let message = trial.outcome.message ?? ""
        #expect(message.contains("waiting on an outside event"), "\(trial.outcome): \(message)")
        #expect(message.contains("of its tree is stopped (a SIGCONT sent to it resumes it)"), "\(message)")
        #expect(!message.contains("runs, sleeps or waits"), "\(message)")
    }

    /// A std::mutex cycle was placed in libstdc++'s `__gthread_mutex_lock at gthr-default.h`,
    /// compiled into the program, for both threads: each is placed in the program's own
    /// function, past the library's lock (re-trial 33n, R4).
    @Test func aStdMutexCycleIsPlacedInTheProgramsFunctionNotTheGthreadWrapper() async throws {
        guard let cxx = ExecStandardErrorWordsTests.cxx else {
            print("no C++ compiler: the std::mutex cycle's place is not checked (Debian: apt-get install g++)")
            return
        }
        let text = """
            #include <chrono>
            #include <cstdio>
            #include <mutex>
            #include <thread>
            #include <unistd.h>
            namespace {
            std::mutex ledger, audit;
            struct Bank {
                static void both(std::mutex &first, std::mutex &second) {
                    std::lock_guard<std::mutex> held(first);
                    std::this_thread::sleep_for(std::chrono::milliseconds(200));
                    std::lock_guard<std::mutex> wanted(second);
                }
            };
            }
            int main() {
                std::thread one([] { Bank::both(ledger, audit); });
                std::thread two([] { Bank::both(audit, ledger); });
                std::printf("ready %d\\n", getpid());
                std::fflush(stdout);
                one.join();
                two.join();
            }
            """
        let line = try #require(text.split(separator: "\n", omittingEmptySubsequences: false).firstIndex { $0.contains("wanted(second)") }) + 1
        let trial = try await Self.judged(text, name: "bank", cxx: cxx)
        let message = trial.outcome.message ?? ""
        #expect(trial.outcome.kind == .deadlocked, "\(trial.outcome): \(message)")
        #expect(message.components(separatedBy: "in (anonymous namespace)::Bank::both at bank.cpp:\(line):").count >= 3,
                "both threads placed at the second lock's line: \(message)")
        #expect(!message.contains("__gthread"), "\(message)")
    }

    /// Two threads stuck in one function at two lines are each placed at their own: a dump
    /// groups threads by their functions, and both were placed at the first one's line
    /// (re-trial 33n, F6).
    @Test func twoThreadsStuckInOneFunctionAreEachPlacedAtTheirOwnLine() async throws {
        let text = """
            #include <pthread.h>
            #include <semaphore.h>
            #include <stdio.h>
            #include <unistd.h>
            static sem_t never_a, never_b;
            static void *worker(void *which) {
                if (which) {
                    sem_wait(&never_a);
                } else {
                    sem_wait(&never_b);
                }
                return 0;
            }
            int main(void) {
                sem_init(&never_a, 0, 0);
                sem_init(&never_b, 0, 0);
                pthread_t one, two;
                pthread_create(&one, 0, worker, (void *)1);
                pthread_create(&two, 0, worker, 0);
                printf("ready %d\\n", getpid());
                fflush(stdout);
                pthread_join(one, 0);
                return 0;
            }
            """
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        let lineA = try #require(lines.firstIndex { $0.contains("sem_wait(&never_a)") }) + 1
        let lineB = try #require(lines.firstIndex { $0.contains("sem_wait(&never_b)") }) + 1
        let trial = try await Self.judged(text, name: "samefunc")
        let message = trial.outcome.message ?? ""
        #expect(trial.outcome.kind == .deadlocked, "\(trial.outcome): \(message)")
        #expect(message.contains("in worker at samefunc.c:\(lineA):") && message.contains("in worker at samefunc.c:\(lineB):"), "each at its own line: \(message)")
    }

    /// Two threads in a lock-order cycle beside a thread that spins: the tree is never quiet,
    /// and the program got no verdict (re-trial 33n, F11). A named cycle is a deadlock
    /// whatever else runs: looked for from /proc once a second while the tree is busy, and
    /// called once it held for the threshold.
    @Test func aLockCycleBesideASpinningThreadIsDeadlocked() async throws {
        let trial = try await Self.judged("""
            #include <pthread.h>
            #include <stdio.h>
            #include <unistd.h>
            static pthread_mutex_t first_lock = PTHREAD_MUTEX_INITIALIZER, second_lock = PTHREAD_MUTEX_INITIALIZER;
            static void *forward(void *argument) { (void)argument; pthread_mutex_lock(&first_lock); usleep(100000); pthread_mutex_lock(&second_lock); return 0; }
            static void *backward(void *argument) { (void)argument; pthread_mutex_lock(&second_lock); usleep(100000); pthread_mutex_lock(&first_lock); return 0; }
            static void *spin(void *argument) { (void)argument; volatile unsigned long turns = 0; for (;;) turns++; return 0; }
            int main(void) {
                pthread_t one, two, spinner;
                pthread_create(&one, 0, forward, 0);
                pthread_create(&two, 0, backward, 0);
                pthread_create(&spinner, 0, spin, 0);
                printf("ready %d\\n", getpid());
                fflush(stdout);
                pthread_join(one, 0);
                return 0;
            }
            """, name: "busycycle")
        let message = trial.outcome.message ?? ""
        #expect(trial.outcome.kind == .deadlocked, "\(trial.outcome): \(message)")
        #expect(message.contains("while another thread ran; 2 threads wait on each other's mutexes with no timeout"), "\(message)")
        #expect(message.contains("first_lock") && message.contains("second_lock"), "the mutexes by name: \(message)")
    }

    /// Another process of the tree with a handler of its own is a way out (a forked worker
    /// that waits for its SIGHUP, then posts what the program waits on), unless it only
    /// waits for its children: a launcher's or a shell's handlers serve their job control.
    @Test func anotherProcesssOwnHandlerIsAWayOutUnlessItOnlyWaitsForItsChildren() {
        let stuck = ThreadState(tid: 10, name: "main", state: "S", syscall: ThreadState.futexCall, arguments: [0x100, 128, 0, 0, 0, 0])
        let paused = ThreadState(tid: 30, name: "worker", state: "S", syscall: 34, arguments: [0, 0, 0, 0, 0, 0])
        let launcher = ThreadState(tid: 20, name: "bash", state: "S", syscall: 61, arguments: [0, 0, 0, 0, 0, 0])
        let handlers = { (pid: Int32) -> [Int32] in pid == 10 ? [] : [SIGHUP] }
        let withWorker: [(pid: Int32, threads: [ThreadState])] = [(pid: 10, threads: [stuck]), (pid: 30, threads: [paused])]
        let reason = OutsideWake.reason(pid: 10, caught: [], maps: "", processes: withWorker, handlers: handlers, commandLine: { _ in ["worker"] })
        #expect(reason == "process 30 (worker) of its tree installed its own handler for SIGHUP, which a signal sent to it runs", "\(reason ?? "nil")")
        #expect(OutsideWake.reason(pid: 10, caught: [], maps: "", processes: withWorker, commandLine: { _ in nil }) == nil, "no handler of its own")
        // Another process's SIGCHLD handler tells of its own children, not of the program's wait.
        #expect(OutsideWake.reason(pid: 10, caught: [], maps: "", processes: withWorker, handlers: { _ in [SIGCHLD] }, commandLine: { _ in nil }) == nil)
        let underLauncher: [(pid: Int32, threads: [ThreadState])] = [(pid: 20, threads: [launcher]), (pid: 10, threads: [stuck])]
        #expect(OutsideWake.reason(pid: 10, caught: [], maps: "", processes: underLauncher, handlers: handlers, commandLine: { _ in nil }) == nil)
    }

    @Test func aWrapperWaitingForItsChildIsNoWayOutButASleepingWorkerIs() {
        let waiting = ThreadState(tid: 20, name: "bash", state: "S", syscall: 61, arguments: [0, 0, 0, 0, 0, 0])
        let sleeping = ThreadState(tid: 30, name: "python3", state: "S", syscall: 230, arguments: [0, 0, 0x7fff_0000, 0, 0, 0])
        let stuck = ThreadState(tid: 10, name: "main", state: "S", syscall: ThreadState.futexCall, arguments: [0x100, 128, 0, 0, 0, 0])
        let wrapper: [(pid: Int32, threads: [ThreadState])] = [(pid: 20, threads: [waiting]), (pid: 10, threads: [stuck])]
        #expect(OutsideWake.reason(pid: 10, caught: [], maps: "", processes: wrapper, commandLine: { _ in nil }) == nil)
        let worker: [(pid: Int32, threads: [ThreadState])] = [(pid: 10, threads: [stuck]), (pid: 30, threads: [sleeping])]
        #expect(OutsideWake.reason(pid: 10, caught: [], maps: "", processes: worker, commandLine: { _ in ["python3", "w.py"] })?
            .contains("process 30 (python3 w.py) of its tree is alive and not stuck") == true)
    }
}
