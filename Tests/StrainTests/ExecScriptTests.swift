import Foundation
@testable import StrainExec
import StrainReports
import StrainKit
import StrainRunner
import StrainText
import Testing

/// `strain exec` on shell scripts: bash exports its own getenv/setenv/unsetenv, so a
/// probe that cleaned its variables through them left LD_PRELOAD and STRAIN_PROBE_*
/// in bash's environment; every command bash started loaded the probe again, found
/// its parent was not the program and killed itself (`bash -c 'sleep 0.1; echo $?'`
/// printed 143 and "Terminated").
@Suite(.serialized, .timeLimit(.minutes(10))) struct ExecScriptTests {
    /// A script that starts commands (a plain one, a pipeline, a command substitution,
    /// a subshell) and reports what its environment holds.
    static let script = """
        sleep 0.1; echo "sleep: $?"
        echo "preload: ${LD_PRELOAD:-none}"
        echo "probe variables: $(env | grep -c '^STRAIN_PROBE_' || true)"
        echo "substitution: $(echo inner)"
        printf 'a\\nb\\nc\\n' | wc -l
        (exit 7); echo "subshell: $?"
        for i in 1 2 3; do echo "line $i"; done
        """

    @Test func aBashScriptThatNeverFaultsGivesTheOutputAndStatusItGivesAlone() async throws {
        let alone = try await ProgramRun.run("/bin/bash", ["-c", Self.script + "\nexit 3"])
        let out = ExecTests.folder()
        let (probed, run) = try await ExecTests.exec("/bin/bash", ["-c", Self.script + "\nexit 3"], out: out)
        #expect(alone.termination == .exited(3))
        #expect(probed.termination == .exited(3), "\(probed.stderr)")
        #expect(probed.stdout == alone.stdout, "under strain exec:\n\(probed.stdout)\nalone:\n\(alone.stdout)")
        #expect(probed.stdout.contains("sleep: 0\npreload: none\nprobe variables: 0\nsubstitution: inner\n"), "\(probed.stdout)")
        #expect(!probed.stderr.contains("Terminated"), "\(probed.stderr)")
        let record = try #require(run)
        #expect(record.trials.first?.outcome.kind == .threw || record.trials.first?.outcome.kind == .completed,
                "a script that exits 3 ends by its status: \(record.trials.first?.outcome.description ?? "none")")
    }

    /// A probe found in a process strain did not start (the variables reached it by
    /// another way while strain still runs) stays inert: it neither records nor kills.
    @Test func aProcessThatInheritedTheProbesVariablesIsLeftAlone() async throws {
        let out = ExecTests.folder()
        // The program hands the variables it was started with (from /proc, which keeps
        // the original environment) to a child on purpose; the child must run to its end.
        let command = "env $(tr '\\0' '\\n' < /proc/$$/environ | grep -E '^(LD_PRELOAD|STRAIN_PROBE_)') /bin/true; echo child: $?"
        let (probed, _) = try await ExecTests.exec("/bin/bash", ["-c", command], out: out)
        #expect(probed.termination == .exited(0), "\(probed.stderr)")
        #expect(probed.stdout == "child: 0\n", "\(probed.stdout)")
    }
}

/// `strain exec` on a JVM: HotSpot takes SIGSEGVs on purpose and handles them, so the
/// probe's first fault record used to make every Java program `crashed(SIGSEGV)`,
/// Hello world included. The verdict now follows how the process ends.
@Suite(.serialized, .timeLimit(.minutes(10))) struct ExecJVMTests {
    /// `javac` and `java` on PATH, or nil (the test then says so and checks nothing).
    static func javaTools() -> (javac: String, java: String)? {
        let paths = (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":").map(String.init)
        func find(_ name: String) -> String? {
            paths.map { ($0 as NSString).appendingPathComponent(name) }.first { FileManager.default.isExecutableFile(atPath: $0) }
        }
        guard let javac = find("javac"), let java = find("java") else { return nil }
        return (javac, java)
    }

    static func compile(_ name: String, _ source: String) async throws -> String {
        let folder = ExecTests.folder()
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try source.write(toFile: (folder as NSString).appendingPathComponent("\(name).java"), atomically: true, encoding: .utf8)
        let built = try await ProgramRun.run(javaTools()!.javac, ["-d", folder, (folder as NSString).appendingPathComponent("\(name).java")], timeout: 120)
        #expect(built.termination == .exited(0), "\(built.stderr)")
        return folder
    }

    @Test func aJVMHelloWorldCompletesAndAnUncaughtStackOverflowErrorThrows() async throws {
        guard let tools = Self.javaTools() else {
            Issue.record("no javac and java on PATH: install a JDK (Debian: default-jdk-headless) to check strain exec on a JVM")
            return
        }
        let hello = try await Self.compile("Hello", "public class Hello { public static void main(String[] a) { System.out.println(\"hello\"); } }")
        let (greeted, run) = try await ExecTests.exec(tools.java, ["-cp", hello, "Hello"], out: ExecTests.folder(), timeout: 120)
        #expect(greeted.termination == .exited(0), "\(greeted.stderr)")
        #expect(greeted.stdout == "hello\n")
        let completed = try #require(run?.trials.first)
        #expect(completed.outcome.kind == .completed, "\(completed.outcome.description): \(completed.outcome.message ?? "")")
        #expect(completed.expected)
        // HotSpot's start-up SIGSEGV at 0x0, a second or less before the end, is not said as
        // the program's own fault (it read "the program handled SIGSEGV at 0x0 itself and
        // exited with status 0" for every JVM).
        let said = completed.outcome.message ?? ""
        #expect(!said.contains("handled SIGSEGV at 0x0 itself and exited"), "\(said)")
        #expect(said.isEmpty || said.contains("(HotSpot takes such faults on purpose) and ran on: not why it ended"), "\(said)")

        let deep = try await Self.compile("Deep", "public class Deep { static int f(int n) { return f(n + 1) + 1; } public static void main(String[] a) { f(0); } }")
        let (overflowed, deepRun) = try await ExecTests.exec(tools.java, ["-Xss512k", "-cp", deep, "Deep"], out: ExecTests.folder(), timeout: 120)
        #expect(overflowed.termination == .exited(1), "\(overflowed.stderr.suffix(500))")
        #expect(overflowed.stderr.contains("java.lang.StackOverflowError"))
        let threw = try #require(deepRun?.trials.first)
        #expect(threw.outcome.kind == .threw, "\(threw.outcome.description): \(threw.outcome.message ?? "")")
        #expect(threw.outcome.message?.contains("exited with status 1") == true)
    }
}

/// A JVM's `synchronized` deadlock: HotSpot parks a thread waiting for a contended
/// monitor in a timed futex wait, so the stall watch's own rule never called it. The
/// JVM's own thread dump (jcmd PID Thread.print, as jstack asks) names the cycle.
@Suite(.serialized, .timeLimit(.minutes(10))) struct ExecJVMDeadlockTests {
    /// Two threads take two monitors in opposite orders; main prints its pid once both hold their first.
    static let deadlock = """
        public class Dead {
            static final Object a = new Object(), b = new Object();
            static final java.util.concurrent.CountDownLatch held = new java.util.concurrent.CountDownLatch(2);
            public static void main(String[] args) throws Exception {
                Thread first = new Thread(() -> { synchronized (a) { hold(); synchronized (b) { System.out.println("first"); } } }, "first");
                Thread second = new Thread(() -> { synchronized (b) { hold(); synchronized (a) { System.out.println("second"); } } }, "second");
                first.start(); second.start();
                held.await();
                System.out.println("ready " + ProcessHandle.current().pid());
                first.join(); second.join();
            }
            static void hold() { held.countDown(); try { held.await(); Thread.sleep(100); } catch (InterruptedException e) {} }
        }
        """

    /// Prints its pid, then sleeps: a JVM that ends only when told to.
    static let sleeper = """
        public class Sleeper {
            public static void main(String[] args) throws Exception {
                System.out.println("ready " + ProcessHandle.current().pid());
                Thread.sleep(60_000);
            }
        }
        """

    /// Two threads that each wait on a `CountDownLatch` only the other counts down. The JVM
    /// reports no Java-level deadlock for latches, so this had no verdict (re-trial 33k,
    /// finding 8). With `signal`, the program's own `sun.misc.Signal` handler for SIGUSR1
    /// counts main's latch down, and it prints `woke`; with `hook`, a shutdown hook does, as
    /// the JVM exits on a SIGTERM.
    static let latches = """
        import java.util.concurrent.CountDownLatch;
        public class Latches {
            public static void main(String[] args) throws Exception {
                CountDownLatch a = new CountDownLatch(1), b = new CountDownLatch(1);
                if (args.length > 0 && args[0].equals("signal")) sun.misc.Signal.handle(new sun.misc.Signal("USR1"), s -> a.countDown());
                if (args.length > 0 && args[0].equals("hook")) Runtime.getRuntime().addShutdownHook(new Thread(() -> { a.countDown(); System.out.println("hook ran"); }));
                Thread second = new Thread(() -> { try { b.await(); a.countDown(); } catch (InterruptedException e) {} }, "second");
                second.start();
                System.out.println("ready " + ProcessHandle.current().pid());
                a.await();
                b.countDown();
                second.join();
                System.out.println("woke");
            }
        }
        """

    /// The latches under `--stall`: without a handler, `deadlocked` from the JVM's own thread
    /// dump, each thread named with the latch and the line it waits at, and advised as a
    /// count-down that never comes, not as a lock order; with the handler or the hook,
    /// waiting on an outside event (what the signal would run), and the signal then ends it.
    @Test(arguments: ["none", "signal", "hook"])
    func aCycleOfLatchesIsDeadlockedUnlessTheProgramsOwnHandlerOrHookCanEndIt(wayOut: String) async throws {
        guard let tools = ExecJVMTests.javaTools() else {
            Issue.record("no javac and java on PATH: install a JDK (Debian: default-jdk-headless) to check strain exec on a JVM")
            return
        }
        let classes = try await ExecJVMTests.compile("Latches", Self.latches)
        defer { try? FileManager.default.removeItem(atPath: classes) }
        let out = ExecTests.folder()
        defer { try? FileManager.default.removeItem(atPath: out) }
        let signal = ["signal": SIGUSR1, "hook": SIGTERM][wayOut] ?? SIGKILL
        let (result, trial, _) = try await ExecOutsideWakeTests.stalledThenWoken([tools.java, "-cp", classes, "Latches", wayOut],
                                                                                 out: out, readyTimeout: 60) { pid in kill(pid, signal) }
        let message = trial.outcome.message ?? ""
        let waits = ["\"main\" parks for a java.util.concurrent.CountDownLatch$Sync at Latches.main(Latches.java:",
                     "\"second\" parks for a java.util.concurrent.CountDownLatch$Sync at Latches.lambda$main$"]
        #expect(message.contains("shows every thread of the program waiting with no timeout") && waits.allSatisfy(message.contains), "\(message)")
        switch wayOut {
        case "signal":
            #expect(result.termination == .exited(0) && result.stdout.hasSuffix("woke\n"), "\(result.stdout) \(result.stderr)")
            #expect(trial.outcome.kind == .completed && trial.stall == nil, "\(trial.outcome): \(message)")
            #expect(message.contains("waiting on an outside event") && message.contains("it installed its own handler for SIGUSR1"), "\(message)")
        case "hook":
            #expect(result.termination == .exited(143) && result.stdout.contains("hook ran"), "\(result.stdout) \(result.stderr)")
            #expect(trial.outcome.kind != .deadlocked && trial.stall == nil, "\(trial.outcome): \(message)")
            #expect(message.contains("waiting on an outside event") && message.contains("it added a shutdown hook (Runtime.addShutdownHook)")
                    && !message.contains("handler for SIGTERM"), "\(message)")
        default:
            #expect(result.termination == .signaled(SIGKILL), "\(result.stderr)")
            #expect(trial.outcome.kind == .deadlocked, "\(trial.outcome): \(message)")
            let advice = OutcomeAdvice.text(for: trial)
            #expect(advice.contains("countDown") && !advice.contains("locks in one order"), "\(advice)")
        }
    }

    /// A thread that sleeps, waits with a timeout or runs may be what wakes the others: no
    /// verdict from the JVM's dump then; nor from the JVM's own threads' waits.
    @Test func aJVMDumpWithAThreadThatSleepsOrRunsHasNoUntimedWaitsToJudge() throws {
        func thread(_ name: String, _ state: String, daemon: Bool = false) -> String {
            "\"\(name)\" #7 \(daemon ? "daemon " : "")prio=5 os_prio=0 cpu=0.2ms elapsed=1.4s tid=0x1 nid=0x2 waiting on condition  [0x3]\n"
                + "   java.lang.Thread.State: \(state)\n\tat jdk.internal.misc.Unsafe.park(java.base@17.0.15/Native Method)\n"
                + "\t- parking to wait for  <0x69> (a java.util.concurrent.CountDownLatch$Sync)\n\tat App.run(App.java:12)\n\n"
        }
        let jvm = thread("Finalizer", "WAITING (on object monitor)", daemon: true) + thread("Signal Dispatcher", "RUNNABLE", daemon: true)
            + thread("C2 CompilerThread0", "RUNNABLE", daemon: true) + "\"GC Thread#0\" os_prio=0 cpu=17.31ms tid=0x4 nid=0x5 runnable\n\n"
        let stuck = thread("main", "WAITING (parking)") + thread("worker", "BLOCKED (on object monitor)", daemon: true)
        #expect(JVMThreads.untimedWaits(in: jvm + stuck + "JNI global refs: 7, weak refs: 0\n")
                == ["\"main\" parks for a java.util.concurrent.CountDownLatch$Sync at App.run(App.java:12)",
                    "\"worker\" waits to lock a java.util.concurrent.CountDownLatch$Sync at App.run(App.java:12)"])
        for awake in ["TIMED_WAITING (sleeping)", "TIMED_WAITING (parking)", "RUNNABLE"] {
            #expect(JVMThreads.untimedWaits(in: jvm + stuck + thread("timer", awake, daemon: true)).isEmpty, "\(awake)")
        }
        #expect(JVMThreads.untimedWaits(in: jvm).isEmpty, "only the JVM's own threads: nothing of the program's waits")
    }

    /// The same deadlock in a JVM with no jcmd beside its `java` or on PATH (a JRE without
    /// the JDK's tools: here the JDK's own launcher copied to a folder of its own, its
    /// `lib` and `conf` linked): no verdict Strain cannot back, and the record says what
    /// was not judged and which tool names it. The program ends itself 15 s after both
    /// threads hold their first monitor, so the watch has looked at it by then.
    @Test func aJVMWithNoJcmdToAskIsNotJudgedAndTheRecordSaysSoAndWhatWouldJudgeIt() async throws {
        guard let tools = ExecJVMTests.javaTools() else {
            Issue.record("no javac and java on PATH: install a JDK (Debian: default-jdk-headless) to check strain exec on a JVM")
            return
        }
        let source = Self.deadlock.replacingOccurrences(of: "public class Dead", with: "public class DeadThenHalt")
            .replacingOccurrences(of: "first.join(); second.join();", with: "Thread.sleep(15_000); Runtime.getRuntime().halt(0);")
        let classes = try await ExecJVMTests.compile("DeadThenHalt", source)
        defer { try? FileManager.default.removeItem(atPath: classes) }
        // A JRE of its own: the real launcher finds its libraries from where it runs.
        let home = ((URL(fileURLWithPath: tools.java).resolvingSymlinksInPath().path as NSString).deletingLastPathComponent as NSString).deletingLastPathComponent
        let jre = ExecTests.folder()
        defer { try? FileManager.default.removeItem(atPath: jre) }
        try FileManager.default.createDirectory(atPath: jre + "/bin", withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: home + "/bin/java", toPath: jre + "/bin/java")
        for part in ["lib", "conf", "release"] where FileManager.default.fileExists(atPath: home + "/" + part) {
            try FileManager.default.createSymbolicLink(atPath: jre + "/" + part, withDestinationPath: home + "/" + part)
        }
        let out = ExecTests.folder()
        defer { try? FileManager.default.removeItem(atPath: out) }
        // PATH holds only the JRE's bin: no jcmd anywhere strain looks.
        let result = try await ProgramRun.run(StrainBinary.path, ["exec", "--out", out, "--stall", "1s", "--", jre + "/bin/java", "-cp", classes, "DeadThenHalt"],
                                              environment: ["PATH": jre + "/bin", "SWIFT_BACKTRACE": "enable=no"], timeout: 120)
        #expect(result.termination == .exited(0), "\(result.stderr)")
        #expect(result.stdout.contains("ready "), "\(result.stdout)")
        let trial = try #require(try RunRecordFile.read(from: (out as NSString).appendingPathComponent("run.json")).trials.first)
        #expect(trial.outcome.kind == .completed, "\(trial.outcome.description): \(trial.outcome.message ?? "")")
        let note = (trial.leftOut ?? []).first { $0.contains("Java-level deadlocks were not judged") }
        #expect(note?.contains("found no jcmd beside its java or on PATH") == true && note?.contains("jstack ") == true, "\(trial.leftOut ?? [])")
    }

    @Test func aSynchronizedDeadlockIsNamedFromTheJVMsOwnThreadDump() async throws {
        guard let tools = ExecJVMTests.javaTools() else {
            Issue.record("no javac and java on PATH: install a JDK (Debian: default-jdk-headless) to check strain exec on a JVM")
            return
        }
        let classes = try await ExecJVMTests.compile("Dead", Self.deadlock)
        defer { try? FileManager.default.removeItem(atPath: classes) }
        let out = ExecTests.folder()
        defer { try? FileManager.default.removeItem(atPath: out) }
        let (running, pid, dumped) = try await ExecTests.untilFirstDump(["--stall", "1s", "--", tools.java, "-cp", classes, "Dead"], out: out, readyTimeout: 60)
        defer { running.stop() }
        #expect(dumped, "the watch dumped the deadlocked JVM")
        kill(pid, SIGKILL)
        let result = try await running.wait(timeout: 30)
        #expect(result.termination == .signaled(SIGKILL), "\(result.stderr)")
        #expect(!result.stdout.contains("Java-level deadlock"), "the JVM's dump went to jcmd, not the program's output: \(result.stdout)")
        let trial = try #require(try RunRecordFile.read(from: (out as NSString).appendingPathComponent("run.json")).trials.first)
        #expect(trial.outcome.kind == .deadlocked, "\(trial.outcome.description): \(trial.outcome.message ?? "")")
        let message = trial.outcome.message ?? ""
        #expect(message.contains("found a Java-level deadlock: \"first\" waits to lock a java.lang.Object held by \"second\"; \"second\" waits to lock a java.lang.Object held by \"first\""), "\(message)")
        #expect(FileManager.default.fileExists(atPath: (out as NSString).appendingPathComponent("probe/jvm-threads-\(pid).txt")), "the JVM's dump is kept")
        #expect(result.stderr.contains("deadlocked"), "\(result.stderr)")
        #expect(!result.stderr.contains("SIGSEGV at 0x0"), "a stall's evidence is its dump, not the JVM's start-up fault: \(result.stderr)")
    }

    /// A JVM's other threads run on after its Java-level deadlock was named (a collector,
    /// a scheduler; its shutdown on a SIGTERM took 0.10-0.12 s of CPU in re-trial 33h, and
    /// the verdict was withdrawn as if the program had run on). Here a daemon thread
    /// sleeps 10 s and computes for half a second: the deadlock stays named, and the
    /// record does not say the program ran on. With `halt`, that thread then ends the JVM
    /// (status 0): still `deadlocked`, and something outside the cycle ended it.
    @Test(arguments: ["kill", "halt"])
    func aJVMsDeadlockStaysDeadlockedWhenItsOtherThreadsThenUseCPU(ending: String) async throws {
        guard let tools = ExecJVMTests.javaTools() else {
            Issue.record("no javac and java on PATH: install a JDK (Debian: default-jdk-headless) to check strain exec on a JVM")
            return
        }
        let busy = """
            Thread busy = new Thread(() -> {
                    try { Thread.sleep(10_000); } catch (InterruptedException e) {}
                    long end = System.nanoTime() + 500_000_000L, count = 0;
                    while (System.nanoTime() < end) count++;
                    System.out.println("busy " + count);
                    if (args.length > 0) Runtime.getRuntime().halt(0);
                });
                busy.setDaemon(true); busy.start();
                first.join(); second.join();
            """
        let source = Self.deadlock.replacingOccurrences(of: "public class Dead", with: "public class DeadThenBusy")
            .replacingOccurrences(of: "first.join(); second.join();", with: busy)
        let classes = try await ExecJVMTests.compile("DeadThenBusy", source)
        defer { try? FileManager.default.removeItem(atPath: classes) }
        let out = ExecTests.folder()
        defer { try? FileManager.default.removeItem(atPath: out) }
        let arguments = ["--stall", "1s", "--", tools.java, "-cp", classes, "DeadThenBusy"] + (ending == "halt" ? ["halt"] : [])
        let (running, pid, dumped) = try await ExecTests.untilFirstDump(arguments, out: out, readyTimeout: 60)
        defer { running.stop() }
        #expect(dumped, "the watch dumped the deadlocked JVM")
        let line = await running.readLine(timeout: 60)
        #expect(line?.hasPrefix("busy ") == true, "the daemon thread computed: \(line ?? "nothing")")
        if ending == "kill" { kill(pid, SIGKILL) }
        let result = try await running.wait(timeout: 30)
        #expect(result.termination == (ending == "kill" ? .signaled(SIGKILL) : .exited(0)), "\(result.stderr)")
        let trial = try #require(try RunRecordFile.read(from: (out as NSString).appendingPathComponent("run.json")).trials.first, "\(result.stderr)")
        let message = trial.outcome.message ?? ""
        #expect(trial.outcome.kind == .deadlocked && message.contains("found a Java-level deadlock") && !message.contains("withdrawn"), "\(trial.outcome.description): \(message)")
        #expect(message.contains("something outside the cycle ended it") == (ending == "halt"), "\(message)")
    }

    @Test func aJVMEndedBySIGTERMIsSaidToHaveEndedOnItNotOnItsStartUpFault() async throws {
        guard let tools = ExecJVMTests.javaTools() else {
            Issue.record("no javac and java on PATH: install a JDK (Debian: default-jdk-headless) to check strain exec on a JVM")
            return
        }
        let classes = try await ExecJVMTests.compile("Sleeper", Self.sleeper)
        defer { try? FileManager.default.removeItem(atPath: classes) }
        let out = ExecTests.folder()
        defer { try? FileManager.default.removeItem(atPath: out) }
        let running = try ProgramRun.start(StrainBinary.path, ["exec", "--out", out, "--", tools.java, "-cp", classes, "Sleeper"])
        defer { running.stop() }
        let ready = try #require(await running.readLine(timeout: 60), "the JVM said it was ready")
        let pid = try #require(Int32(ready.split(separator: " ").last ?? ""), "\(ready)")
        // Past a second after the start-up fault, then SIGTERM to strain, which passes it on.
        await pause(1_500_000)
        kill(running.process.processIdentifier, SIGTERM)
        let result = try await running.wait(timeout: 30)
        #expect(result.termination == .exited(143), "HotSpot ends by status 143 on SIGTERM: \(result.stderr)")
        let trial = try #require(try RunRecordFile.read(from: (out as NSString).appendingPathComponent("run.json")).trials.first)
        let message = trial.outcome.message ?? ""
        #expect(message.hasPrefix("the program exited with status 143 (128 + 15: the status of a program that ends itself on SIGTERM; a SIGTERM was sent to strain and reached it)"), "\(message)")
        #expect(!message.contains("handled SIGSEGV at 0x0 itself and exited"), "\(message)")
        if FileManager.default.fileExists(atPath: (out as NSString).appendingPathComponent("probe/fault-\(pid).txt")) {
            #expect(message.contains("it had handled a SIGSEGV at 0x0 itself (HotSpot takes such faults on purpose) and ran on: not why it ended"), "\(message)")
        }
    }
}

/// A walk that stops short says so: a stack without unwind information (as V8's JIT
/// code is) gave "206 frames" for a recursion over 100,000 deep.
@Suite(.serialized, .timeLimit(.minutes(10))) struct ExecShortWalkTests {
    static func build(_ name: String, _ flags: [String]) async throws -> String {
        let output = ExecTests.folder() + "-" + name
        let source = TestPrograms.sources + "/unwindless.c"
        let built = try await ProgramRun.run("/usr/bin/env", [TestPrograms.compiler, "-O1"] + flags + ["-o", output, source], timeout: 180)
        #expect(built.termination == .exited(0), "\(built.stderr)")
        return output
    }

    @Test func anOverflowWithoutUnwindInformationIsALowerBoundAndOneWithItIsNot() async throws {
        let bare = try await Self.build("bare", ["-fomit-frame-pointer", "-fno-asynchronous-unwind-tables", "-fno-unwind-tables"])
        let (short, shortRun) = try await ExecTests.exec(bare, [], out: ExecTests.folder())
        #expect(short.termination == .signaled(SIGSEGV))
        let shortTrace = try #require(shortRun?.trials.first?.trace)
        #expect(shortTrace.isStackOverflow)
        #expect(shortTrace.walkStoppedShort == true, "\(shortTrace.totalFrames) frames")
        #expect(short.stderr.contains("at least \(shortTrace.totalFrames) frames (the unwinder stopped short"), "\(short.stderr)")

        let whole = try await Self.build("whole", ["-g"])
        let (complete, completeRun) = try await ExecTests.exec(whole, [], out: ExecTests.folder())
        #expect(complete.termination == .signaled(SIGSEGV))
        let completeTrace = try #require(completeRun?.trials.first?.trace)
        #expect(completeTrace.walkStoppedShort == false, "\(completeTrace.totalFrames) frames")
        #expect(completeTrace.totalFrames > 10_000, "the whole recursion was walked: \(completeTrace.totalFrames)")
        #expect(!complete.stderr.contains("at least"), "\(complete.stderr)")
    }
}

/// A program's peak memory when it ends before `strain exec`'s first sample of /proc
/// (every 50 ms): it was recorded as none ("–" in the reports). The kernel's
/// `ru_maxrss` from `wait4` holds it; strain takes it only above its own high-water
/// mark at the spawn, where the kernel's figure starts.
@Suite(.serialized, .timeLimit(.minutes(10))) struct ExecPeakMemoryTests {
    @Test func aProgramThatEndsBeforeTheFirstSampleStillHasItsPeakRSS() async throws {
        let program = ExecTests.folder() + "-quickpeak"
        let built = try await ProgramRun.run("/usr/bin/env", [TestPrograms.compiler, "-O1", "-o", program, TestPrograms.sources + "/quickpeak.c"], timeout: 180)
        try #require(built.termination == .exited(0), "\(built.stderr)")
        defer { try? FileManager.default.removeItem(atPath: program) }
        let out = ExecTests.folder()
        defer { try? FileManager.default.removeItem(atPath: out) }
        let (result, record) = try await ExecTests.exec(program, [], out: out)
        #expect(result.termination == .exited(0), "\(result.stderr)")
        let trial = try #require(record?.trials.first)
        let peak = try #require(trial.metrics.peakRSSBytes, "no peak RSS recorded")
        #expect(peak >= 96 << 20 && peak < 160 << 20, "the 96 MiB it touched, not strain's own: \(peak) B")
    }
}
