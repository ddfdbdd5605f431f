import Foundation
import StrainRecords
import StrainWire
import Testing
@testable import StrainExec

/// `strain exec`'s own exit codes (126: the program cannot be run; 125: strain's
/// own failure) and the signals it passes on to the program, through the built binary.
@Suite(.serialized) struct ExecExitCodeTests {
    /// A program that would leave `marker` behind if it ever ran.
    static func marking(_ marker: String) -> [String] {
        ["/bin/sh", "-c", "touch '\(marker)'"]
    }

    @Test func aFileThatCannotBeRunExits126NamingItAndNothingRuns() async throws {
        let folder = try temporaryFolder()
        let script = folder + "/not-executable.sh"
        try TestFiles.write("#!/bin/sh\ntouch '\(folder)/ran'\n", to: script)
        chmod(script, 0o644)
        let notExecutable = try await StrainBinary.run(["exec", "--out", folder + "/out1", "--", script], timeout: 30)
        #expect(notExecutable.status == 126, "\(notExecutable.stderr)")
        #expect(notExecutable.stderr == "error: cannot run \(script): Permission denied\n", "\(notExecutable.stderr)")
        #expect(notExecutable.stdout.isEmpty)

        let directory = try await StrainBinary.run(["exec", "--out", folder + "/out2", "--", folder], timeout: 30)
        #expect(directory.status == 126, "\(directory.stderr)")
        #expect(directory.stderr == "error: cannot run \(folder): Permission denied\n", "\(directory.stderr)")

        chmod(script, 0o755)
        let runnable = try await StrainBinary.run(["exec", "--out", folder + "/out3", "--", script], timeout: 30)
        #expect(runnable.status == 0, "the same file once executable runs: \(runnable.stderr)")
        #expect(TestFiles.exists(folder + "/ran"))
    }

    @Test func strainsOwnFailuresExit125WithTheFixAndTheProgramNeverStarts() async throws {
        let folder = try temporaryFolder()
        let marker = folder + "/ran"
        let occupied = folder + "/a-file"
        try TestFiles.write("not a folder\n", to: occupied)
        let cases: [(arguments: [String], environment: [String: String], message: String)] = [
            (["exec", "--out", folder + "/out1", "--"] + Self.marking(marker), ["STRAIN_PROBE_LIBRARY": "/nonexistent/libStrainProbe.so"],
             "error: no probe library at /nonexistent/libStrainProbe.so: STRAIN_PROBE_LIBRARY names it, but it cannot be read\n"),
            (["exec", "--out", occupied, "--"] + Self.marking(marker), [:],
             "error: \(occupied): exists and is not a folder; give a folder for run.json, trials.jsonl and the reports\n"),
            (["exec", "--out", folder + "/out2", "--profile", "android", "--"] + Self.marking(marker), [:],
             "error: --profile 'android' is not a profile; use one of linux, ios, macos\n"),
            (["exec", "--out", folder + "/out3", "--stall", "50ms", "--"] + Self.marking(marker), [:],
             "error: --stall '50ms' is not a duration from 100ms to 10m; write e.g. 500ms, 60s or 5m\n"),
        ]
        for (arguments, environment, message) in cases {
            let result = try await StrainBinary.run(arguments, timeout: 30, environment: environment)
            #expect(result.status == 125, "\(arguments): \(result.stderr)")
            #expect(result.stderr == message, "\(arguments): \(result.stderr)")
            #expect(!TestFiles.exists(marker), "\(arguments): the program ran")
        }
        #expect(TestFiles.read(occupied) == "not a folder\n", "the file given as --out is untouched")
        let fine = try await StrainBinary.run(["exec", "--out", folder + "/out4", "--"] + Self.marking(marker), timeout: 30)
        #expect(fine.status == 0, "the same program runs when strain can: \(fine.stderr)")
        #expect(TestFiles.exists(marker))
    }

    /// A signal sent to strain's whole process group reached the program twice, from the
    /// kernel (the program is in that group) and passed on by strain (`kill -INT -PGID` did
    /// in 2 of 2 runs of a re-trial, `timeout -s INT`, which signals its child and then its
    /// group, in 2 of 4). A C program counts its handler's calls; strain runs in a group of
    /// its own, so the test signals nothing else.
    @Test func aSignalSentToTheWholeProcessGroupReachesTheProgramOnce() async throws {
        let folder = try temporaryFolder()
        let source = folder + "/count.c", program = folder + "/count"
        try TestFiles.write("""
            #include <signal.h>
            #include <stdio.h>
            #include <string.h>
            #include <unistd.h>
            static volatile sig_atomic_t count;
            static void counted(int number) { (void)number; count++; }
            int main(void) {
                struct sigaction action;
                memset(&action, 0, sizeof(action));
                action.sa_handler = counted;
                action.sa_flags = SA_RESTART;
                sigaction(SIGUSR1, &action, NULL);
                sigaction(SIGINT, &action, NULL);
                printf("ready %d\\n", (int)getpid());
                fflush(stdout);
                int shown = 0;
                for (int i = 0; i < 6000; i++) {
                    if (count != shown) { shown = count; printf("count %d\\n", shown); fflush(stdout); }
                    usleep(10000);
                }
                return 0;
            }
            """, to: source)
        try await TestPrograms.compile([TestPrograms.compiler, "-O0", "-o", program, source])
        let ownGroup = "exec python3 -c 'import os, sys; os.setpgid(0, 0); os.execv(sys.argv[1], sys.argv[1:])' \"$0\" \"$@\""
        let strain = try BackgroundStrain(["exec", "--out", folder + "/out", "--", program], in: folder, shellPrefix: ownGroup)
        defer { if strain.process.isRunning { kill(strain.pid, SIGKILL) } }
        #expect(await strain.waitForOutput("ready "), "the program started: \(TestFiles.read(strain.stderrPath))")
        let group = getpgid(strain.pid)
        try #require(group == strain.pid && group != getpgrp(), "strain leads a group of its own: \(group)")
        func counts() -> [String] { TestFiles.read(strain.stdoutPath).split(separator: "\n").filter { $0.hasPrefix("count ") }.map(String.init) }
        func settle() async { try? await Task.sleep(for: .milliseconds(1500)) }

        kill(-group, SIGUSR1)
        #expect(await strain.waitForOutput("count 1\n", seconds: 20))
        await settle()
        #expect(counts() == ["count 1"], "once from the group's signal: \(counts())")
        strain.signal(SIGUSR1)
        #expect(await strain.waitForOutput("count 2\n", seconds: 20), "a signal sent to strain alone is passed on: \(counts())")
        await settle()
        // As `timeout -s INT` sends it: to strain, then at once to its group.
        kill(strain.pid, SIGINT)
        kill(-group, SIGINT)
        #expect(await strain.waitForOutput("count 3\n", seconds: 20))
        await settle()
        #expect(counts() == ["count 1", "count 2", "count 3"], "\(counts())")
        // A witness not yet scheduled to run its handler when strain asks (a loaded machine:
        // a full local run passed the group's signal on twice) has the signal pending: here
        // it is stopped, so it cannot stamp it at all.
        let children = ThreadState.tids(pid: String(strain.pid)).flatMap { tid in
            TestFiles.read("/proc/\(strain.pid)/task/\(tid)/children").split(separator: " ").compactMap { Int32($0) }
        }
        let witness = try #require(children.first { TestFiles.read("/proc/\($0)/comm").contains("witness") }, "strain's children: \(children)")
        // No child of strain's answers to `pkill strain` (a name with `strain` in it): the witness
        // did, took the signal strain got, and strain passed nothing on (re-trial 33c).
        #expect(!children.contains { TestFiles.read("/proc/\($0)/comm").contains("strain") }, "\(children.map { TestFiles.read("/proc/\($0)/comm") })")
        kill(witness, SIGSTOP)
        // Stopped before the group's signal comes (had it come first, the witness would have
        // taken it and then stopped before its handler ran: a window of microseconds otherwise).
        for _ in 0..<200 where !TestFiles.read("/proc/\(witness)/status").contains("State:\tT") { try? await Task.sleep(for: .milliseconds(10)) }
        kill(-group, SIGUSR1)
        #expect(await strain.waitForOutput("count 4\n", seconds: 20))
        await settle()
        kill(witness, SIGCONT)
        await settle()
        #expect(counts() == ["count 1", "count 2", "count 3", "count 4"], "once, with the witness not run: \(counts())")

        strain.signal(SIGTERM)
        _ = await strain.finish(timeout: 30)
        // Nothing of the group is left: not the program, not strain's witness.
        let left = ((try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []).compactMap(Int32.init).filter { getpgid($0) == group }
        #expect(left.isEmpty, "processes left in strain's group: \(left)")
    }

    @Test func signalsSentToStrainExecReachTheProgramsOwnHandlers() async throws {
        let folder = try temporaryFolder()
        let out = folder + "/out"
        // Each handler says so; SIGTERM's exits 7, which strain exec passes on as its own status.
        let script = """
            for name in HUP INT USR1 USR2; do trap "echo got $name" $name; done
            trap 'echo got TERM; exit 7' TERM
            echo ready $$
            while :; do sleep 0.05; done
            """
        let strain = try BackgroundStrain(["exec", "--out", out, "--", "/bin/sh", "-c", script], in: folder)
        defer { if strain.process.isRunning { kill(strain.pid, SIGKILL) } }
        #expect(await strain.waitForOutput("ready "), "the program started")
        for (signal, name) in [(SIGHUP, "HUP"), (SIGINT, "INT"), (SIGUSR1, "USR1"), (SIGUSR2, "USR2")] {
            strain.signal(signal)
            #expect(await strain.waitForOutput("got \(name)\n", seconds: 20), "SIG\(name) reached the program: \(TestFiles.read(strain.stdoutPath))")
        }
        strain.signal(SIGTERM)
        let result = await strain.finish(timeout: 30)
        #expect(result.status == 7, "strain exec exits with the program's status: \(result.stdout)\(result.stderr)")
        let lines = result.stdout.split(separator: "\n").map(String.init)
        #expect(lines.dropFirst() == ["got HUP", "got INT", "got USR1", "got USR2", "got TERM"], "\(result.stdout)")
        let program = try #require(lines.first.flatMap { Int32($0.dropFirst("ready ".count)) })
        #expect(program != strain.pid, "the handlers ran in the program, not in strain")
        let trial = try #require(RunRecordFile.read(from: out + "/run.json").trials.first)
        #expect(trial.outcome.kind == .threw)
        #expect(trial.outcome.message == "the program exited with status 7")
    }

    /// A terminal's Ctrl-C (here a SIGINT to strain's whole process group) reaches the
    /// program and not strain's llvm-symbolizer: in strain's group, it died of it, and every
    /// later trace of the run lost its files and lines (re-trial 33e). The program handles
    /// SIGINT, waits until it comes (a dump under --stall starts the symbolizer), then faults.
    @Test func aCtrlCToStrainsGroupLeavesItsSymbolizerToNameTheLaterFaultsLines() async throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let source = folder + "/interrupted.c", program = folder + "/interrupted"
        try TestFiles.write("""
            #include <semaphore.h>
            #include <signal.h>
            #include <stdio.h>
            #include <string.h>
            static sem_t woken;
            static void interrupted(int number) { (void)number; sem_post(&woken); }
            static int read_through(volatile int *address) { return *address; }
            int main(void) {
                sem_init(&woken, 0, 0);
                struct sigaction action;
                memset(&action, 0, sizeof(action));
                action.sa_handler = interrupted;
                sigaction(SIGINT, &action, NULL);
                printf("ready\\n");
                fflush(stdout);
                while (sem_wait(&woken) != 0) {}
                return read_through(NULL);
            }
            """, to: source)
        try await TestPrograms.compile([TestPrograms.compiler, "-O0", "-g", "-o", program, source, "-lpthread"])
        let ownGroup = "exec python3 -c 'import os, sys; os.setpgid(0, 0); os.execv(sys.argv[1], sys.argv[1:])' \"$0\" \"$@\""
        let out = folder + "/out"
        let strain = try BackgroundStrain(["exec", "--out", out, "--stall", "500ms", "--", program], in: folder, shellPrefix: ownGroup)
        defer { if strain.process.isRunning { kill(strain.pid, SIGKILL) } }
        #expect(await strain.waitForOutput("ready"), "the program started: \(TestFiles.read(strain.stderrPath))")
        let group = getpgid(strain.pid)
        try #require(group == strain.pid && group != getpgrp(), "strain leads a group of its own: \(group)")
        let symbolizer = await eventually(within: 30) {
            TestFiles.read("/proc/\(strain.pid)/task/\(strain.pid)/children").split(separator: " ").compactMap { Int32($0) }.contains(where: Processes.isSymbolizer)
        }
        try #require(symbolizer, "the dump started strain's llvm-symbolizer: \(TestFiles.read(strain.stderrPath))")
        kill(-group, SIGINT)
        let result = await strain.finish(timeout: 60)
        #expect(result.status == 128 + SIGSEGV, "\(result.stderr)")
        #expect(result.stderr.contains("interrupted.c:"), "the fault's trace names the program's lines: \(result.stderr.suffix(2000))")
        let trial = try #require(RunRecordFile.read(from: out + "/run.json").trials.first)
        #expect(trial.outcome.kind == .crashed && trial.outcome.signal == SIGSEGV, "\(trial.outcome)")
    }

    /// A signal strain exec was started with ignored stays ignored for its program, as it
    /// would be without strain: `nohup`'s SIGHUP, `trap '' PIPE`. They came back at their
    /// default, and `nohup strain exec -- daemon` died of the SIGHUP nohup was there to ignore.
    @Test func signalsStrainWasStartedWithIgnoredStayIgnoredForTheProgram() async throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let quoted = { (text: String) in "'" + text.replacingOccurrences(of: "'", with: "'\\''") + "'" }
        let shown = "grep SigIgn /proc/self/status"
        let alone = try await BoundedProcess.run("/bin/bash", ["-c", "trap '' HUP PIPE; exec /bin/sh -c \(quoted(shown))"], timeout: 30)
        let under = try await BoundedProcess.run("/bin/bash", ["-c", "trap '' HUP PIPE; exec \(quoted(StrainBinary.path)) exec --out \(quoted(folder + "/out")) -- /bin/sh -c \(quoted(shown))"],
                                                 timeout: 60)
        #expect(alone.status == 0 && under.status == 0, "\(under.stderr)")
        let mask = { (text: String) in text.split(separator: "\n").first { $0.hasPrefix("SigIgn:") }.map { OutsideWake.signals(inMask: $0.dropFirst("SigIgn:".count).drop { $0 == "\t" || $0 == " " }) } }
        let ignored = try #require(mask(under.stdout), "\(under.stdout)")
        #expect(ignored.contains(SIGHUP) && ignored.contains(SIGPIPE), "\(under.stdout)")
        #expect(ignored == mask(alone.stdout), "alone: \(alone.stdout) under strain: \(under.stdout)")
    }

    /// glibc's own signals 32 and 33 reach the program as strain was started with them.
    /// glibc's posix_spawn ignores them in every child it starts unless told otherwise, and
    /// a program strain exec started from a shell had them ignored where it had not alone.
    @Test(arguments: ["default", "ignore"])
    func glibcsOwnSignalsReachTheProgramAsStrainWasStartedWithThem(_ disposition: String) async throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let launcher = folder + "/internal_signals"
        try await TestPrograms.compile([TestPrograms.compiler, "-O0", "-o", launcher, TestPrograms.sources + "/internal_signals.c"])
        let shown = ["/bin/grep", "SigIgn", "/proc/self/status"]
        let alone = try await BoundedProcess.run(launcher, [disposition] + shown, timeout: 30)
        let under = try await BoundedProcess.run(launcher, [disposition, StrainBinary.path, "exec", "--out", folder + "/out", "--"] + shown, timeout: 60)
        #expect(alone.status == 0 && under.status == 0, "\(under.stderr)")
        let mask = { (text: String) in text.split(separator: "\n").first { $0.hasPrefix("SigIgn:") }.map { OutsideWake.signals(inMask: $0.dropFirst("SigIgn:".count).drop { $0 == "\t" || $0 == " " }) } }
        let own = { (text: String) in mask(text)?.intersection([32, 33]) }
        #expect(own(alone.stdout) == (disposition == "ignore" ? [32, 33] : []), "the launcher set them: \(alone.stdout)")
        #expect(own(under.stdout) == own(alone.stdout), "alone: \(alone.stdout) under strain: \(under.stdout)")
    }
}
