import Foundation
@testable import StrainExec
import StrainWire
import Testing

/// `strain dump`'s exit 3 (no answer in time) and its `--timeout`, through the built binary.
@Suite(.serialized) struct DumpCommandTests {
    /// Waits up to `seconds` for `pid` to be in state `state` (`T`: stopped) in /proc.
    static func waitForState(_ pid: Int32, _ state: Character, seconds: Double = 10) async -> Bool {
        // Looked at from a thread of its own, with a last look at the deadline: a task
        // resumed late on a busy pool could pass the deadline having looked only once.
        await eventually(within: seconds, every: 10_000) {
            guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8), let close = stat.lastIndex(of: ")") else { return false }
            return stat[stat.index(close, offsetBy: 2)] == state
        }
    }

    @Test func aProgramThatCannotAnswerExits3NamingTheTimeoutGivenAndAnswersOnceItCan() async throws {
        let folder = try temporaryFolder()
        let strain = try BackgroundStrain(["exec", "--out", folder + "/out", "--", "/bin/sh", "-c", "echo ready $$; while :; do sleep 0.05; done"], in: folder)
        defer { if strain.process.isRunning { kill(strain.pid, SIGKILL) } }
        #expect(await strain.waitForOutput("ready "))
        let ready = TestFiles.read(strain.stdoutPath).split(separator: "\n").first ?? ""
        let program = try #require(Int32(ready.dropFirst("ready ".count)), "\(ready)")
        defer { kill(program, SIGKILL) }

        // Stopped, the program cannot run its probe's handler: the request stays pending.
        kill(program, SIGSTOP)
        #expect(await Self.waitForState(program, "T"), "the program stopped")
        let unanswered = try await StrainBinary.run(["dump", String(program), "--timeout", "300ms"], timeout: 30)
        #expect(unanswered.status == 3, "\(unanswered.stdout)\(unanswered.stderr)")
        #expect(unanswered.stderr == "error: process \(program) wrote no dump within 0.3s of SIGQUIT (every thread may block it, or a dump is already under way)\n",
                "\(unanswered.stderr)")
        #expect(unanswered.stdout.isEmpty)

        kill(program, SIGCONT)
        let answered = try await StrainBinary.run(["dump", String(program), "--timeout", "20s"], timeout: 40)
        #expect(answered.status == 0, "\(answered.stderr)")
        // The folder a reader opens, where strain exec writes the readable dump-N.txt; the probe's raw record after it.
        #expect(answered.stdout.hasPrefix("asked with SIGQUIT; strain exec writes it as a dump-N.txt in \(folder)/out (the probe's record: \(folder)/out/probe/"),
                "\(answered.stdout)")
        #expect(answered.stdout.contains("thread dump of process \(program)"), "\(answered.stdout)")
        // At 80 columns every line fits, but for one word longer than a line (a path), and no word is lost.
        let narrow = try await StrainBinary.run(["dump", String(program), "--timeout", "20s"], timeout: 40, environment: ["COLUMNS": "80"])
        #expect(narrow.status == 0, "\(narrow.stderr)")
        let wide = narrow.stdout.split(separator: "\n").filter { $0.count > 80 && $0.trimmingCharacters(in: .whitespaces).contains(" ") }
        #expect(wide.isEmpty, "every line fits 80 columns:\n\(wide.joined(separator: "\n"))")
        let heading = { (text: String) in text.components(separatedBy: "thread dump of process")[0].split(whereSeparator: \.isWhitespace).count }
        #expect(heading(narrow.stdout) == heading(answered.stdout) && narrow.stdout.contains("thread dump of process \(program)"),
                "the same first sentence, in words:\n\(answered.stdout)\n\(narrow.stdout)")

        kill(program, SIGKILL)
        let result = await strain.finish(timeout: 30)
        #expect(result.status == 128 + SIGKILL, "strain exec ends as its program did: \(result.status)")
    }

    /// A descendant of the program (here a `sleep` its shell started) has the probe's
    /// fault handlers, not its dump handler: `strain dump` sent it SIGQUIT, which ended it
    /// (it ended Strain's own test process, run under `strain exec`). It is refused with
    /// exit 2, naming the program to dump instead, and the descendant runs on.
    @Test func aDescendantOfTheProgramIsRefusedNamingTheProgramAndIsNotSignalled() async throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let strain = try BackgroundStrain(["exec", "--out", folder + "/out", "--", "/bin/sh", "-c", "sleep 600 & echo child $$ $!; wait"], in: folder)
        defer { if strain.process.isRunning { kill(strain.pid, SIGKILL) } }
        #expect(await strain.waitForOutput("child "))
        let line = TestFiles.read(strain.stdoutPath).split(separator: "\n").first ?? ""
        let pids = line.split(separator: " ").dropFirst().compactMap { Int32($0) }
        try #require(pids.count == 2, "\(line)")
        let (program, child) = (pids[0], pids[1])
        defer { kill(child, SIGKILL); kill(program, SIGKILL) }
        // The child has the probe (it follows the shell's children) before it is asked.
        #expect(await eventually(within: 10) { DumpRequest.hasProbe(child) }, "the probe is in the shell's child")
        let refused = try await StrainBinary.run(["dump", String(child), "--timeout", "2s"], timeout: 30)
        #expect(refused.status == 2, "\(refused.stdout)\(refused.stderr)")
        #expect(refused.stderr == "error: process \(child) runs under strain exec as a descendant of its program, process \(program); only the program answers a dump request (SIGQUIT would end process \(child)): dump process \(program)\n",
                "\(refused.stderr)")
        #expect(Processes.isAlive(child), "the descendant was not signalled")
        let answered = try await StrainBinary.run(["dump", String(program), "--timeout", "20s"], timeout: 40)
        #expect(answered.status == 0, "the program still answers: \(answered.stderr)")
    }

    /// Strain's own suite run under `strain exec --stall` (issue 36) runs `strain exec`
    /// inside it: that strain exec's pid is probed by the outer one, and was dumped itself
    /// (or refused as a descendant) instead of asking the program it runs.
    @Test func aStrainExecRunUnderAnotherStillHandsItsDumpRequestToItsProgram() async throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let strain = try BackgroundStrain(["exec", "--out", folder + "/outer", "--", StrainBinary.path, "exec", "--out", folder + "/inner", "--",
                                           "/bin/sh", "-c", "echo ready $$; sleep 60"], in: folder)
        defer { if strain.process.isRunning { kill(strain.pid, SIGKILL) } }
        #expect(await strain.waitForOutput("ready "))
        let line = TestFiles.read(strain.stdoutPath).split(separator: "\n").first ?? ""
        let program = try #require(line.split(separator: " ").last.flatMap { Int32($0) }, "\(line)")
        defer { kill(program, SIGKILL) }
        let inner = try #require(DumpRequest.parentPID(of: program), "the inner strain exec")
        let answered = try await StrainBinary.run(["dump", String(inner), "--timeout", "20s"], timeout: 40)
        #expect(answered.status == 0, "\(answered.stdout)\(answered.stderr)")
        #expect(answered.stdout.contains("(process \(inner) is strain exec; asked the program it runs, process \(program))"), "\(answered.stdout.prefix(600))")
    }

    /// `pgrep -P STRAIN` lists strain exec's witness beside its program, and a script that
    /// dumped the first child asked the witness, which has no probe (Strain's own fuzzer did,
    /// and got no dump): the witness is named, and a dump of it asks the program.
    @Test func aDumpOfStrainExecsWitnessAsksTheProgramItRuns() async throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let strain = try BackgroundStrain(["exec", "--out", folder + "/out", "--", "/bin/sh", "-c", "echo ready $$; sleep 60"], in: folder)
        defer { if strain.process.isRunning { kill(strain.pid, SIGKILL) } }
        #expect(await strain.waitForOutput("ready "))
        let line = TestFiles.read(strain.stdoutPath).split(separator: "\n").first ?? ""
        let program = try #require(line.split(separator: " ").last.flatMap { Int32($0) }, "\(line)")
        defer { kill(program, SIGKILL) }
        let children = ProcFile.contents(of: "/proc/\(strain.pid)/task/\(strain.pid)/children").split(separator: " ").compactMap { Int32($0) }
        let witness = try #require(children.first { ProcFile.contents(of: "/proc/\($0)/comm") == "exec-witness\n" }, "\(children)")
        #expect(children.contains(program) && children.count == 2, "\(children)")
        let answered = try await StrainBinary.run(["dump", String(witness), "--timeout", "20s"], timeout: 40)
        #expect(answered.status == 0, "\(answered.stdout)\(answered.stderr)")
        #expect(answered.stdout.contains("(process \(witness) is strain exec's witness; asked the program it runs, process \(program))"), "\(answered.stdout.prefix(600))")
    }

    @Test func aTimeoutOutsideItsRangeIsRefusedBeforeAnyProcessIsAsked() async throws {
        // Our own pid has no probe: a request that went ahead would say so instead.
        let cases = ["0s", "50ms", "11m", "soon", "-1s"]
        for timeout in cases {
            let result = try await StrainBinary.run(["dump", String(getpid()), "--timeout", timeout], timeout: 30)
            #expect(result.status == 2, "\(timeout): \(result.stderr)")
            #expect(result.stderr == "error: --timeout '\(timeout)' is not a duration from 100ms to 10m; write e.g. 500ms, 60s or 5m\n", "\(timeout): \(result.stderr)")
        }
        let valid = try await StrainBinary.run(["dump", String(getpid()), "--timeout", "100ms"], timeout: 30)
        #expect(valid.status == 2)
        #expect(valid.stderr.contains("was not started under strain exec"), "a valid timeout goes on to the request: \(valid.stderr)")
    }
}
