import Foundation
import StrainKit
import Testing
@testable import StrainExec
@testable import StrainRunner
import StrainReports
import StrainWire

/// `strain exec` follows the program's execs and children: a wrapper's `exec`, a
/// version manager's shim, a script's commands are probed like the program, and a
/// fault in any of them is recorded, symbolized, under its own process. Before, the
/// probe was gone at the first exec and a real fault in the final program read
/// "killed by SIGSEGV (sent to it: no fault of its own was recorded)".
@Suite(.serialized, .timeLimit(.minutes(10))) struct ExecTreeTests {
    /// Writes an executable script into a fresh folder.
    static func script(_ name: String, _ text: String) throws -> String {
        let folder = ExecTests.folder()
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let path = (folder as NSString).appendingPathComponent(name)
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        chmod(path, 0o755)
        return path
    }

    @Test(arguments: ["/bin/sh", "/bin/bash"])
    func aWrapperThatExecsACrashingProgramGetsTheRealFaultWithItsTrace(shell: String) async throws {
        let faults = try await TestPrograms.c().faults
        // A wrapper as they are written: it computes something with a command, then execs.
        let wrapper = try Self.script("wrapper", "#!\(shell)\nname=$(basename \"$1\")\nexport WRAPPED=\"$name\"\nexec \"$@\"\n")
        let (result, run) = try await ExecTests.exec(wrapper, [faults, "thread-overflow"], out: ExecTests.folder())
        #expect(result.termination == .signaled(SIGSEGV), "\(result.stderr)")
        let trial = try #require(run?.trials.first)
        #expect(trial.outcome.kind == .stackOverflow, "\(trial.outcome): \(trial.outcome.message ?? "")")
        let trace = try #require(trial.trace, "the fault of the program the wrapper executed")
        #expect((trace.firstFrames + trace.lastFrames).contains { $0.symbol == "recurse" }, "\(trace.firstFrames.prefix(3).map { $0.displayName })")
        #expect((trace.firstFrames + trace.lastFrames).contains { $0.symbol == "overflow_thread" })
        #expect(!result.stderr.contains("sent to it"), "\(result.stderr)")
        #expect(trial.outcome.message?.contains("the fault was in \(faults) thread-overflow, which the program executed") == true, "\(trial.outcome.message ?? "")")
    }

    /// The probe folder's path is in the program's environment: a program may delete it.
    /// Its fault is then not "in a process Strain did not probe": the record says what happened.
    @Test func aProgramThatDeletesItsProbeFolderAndThenFaultsIsToldSoNotCalledUnprobed() async throws {
        // Python deletes the folder (its path from the environment it started with: the
        // probe takes it out of the live one), then reads address 0 in the same probed process.
        let script = "import shutil, ctypes; env = dict(v.split(b'=', 1) for v in open('/proc/self/environ', 'rb').read().split(b'\\0') if b'=' in v); "
            + "shutil.rmtree(env[b'STRAIN_PROBE_DIR']); ctypes.string_at(0)"
        let (result, run) = try await ExecTests.exec("/usr/bin/python3", ["-c", script], out: ExecTests.folder())
        #expect(result.termination == .signaled(SIGSEGV), "\(result.stderr)")
        let trial = try #require(run?.trials.first)
        #expect(trial.outcome.kind == .crashed)
        let message = trial.outcome.message ?? ""
        #expect(message.contains("Strain's probe folder was deleted or replaced while it ran"), "\(message)")
        #expect(!message.contains("did not probe"), "\(message)")
    }

    /// The same when the program puts a file where its probe folder was (found by the
    /// structured fuzzer: it was called a fault in a process Strain did not probe).
    @Test func aProgramThatReplacesItsProbeFolderWithAFileAndThenFaultsIsToldSo() async throws {
        let script = "import shutil, ctypes; env = dict(v.split(b'=', 1) for v in open('/proc/self/environ', 'rb').read().split(b'\\0') if b'=' in v); "
            + "folder = env[b'STRAIN_PROBE_DIR']; shutil.rmtree(folder); open(folder, 'w').write('not a folder'); ctypes.string_at(0)"
        let (result, run) = try await ExecTests.exec("/usr/bin/python3", ["-c", script], out: ExecTests.folder())
        #expect(result.termination == .signaled(SIGSEGV), "\(result.stderr)")
        let message = try #require(run?.trials.first).outcome.message ?? ""
        #expect(message.contains("Strain's probe folder was deleted or replaced while it ran"), "\(message)")
        #expect(!message.contains("did not probe"), "\(message)")
    }

    /// A link to another folder in its place, or another folder: the probe writes nothing
    /// there (it opened the folder by path, and a link to `/` put its fault record into `/`).
    @Test(arguments: ["os.symlink(elsewhere, folder)", "shutil.rmtree(elsewhere); os.rename(folder, elsewhere); os.mkdir(folder); elsewhere = folder"])
    func aProgramThatReplacesItsProbeFolderGetsNothingWrittenInThePlaceOfIt(replacement: String) async throws {
        let elsewhere = ExecTests.folder()
        try FileManager.default.createDirectory(atPath: elsewhere, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: elsewhere) }
        // `elsewhere` ends as the folder the probe must leave empty: the link's target, or the new folder.
        let script = "import os, shutil, ctypes; env = dict(v.split(b'=', 1) for v in open('/proc/self/environ', 'rb').read().split(b'\\0') if b'=' in v); "
            + "folder = env[b'STRAIN_PROBE_DIR'].decode(); elsewhere = '\(elsewhere)'; "
            + (replacement.hasPrefix("os.symlink") ? "shutil.rmtree(folder); " : "") + replacement + "; open('\(elsewhere)-check', 'w').write(elsewhere); "
            + "import sys; sys.stderr.write('last words\\n'); sys.stderr.flush(); ctypes.string_at(0)"
        let (result, run) = try await ExecTests.exec("/usr/bin/python3", ["-c", script], out: ExecTests.folder())
        #expect(result.termination == .signaled(SIGSEGV), "\(result.stderr)")
        let checked = try String(contentsOfFile: elsewhere + "-check", encoding: .utf8)
        try? FileManager.default.removeItem(atPath: elsewhere + "-check")
        defer { if checked != elsewhere { try? FileManager.default.removeItem(atPath: checked) } }
        #expect(((try? FileManager.default.contentsOfDirectory(atPath: checked)) ?? ["unreadable"]) == [], "written in the folder's place")
        let message = try #require(run?.trials.first).outcome.message ?? ""
        #expect(message.contains("Strain's probe folder was deleted or replaced while it ran"), "\(message)")
    }

    /// A link the program planted under the name of its own fault record's temporary
    /// file: the record is made anew beside it, and the file the link names is untouched.
    @Test func aLinkPlantedUnderARecordsNameIsNotWrittenThroughAndTheFaultIsStillRecorded() async throws {
        let victim = ExecTests.folder() + "-victim"
        try "the program's own data\n".write(toFile: victim, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: victim) }
        let script = "import os, ctypes; env = dict(v.split(b'=', 1) for v in open('/proc/self/environ', 'rb').read().split(b'\\0') if b'=' in v); "
            + "folder = env[b'STRAIN_PROBE_DIR'].decode(); os.symlink('\(victim)', '%s/fault-%d.tmp' % (folder, os.getpid())); ctypes.string_at(0)"
        let (result, run) = try await ExecTests.exec("/usr/bin/python3", ["-c", script], out: ExecTests.folder())
        #expect(result.termination == .signaled(SIGSEGV), "\(result.stderr)")
        #expect((try? String(contentsOfFile: victim, encoding: .utf8)) == "the program's own data\n", "the linked file was written")
        let trial = try #require(run?.trials.first)
        #expect(trial.outcome.kind == .crashed, "\(trial.outcome)")
        #expect(trial.trace != nil, "the fault recorded: \(trial.outcome.message ?? "")")
    }

    @Test func withoutFollowingAFaultAfterTheExecIsAFaultInAProcessStrainDidNotProbe() async throws {
        let faults = try await TestPrograms.c().faults
        let (result, run) = try await ExecTests.exec("/bin/sh", ["-c", "exec \"$0\" thread-overflow", faults], out: ExecTests.folder(), options: ["--no-follow"])
        #expect(result.termination == .signaled(SIGSEGV), "\(result.stderr)")
        let trial = try #require(run?.trials.first)
        #expect(trial.outcome.kind == .crashed)
        #expect(trial.trace == nil)
        let message = trial.outcome.message ?? ""
        #expect(message.contains("a fault in a process Strain did not probe"), "\(message)")
        #expect(message.contains(faults), "names the image that ran without the probe: \(message)")
        #expect(!message.contains("sent to it"), "\(message)")
    }

    /// A statically linked program ignores LD_PRELOAD: its fault is one Strain did not probe.
    @Test func aStaticProgramsFaultIsAFaultInAProcessStrainDidNotProbe() async throws {
        let output = TestPrograms.folder + "/faults-static"
        do {
            try await TestPrograms.compile([TestPrograms.compiler, "-static", "-O0", "-o", output, TestPrograms.sources + "/faults.c", "-lpthread"])
        } catch {
            Issue.record("cannot link a static C program here (\(error)); Debian's libc6-dev has libc.a")
            return
        }
        let (result, run) = try await ExecTests.exec(output, ["thread-overflow"], out: ExecTests.folder())
        #expect(result.termination == .signaled(SIGSEGV), "\(result.stderr)")
        let message = try #require(run?.trials.first?.outcome.message)
        #expect(message.contains("a fault in a process Strain did not probe (the program as started had no probe"), "\(message)")
        #expect(!message.contains("sent to it"), "\(message)")
    }

    /// A script that starts commands every way a shell and its tools do: a pipeline, a
    /// command substitution, `sh -c`, `env`, a background job, xargs, awk's system(),
    /// Python's subprocess. Each command is probed (the probe follows), and none of it shows.
    static let commands = """
        printf 'c\\nb\\na\\n' | sort
        echo "words: $(echo one two three | wc -w)"
        /bin/sh -c 'echo "from sh: $0"' zero
        echo "probe variables: $(env | grep -c '^STRAIN_PROBE_' || true)"
        echo "preload: ${LD_PRELOAD:-none}"
        env GREETING=hello /bin/sh -c 'echo "env: $GREETING ${LD_PRELOAD:-none}"'
        for i in 1 2 3; do /bin/echo "n $i"; done | tr a-z A-Z
        sleep 0.05 & wait $!; echo "background: $?"
        printf 'x y\\n' | xargs -n1 echo item
        awk 'BEGIN { system("echo from awk: ${LD_PRELOAD:-none}") }'
        if command -v python3 >/dev/null; then
            python3 -c 'import os, subprocess; print(subprocess.run(["sh", "-c", "echo py: ${LD_PRELOAD:-none}"], capture_output=True, text=True).stdout.strip()); print(os.popen("echo popen").read().strip())'
        fi
        exit 4
        """

    @Test func aScriptThatStartsSeveralCommandsGivesTheOutputAndStatusItGivesAlone() async throws {
        let alone = try await ProgramRun.run("/bin/bash", ["-c", Self.commands])
        let (probed, run) = try await ExecTests.exec("/bin/bash", ["-c", Self.commands], out: ExecTests.folder())
        #expect(alone.termination == .exited(4))
        #expect(probed.termination == .exited(4), "\(probed.stderr)")
        #expect(probed.stdout == alone.stdout, "under strain exec:\n\(probed.stdout)\nalone:\n\(alone.stdout)")
        #expect(probed.stdout.contains("a\nb\nc\nwords: 3\nfrom sh: zero\nprobe variables: 0\npreload: none\nenv: hello none\nN 1\nN 2\nN 3\nbackground: 0\nitem x\nitem y\nfrom awk: none\n"),
                "\(probed.stdout)")
        #expect(probed.stderr.split(separator: "\n").allSatisfy { $0.hasPrefix("strain: ") }, "only strain's own lines: \(probed.stderr)")
        #expect(run?.trials.first?.processFaults == nil)
    }

    @Test func eachCommandOfAScriptThatFaultsIsRecordedUnderItsOwnProcess() async throws {
        let faults = try await TestPrograms.c().faults
        let script = "\"$0\" thread-overflow; echo \"first: $?\"; \"$0\" double-free; echo \"second: $?\""
        let (result, run) = try await ExecTests.exec("/bin/bash", ["-c", script, faults], out: ExecTests.folder())
        #expect(result.termination == .exited(0), "\(result.stderr)")
        #expect(result.stdout == "first: 139\nsecond: 134\n", "\(result.stdout)")
        let trial = try #require(run?.trials.first)
        #expect(trial.outcome.kind == .completed, "the script's own outcome stays its own")
        let processes = trial.processFaults ?? []
        #expect(processes.count == 2, "\(processes.map(\.pid))")
        let overflow = try #require(processes.first { $0.outcome.kind == .stackOverflow })
        #expect(overflow.commandLine == [faults, "thread-overflow"])
        #expect((overflow.trace.firstFrames + overflow.trace.lastFrames).contains { $0.symbol == "recurse" })
        let abort = try #require(processes.first { $0.outcome.signal == SIGABRT })
        #expect(abort.commandLine == [faults, "double-free"])
        #expect(abort.lastWords?.contains("double free") == true, "\(abort.lastWords ?? "none")")
        #expect(Set(processes.compactMap(\.parentPid)).count == 1, "both children of the script")
        #expect(result.stderr.contains("process tree"), "the reports show the tree when more than one process faulted: \(result.stderr)")
    }

    /// A pyenv-like shim: `python3` is a bash script that finds the real python3 past
    /// its own folder and execs it (through env and bash: `python3` → `env` → `bash` →
    /// `exec python3`). The program overflows in a C extension on a 512 KiB thread.
    @Test func aPythonProgramStartedThroughAShimHasItsOverflowRecorded() async throws {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
        guard path.split(separator: ":").contains(where: { FileManager.default.isExecutableFile(atPath: "\($0)/python3") }) else {
            Issue.record("no python3 on PATH: install it (Debian: python3; .ci/setup does) to check strain exec through a shim")
            return
        }
        let shim = try Self.script("python3", """
            #!/usr/bin/env bash
            # A pyenv-like shim: the real python3 is the next one on PATH after this folder.
            shims="$(cd "$(dirname "$0")" && pwd)"
            PATH="$(echo "$PATH" | tr ':' '\\n' | grep -vx "$shims" | paste -sd: -)" exec python3 "$@"
            """)
        let program = try Self.script("deep.py", """
            import json, sys, threading
            sys.setrecursionlimit(1_000_000)
            threading.stack_size(512 * 1024)
            nested = []
            for _ in range(100_000):
                nested = [nested]
            print("nested", flush=True)
            worker = threading.Thread(target=lambda: json.dumps(nested))
            worker.start()
            worker.join()
            print("unreachable")
            """)
        let (result, run) = try await ExecTests.exec(shim, [program], out: ExecTests.folder(), timeout: 120)
        #expect(result.termination == .signaled(SIGSEGV), "\(result.stderr.suffix(1000))")
        #expect(result.stdout == "nested\n")
        let trial = try #require(run?.trials.first)
        #expect(trial.outcome.kind == .stackOverflow, "\(trial.outcome): \(trial.outcome.message ?? "")")
        let trace = try #require(trial.trace)
        #expect(trial.outcome.message?.contains("which the program executed") == true && trial.outcome.message?.contains(program) == true,
                "the python process is named: \(trial.outcome.message ?? "")")
        #expect(trace.stackSizeBytes == 512 * 1024, "the worker's stack: \(trace.stackSizeBytes.map(String.init) ?? "?")")
        #expect((trace.firstFrames + trace.lastFrames).contains { $0.symbol?.contains("encoder_listencode") == true }, "\(trace.firstFrames.prefix(4).map { $0.displayName })")
    }
}

/// A probe whose variables reach a process outside strain exec's tree (here, one the
/// test starts with the program's own variables, the program's pid as the tree's root)
/// finds strain is not its ancestor and stays inert: it records nothing and kills nothing.
@Suite(.serialized, .timeLimit(.minutes(10))) struct ExecOutsideTreeTests {
    @Test func aProcessOutsideTheTreeWithTheProbesVariablesRunsAsAlone() async throws {
        let faults = try await TestPrograms.c().faults
        let out = ExecTests.folder()
        let running = try ProgramRun.start(StrainBinary.path, ["exec", "--out", out, "--", faults, "hang"])
        defer { running.stop() }
        let ready = try #require(await running.readLine(timeout: 20))
        let pid = try #require(Int32(ready.split(separator: " ").last ?? ""))
        let environ = try #require(FileManager.default.contents(atPath: "/proc/\(pid)/environ"))
        var variables: [String: String] = [:]
        for entry in environ.split(separator: 0).map({ String(decoding: $0, as: UTF8.self) }) {
            guard let equals = entry.firstIndex(of: "=") else { continue }
            let name = String(entry[..<equals])
            if name == "LD_PRELOAD" || name.hasPrefix("STRAIN_PROBE_") { variables[name] = String(entry[entry.index(after: equals)...]) }
        }
        #expect(variables["STRAIN_PROBE_DIR"] != nil, "the program was started with the probe's variables: \(variables.keys.sorted())")
        variables["STRAIN_PROBE_FOLLOW"] = "1"
        variables["STRAIN_PROBE_ROOT"] = String(pid)
        let probe = (out as NSString).appendingPathComponent("probe")
        let before = Set((try? FileManager.default.contentsOfDirectory(atPath: probe)) ?? [])
        let outside = try await ProgramRun.run("/bin/sh", ["-c", "kill -SEGV $$; echo unreachable"], environment: variables, timeout: 30)
        #expect(outside.termination == .signaled(SIGSEGV), "\(outside.stderr)")
        let after = Set((try? FileManager.default.contentsOfDirectory(atPath: probe)) ?? [])
        #expect(after == before, "nothing written for a process outside the tree: \(after.subtracting(before))")
        let still = try await ProgramRun.run("/bin/sh", ["-c", "exit 3"], environment: variables, timeout: 30)
        #expect(still.termination == .exited(3), "\(still.stderr)")
        #expect(kill(pid, 0) == 0, "the program runs on")
    }
}

/// `strain exec --stall` on programs with no GCD or Swift concurrency pool: threads
/// blocked on locks with no timeout. Before, `--stall` named nothing outside the pools.
@Suite(.serialized, .timeLimit(.minutes(10))) struct ExecLockStallTests {
    static let built = AsyncOnce<String> {
        let output = TestPrograms.folder + "/locks"
        try await TestPrograms.compile([TestPrograms.compiler, "-O0", "-g", "-o", output, TestPrograms.sources + "/locks.c", "-lpthread"])
        return output
    }

    @Test func twoThreadsTakingTwoMutexesInOppositeOrderAreDeadlockedWithBothNamed() async throws {
        let program = try await Self.built.value()
        let out = ExecTests.folder()
        let (running, pid, dumped) = try await ExecTests.untilFirstDump(["--stall", "500ms", "--", program, "deadlock"], out: out)
        defer { running.stop() }
        #expect(dumped, "the watchdog dumped the deadlocked program")
        kill(pid, SIGKILL)
        let result = try await running.wait(timeout: 20)
        #expect(result.termination == .signaled(SIGKILL))
        let trial = try #require(try RunRecordFile.read(from: (out as NSString).appendingPathComponent("run.json")).trials.first)
        #expect(trial.outcome.kind == .deadlocked, "\(trial.outcome): \(trial.outcome.message ?? "")")
        let message = trial.outcome.message ?? ""
        #expect(message.contains("take_first_then_second") && message.contains("take_second_then_first"), "both threads, where they wait: \(message)")
        let cycle = try #require(trial.dump?.waitCycle, "the cycle is in the dump")
        #expect(cycle.links.count == 2)
        let waitedFor = Set(cycle.links.map(\.waitsFor))
        let held = Set(cycle.links.compactMap(\.holding))
        #expect(waitedFor.count == 2 && waitedFor == held, "each waits for the mutex the other holds: \(cycle.description)")
        #expect(Set(cycle.links.map(\.tid)).count == 2)
        #expect(waitedFor.allSatisfy { message.contains($0) }, "both mutexes named: \(message)")
        #expect(message.contains("mutex first_lock (0x") && message.contains("mutex second_lock (0x"), "by their names in the program: \(message)")
    }

    /// Under `--no-follow`, a shell that executes the program leaves it without the probe,
    /// so it does not catch SIGSYS, the signal a dump is asked with: --stall killed it at its
    /// first quiet spell, `crashed(SIGSYS)` (re-trial 33i). It is walked with ptrace instead.
    @Test func aDeadlockExecutedWithoutTheProbeIsDumpedWithPtraceNotKilled() async throws {
        let program = try await Self.built.value()
        let out = ExecTests.folder()
        let (running, pid, dumped) = try await ExecTests.untilFirstDump(["--no-follow", "--stall", "500ms", "--", "/bin/sh", "-c", "exec \"$0\" deadlock", program], out: out)
        defer { running.stop() }
        #expect(dumped, "the watchdog dumped the deadlocked program")
        #expect(kill(pid, 0) == 0, "the dump did not end the program")
        kill(pid, SIGKILL)
        let result = try await running.wait(timeout: 20)
        #expect(result.termination == .signaled(SIGKILL))
        let trial = try #require(try RunRecordFile.read(from: (out as NSString).appendingPathComponent("run.json")).trials.first)
        #expect(trial.outcome.kind == .deadlocked, "\(trial.outcome): \(trial.outcome.message ?? "")")
    }

    /// A wrapper that starts the program as its child (no exec) waits in wait4 while the
    /// child deadlocks: the watch covers the program's whole tree and names the child.
    @Test func aChildOfAWrapperDeadlockedOnTwoMutexesIsNamedWithItsProcess() async throws {
        let program = try await Self.built.value()
        let out = ExecTests.folder()
        let (running, child, dumped) = try await ExecTests.untilFirstDump(["--stall", "500ms", "--", "/bin/bash", "-c", "\"$0\" deadlock; echo \"status $?\"", program], out: out)
        defer { running.stop() }
        defer { kill(child, SIGKILL) }
        #expect(dumped, "the watchdog judged the program's tree")
        kill(child, SIGKILL)
        let result = try await running.wait(timeout: 20)
        #expect(result.termination == .exited(0), "the wrapper goes on once its child is gone: \(result.stderr)")
        #expect(result.stdout.hasSuffix("status 137\n"), "\(result.stdout)")
        let trial = try #require(try RunRecordFile.read(from: (out as NSString).appendingPathComponent("run.json")).trials.first)
        #expect(trial.outcome.kind == .deadlocked, "\(trial.outcome): \(trial.outcome.message ?? "")")
        let message = trial.outcome.message ?? ""
        #expect(message.contains("in process \(child) (a descendant of the program, \(program) deadlock)"), "\(message)")
        #expect(message.contains("mutex first_lock") && message.contains("mutex second_lock"), "\(message)")
    }

    /// The issue's Python program: two threads take two `threading.Lock`s in opposite
    /// order. A Python lock names no holder, but every thread waits on a lock with no
    /// timeout, so nothing inside the program is left to wake one.
    @Test func aPythonProgramWhoseThreadsTakeTwoLocksInOppositeOrderIsDeadlocked() async throws {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
        guard path.split(separator: ":").contains(where: { FileManager.default.isExecutableFile(atPath: "\($0)/python3") }) else {
            Issue.record("no python3 on PATH: install it (Debian: python3; .ci/setup does) to check --stall on a Python deadlock")
            return
        }
        let program = try ExecTreeTests.script("locks.py", """
            import os, threading
            first, second, both = threading.Lock(), threading.Lock(), threading.Barrier(2)
            def one():
                with first:
                    both.wait(); second.acquire()
            def two():
                with second:
                    both.wait(); first.acquire()
            print("ready", os.getpid(), flush=True)
            threads = [threading.Thread(target=one), threading.Thread(target=two)]
            for thread in threads: thread.start()
            for thread in threads: thread.join()
            """)
        let out = ExecTests.folder()
        let (running, pid, _) = try await ExecTests.untilFirstDump(["--stall", "500ms", "--", "python3", program], out: out, readyTimeout: 30)
        defer { running.stop() }
        kill(pid, SIGKILL)
        _ = try await running.wait(timeout: 20)
        let trial = try #require(try RunRecordFile.read(from: (out as NSString).appendingPathComponent("run.json")).trials.first)
        #expect(trial.outcome.kind == .deadlocked, "\(trial.outcome): \(trial.outcome.message ?? "")")
        #expect(trial.outcome.message?.contains("every thread (3) waits on a lock or condition with no timeout") == true, "\(trial.outcome.message ?? "")")
    }

    @Test(arguments: ["held", "timed"])
    func aLockHeldWhileSleepingOrAWaitWithATimeoutIsNotDeadlocked(mode: String) async throws {
        let program = try await Self.built.value()
        let (result, run) = try await ExecTests.exec(program, [mode], out: ExecTests.folder(), options: ["--stall", "300ms"])
        #expect(result.termination == .exited(0), "\(result.stderr)")
        #expect(result.stdout.hasSuffix("done\n"))
        let trial = try #require(run?.trials.first)
        #expect(trial.outcome.kind == .completed, "\(trial.outcome): \(trial.outcome.message ?? "")")
        #expect(!result.stderr.contains("deadlocked"), "\(result.stderr)")
    }
}

/// The matching of lock waits to holders, on threads described as /proc shows them.
@Suite struct LockWaitsTests {
    /// A thread blocked in `pthread_mutex_lock` on the mutex at `mutex`.
    static func waiting(_ tid: Int, on mutex: UInt64, timed: Bool = false) -> ThreadState {
        ThreadState(tid: tid, name: "t\(tid)", state: "S", syscall: ThreadState.futexCall, arguments: [mutex, 128, 2, timed ? 0x7fff_0000 : 0, 0, 0])
    }

    static func sleeping(_ tid: Int) -> ThreadState {
        ThreadState(tid: tid, name: "t\(tid)", state: "S", syscall: 230, arguments: [0, 0, 0x7fff_0000, 0, 0, 0])
    }

    /// Owners as a mutex's `__owner` field holds them, at the mutex's address + 8.
    static func owners(_ held: [UInt64: Int]) -> (UInt64) -> UInt32? {
        { address in held[address &- 8].map { UInt32($0) } }
    }

    @Test func threeThreadsEachWaitingForTheNextOnesMutexAreACycleInOrder() throws {
        let threads = [Self.waiting(10, on: 0x100), Self.waiting(11, on: 0x200), Self.waiting(12, on: 0x300), Self.sleeping(13)]
        let locks = LockWaits(threads: threads, readWord: Self.owners([0x100: 11, 0x200: 12, 0x300: 10]))
        let cycle = try #require(locks.cycle())
        #expect(cycle.map(\.tid) == [10, 11, 12])
        let judged = try #require(LockWaits.judge(threads: threads, silentSeconds: 1, readWord: Self.owners([0x100: 11, 0x200: 12, 0x300: 10]), place: { _ in nil }))
        #expect(judged.verdict.kind == .deadlocked)
        #expect(judged.cycle?.links.map(\.holding) == ["mutex 0x300", "mutex 0x100", "mutex 0x200"])
    }

    /// What the locks say is said: a mutex locked a second time by its holder, a mutex
    /// whose holder waits on something unreadable (a read-write lock); only the rest are
    /// "could not be read" (all were: re-trial 33m, F4).
    @Test func aSelfLockedMutexAndAReadableHolderAreNamedInADeadlockWithoutACycle() throws {
        let alone = try #require(LockWaits.judge(threads: [Self.waiting(10, on: 0x100)], silentSeconds: 1, readWord: Self.owners([0x100: 10]), place: { _ in nil }))
        #expect(alone.verdict.kind == .deadlocked)
        #expect(alone.verdict.message.hasSuffix("(thread 10 (t10) waits for a mutex it holds itself (locked a second time))"), "\(alone.verdict.message)")
        let chain = try #require(LockWaits.judge(threads: [Self.waiting(11, on: 0x200), Self.waiting(12, on: 0x300)], silentSeconds: 1,
                                                 readWord: Self.owners([0x200: 12]), place: { _ in nil }))
        #expect(chain.verdict.kind == .deadlocked && chain.cycle == nil)
        #expect(chain.verdict.message.hasSuffix("(thread 11 (t11) waits for a mutex thread 12 holds; the holders could not be read from the locks: thread 12 (t12))"),
                "\(chain.verdict.message)")
    }

    @Test func aReadOfAPipeOnlyTheTreeCanWriteBesideLockWaitsIsADeadlockAndAnyOtherReadIsNot() throws {
        let reader = ThreadState(tid: 12, name: "main", state: "S", syscall: 0, arguments: [3, 0, 1, 0, 0, 0])
        let own = { (thread: ThreadState) in thread.tid == 12 }
        // Alone, and beside a thread that waits on a lock whose holder cannot be read.
        let alone = try #require(LockWaits.judge(threads: [reader], silentSeconds: 1, readWord: Self.owners([:]), place: { _ in nil }, readsOwnPipe: own))
        #expect(alone.verdict.kind == .deadlocked && alone.verdict.message.contains("thread 12 (main) reads a pipe that only the program's own processes can write to, so none"), "\(alone.verdict.message)")
        let beside = try #require(LockWaits.judge(threads: [reader, Self.waiting(10, on: 0x100)], silentSeconds: 1, readWord: Self.owners([:]), place: { _ in nil }, readsOwnPipe: own))
        #expect(beside.verdict.message.contains("; the other waits on a lock or condition with no timeout"), "\(beside.verdict.message)")
        // A read something outside can end (a terminal, a socket, a pipe another process holds), or a thread that sleeps: none.
        #expect(LockWaits.judge(threads: [reader], silentSeconds: 1, readWord: Self.owners([:]), place: { _ in nil }, readsOwnPipe: { _ in false }) == nil)
        #expect(LockWaits.judge(threads: [reader, Self.sleeping(13)], silentSeconds: 1, readWord: Self.owners([:]), place: { _ in nil }, readsOwnPipe: own) == nil)
    }

    @Test func aChainToASleepingHolderATimedWaitAndAnUnknownHolderAreNoDeadlock() {
        // 10 waits for 11's mutex, 11 for 12's, and 12 sleeps: it will let go.
        let chain = [Self.waiting(10, on: 0x100), Self.waiting(11, on: 0x200), Self.sleeping(12)]
        #expect(LockWaits.judge(threads: chain, silentSeconds: 1, readWord: Self.owners([0x100: 11, 0x200: 12]), place: { _ in nil }) == nil)
        // Each would wait for the other, but one wait has a timeout.
        let timed = [Self.waiting(10, on: 0x100), Self.waiting(11, on: 0x200, timed: true), Self.sleeping(12)]
        #expect(LockWaits.judge(threads: timed, silentSeconds: 1, readWord: Self.owners([0x100: 11, 0x200: 10]), place: { _ in nil }) == nil)
        // An owner field that names no thread of the program (a condition variable's word, say) is no holder.
        let foreign = [Self.waiting(10, on: 0x100), Self.waiting(11, on: 0x200), Self.sleeping(12)]
        #expect(LockWaits(threads: foreign, readWord: Self.owners([0x100: 99, 0x200: 10])).cycle() == nil)
    }
}

/// The process tree the reports show when more than one process faulted.
@Suite struct ProcessTreeTextTests {
    @Test func aGrandchildIsShownUnderTheFaultedChildThatStartedItAndOneFaultShowsNoTree() throws {
        let run = try ReportTests.fixture()
        var trial = try #require(run.trials.first { $0.trace != nil })
        let trace = try #require(trial.trace)
        trial.trace = nil
        func fault(_ pid: Int32, parent: Int32, _ command: String) -> ProcessFault {
            ProcessFault(pid: pid, parentPid: parent, commandLine: [command], outcome: TrialOutcome(kind: .crashed, signal: SIGSEGV),
                         lastWords: nil, trace: trace)
        }
        trial.processFaults = [fault(11, parent: 10, "child"), fault(12, parent: 11, "grandchild"), fault(13, parent: 10, "other")]
        let tree = try #require(ProcessFaultText.tree(trial))
        #expect(tree.count == 5, "\(tree.joined(separator: "\n"))")
        #expect(tree[0] == "process tree (3 processes faulted):")
        #expect(tree[1].hasPrefix("  the program"))
        #expect(tree[2] == "  ├─ pid 11 (parent 10, child): crashed(SIGSEGV)", "\(tree[2])")
        #expect(tree[3] == "  │  └─ pid 12 (parent 11, grandchild): crashed(SIGSEGV)", "\(tree[3])")
        #expect(tree[4] == "  └─ pid 13 (parent 10, other): crashed(SIGSEGV)", "\(tree[4])")
        trial.processFaults = [fault(11, parent: 10, "child")]
        #expect(ProcessFaultText.tree(trial) == nil, "one process faulted: no tree")
    }
}
