import Foundation
@testable import StrainRunner
import StrainSymbols
import StrainReports
import StrainKit
import StrainText
import Testing

/// `strain exec` on programs built with ThreadSanitizer and AddressSanitizer: the
/// sanitizer's reports, read from the file Strain told it to write, become the trial's
/// outcome and evidence, every frame named by Strain's own symbolizer, and the program's
/// exit status stays its own. The programs are C built with gcc (its libtsan and libasan,
/// which `.ci/setup` installs with gcc) and Swift built with swiftc -sanitize=thread.
@Suite(.serialized, .timeLimit(.minutes(10))) struct ExecSanitizerTests {
    struct Programs: Sendable {
        var races: String
        var memory: String
        var swiftRace: String
    }

    private static let built = AsyncOnce<Programs> {
        let folder = TestPrograms.folder
        let sources = TestPrograms.sources
        let programs = Programs(races: folder + "/races-tsan", memory: folder + "/memory-asan", swiftRace: folder + "/race-swift-tsan")
        try await TestPrograms.compile(["gcc", "-O0", "-g", "-fsanitize=thread", "-o", programs.races, sources + "/races.c", "-lpthread"])
        try await TestPrograms.compile(["gcc", "-O0", "-g", "-fsanitize=address", "-o", programs.memory, sources + "/memory.c"])
        try await TestPrograms.compile(["swiftc", "-Onone", "-g", "-sanitize=thread", "-o", programs.swiftRace, sources + "/race.swift"])
        return programs
    }

    static func programs() async throws -> Programs { try await built.value() }

    /// The frames of `stack`, as `symbol file:line` with the file's last component.
    static func places(_ stack: SanitizerReport.Stack) -> [String] {
        stack.frames.map { "\($0.symbol ?? "?") \(($0.file.map { ($0 as NSString).lastPathComponent }) ?? "?"):\($0.line ?? 0)" }
    }

    @Test func aCDataRaceIsRecordedWithBothAccessesTheAllocationAndTheThreadsNamedAndTheStatusKept() async throws {
        let programs = try await Self.programs()
        let alone = try await ProgramRun.run(programs.races, ["race"], timeout: 60)
        let out = ExecTests.folder()
        let (result, run) = try await ExecTests.exec(programs.races, ["race"], out: out)
        #expect(alone.termination == .exited(66), "ThreadSanitizer's own status for a program it reported on: \(alone.stderr)")
        #expect(result.termination == alone.termination, "strain ends as its program did: \(result.stderr)")
        #expect(result.stdout == alone.stdout)
        let trial = try #require(run?.trials.first)
        #expect(trial.outcome.kind == .dataRace, "\(trial.outcome)")
        #expect(trial.outcome.message?.contains("exited with status 66") == true, "\(trial.outcome)")
        let report = try #require(trial.sanitizerReports?.first)
        #expect(trial.sanitizerReports?.count == 1, "one distinct race: \(trial.sanitizerReports?.map(\.headline) ?? [])")
        #expect(report.tool == .threadSanitizer)
        #expect(report.kind == "data race")
        #expect(report.accesses.count == 2, "both sides of the race: \(report.accesses.map(\.title))")
        for access in report.accesses {
            #expect(Self.places(access).first == "unguarded races.c:13", "\(access.title): \(Self.places(access))")
        }
        #expect(report.accesses.map(\.title).contains { $0.hasPrefix("Previous write of size 4") }, "\(report.accesses.map(\.title))")
        let allocation = try #require(report.location.first)
        #expect(allocation.title.contains("heap block of size 4"), "\(allocation.title)")
        #expect(Self.places(allocation).contains("main races.c:28"), "\(Self.places(allocation))")
        #expect(report.threads.count == 2, "where each racing thread was created: \(report.threads.map(\.title))")
        #expect(report.threads.allSatisfy { Self.places($0).contains { $0.hasPrefix("main races.c:") } }, "\(report.threads.map(Self.places))")
        #expect(report.text.contains("WARNING: ThreadSanitizer: data race"), "the raw report is kept")
        // The sanitizer's text went to its file, not the terminal; the race's place is said there in one line.
        #expect(!result.stderr.contains("WARNING: ThreadSanitizer"), "\(result.stderr)")
        #expect(result.stderr.contains("  ThreadSanitizer: data race at unguarded (races.c:13) and unguarded (races.c:13)"), "\(result.stderr)")
        // libtsan's malloc comes before the probe's: the allocations were not counted, so none are recorded (not 0).
        #expect(trial.metrics.allocations == nil, "\(trial.metrics.allocations ?? -1) allocations recorded for a program whose mallocs the probe never saw")
        #expect(trial.metrics.allocatedBytes == nil)
        let schema = try await SchemaCheck.validate((out as NSString).appendingPathComponent("run.json"))
        #expect(schema.valid, "\(schema.output)")
    }

    @Test func theSameCounterUnderALockCompletesWithNoReport() async throws {
        let programs = try await Self.programs()
        let (result, run) = try await ExecTests.exec(programs.races, ["guarded"], out: ExecTests.folder())
        #expect(result.termination == .exited(3), "the program's own status: \(result.stderr)")
        #expect(result.stdout == "counter 2000\n")
        let trial = try #require(run?.trials.first)
        #expect(trial.outcome.kind == .threw, "it exited 3, as alone: \(trial.outcome)")
        #expect(trial.sanitizerReports == nil)
    }

    @Test func aSwiftRaceOnGCDIsNamedAtTheClosuresLineByStrainsSymbolizer() async throws {
        let programs = try await Self.programs()
        let (result, run) = try await ExecTests.exec(programs.swiftRace, [], out: ExecTests.folder())
        #expect(result.termination == .exited(66), "\(result.stderr)")
        let trial = try #require(run?.trials.first)
        #expect(trial.outcome.kind == .dataRace, "\(trial.outcome)")
        let reports = try #require(trial.sanitizerReports)
        let allRaces = reports.allSatisfy { $0.isRace }
        #expect(allRaces, "\(reports.map(\.headline))")
        let frames = reports.flatMap { $0.accesses.flatMap(\.frames) }
        let named = frames.contains { $0.symbol == "closure #1 in main" && $0.line == 19 && $0.file?.hasSuffix("race.swift") == true }
        let seen = reports.flatMap { $0.accesses.map(Self.places) }
        #expect(named, "demangled and located: \(seen)")
    }

    @Test(arguments: [("use-after-free", "heap-use-after-free", "main memory.c:18", "main memory.c:17"),
                      ("double-free", "attempting double-free", "main memory.c:21", "main memory.c:20")])
    func anAddressSanitizerErrorIsACrashWithTheUseTheFreeAndTheAllocationNamed(mode: String, kind: String, place: String, freed: String) async throws {
        let programs = try await Self.programs()
        let alone = try await ProgramRun.run(programs.memory, [mode], timeout: 60)
        let out = ExecTests.folder()
        let (result, run) = try await ExecTests.exec(programs.memory, [mode], out: out)
        #expect(result.termination == alone.termination, "strain ends as its program did: \(result.stderr)")
        let trial = try #require(run?.trials.first)
        #expect(trial.outcome.kind == .crashed, "\(trial.outcome)")
        #expect(trial.outcome.message?.hasPrefix("AddressSanitizer: \(kind)") == true, "\(trial.outcome)")
        let report = try #require(trial.sanitizerReports?.first)
        #expect(report.tool == .addressSanitizer)
        #expect(report.kind == kind)
        #expect(report.accesses.first.map(Self.places)?.contains(place) == true, "\(report.accesses.map(Self.places))")
        let history = report.location.map(Self.places)
        #expect(history.contains { $0.contains(freed) }, "who freed it: \(report.location.map(\.title)) \(history)")
        #expect(history.contains { $0.contains("make memory.c:8") }, "who allocated it: \(history)")
        // Said as the sanitizer's stop at the use, not as a signal sent from outside: it exits 1 (re-trial 33l, F2).
        let advice = OutcomeAdvice.text(for: trial)
        #expect(advice.hasPrefix("AddressSanitizer stopped it: \(kind) at ") && advice.contains("memory.c:") && !advice.contains("from outside"), "\(advice)")
        // Its allocator is the sanitizer's, not the glibc strain itself runs on (re-trial 33l, F3).
        #expect(run?.environment.allocator == "sanitizer", "\(run?.environment.allocator ?? "none")")
        let schema = try await SchemaCheck.validate((out as NSString).appendingPathComponent("run.json"))
        #expect(schema.valid, "\(schema.output)")
    }

    @Test func theGateFailsACandidateThatRemovedALockAsAnOutcomeThatGotWorse() async throws {
        _ = try await Self.programs()
        let folder = ExecTests.folder()
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        // One path for both builds, as a pull request's base and head: the trial key is the same.
        let program = folder + "/counter"
        try await TestPrograms.compile(["gcc", "-O0", "-g", "-fsanitize=thread", "-DLOCKED", "-o", program, TestPrograms.sources + "/counter.c", "-lpthread"])
        let (base, baseRun) = try await ExecTests.exec(program, [], out: folder + "/base")
        #expect(base.termination == .exited(0), "\(base.stderr)")
        #expect(baseRun?.trials.first?.outcome.kind == .completed)
        try await TestPrograms.compile(["gcc", "-O0", "-g", "-fsanitize=thread", "-o", program, TestPrograms.sources + "/counter.c", "-lpthread"])
        let (head, headRun) = try await ExecTests.exec(program, [], out: folder + "/head")
        #expect(head.termination == .exited(66), "\(head.stderr)")
        #expect(headRun?.trials.first?.outcome.kind == .dataRace)
        let gate = try await StrainBinary.run(["gate", folder + "/head/run.json", "--baseline", folder + "/base/run.json", "--out", folder + "/gate"])
        #expect(gate.status == 1, "a race that appeared fails the gate: \(gate.stdout)\n\(gate.stderr)")
        let verdicts = try String(contentsOfFile: folder + "/gate/gate.md", encoding: .utf8)
        #expect(verdicts.contains("dataRace"), "\(verdicts)")
        // And back: the lock restored, the race is gone and the gate passes.
        let back = try await StrainBinary.run(["gate", folder + "/base/run.json", "--baseline", folder + "/head/run.json", "--out", folder + "/gate-back"])
        #expect(back.status == 0, "a race that is gone passes: \(back.stdout)\n\(back.stderr)")
    }

    @Test func sanitizerTextAProgramPrintsItselfIsNotReadAsAReport() async throws {
        // Reports come from the file the sanitizer was told to write, never from output.
        let (result, run) = try await ExecTests.exec("/bin/sh", ["-c", "echo 'WARNING: ThreadSanitizer: data race (pid=1)' >&2; exit 0"], out: ExecTests.folder())
        #expect(result.termination == .exited(0))
        let trial = try #require(run?.trials.first)
        #expect(trial.outcome.kind == .completed, "\(trial.outcome)")
        #expect(trial.sanitizerReports == nil)
    }

    @Test func theParserReadsBothSanitizersFormatsAndTheModuleMap() {
        let text = """
        ==================
        WARNING: ThreadSanitizer: data race (pid=42)
          Write of size 8 at 0x7208 by thread T3:
            #0 <null> <null> (prog+0x10ab) (BuildId: 05)
            #1 <null> <null> (<unknown module>)

          Previous read of size 8 at 0x7208 by main thread:
            #0 <null> <null> (libdispatch.so+0x22820) (BuildId: cb)

          Thread T3 'oot.default-qos' (tid=7, running) created by main thread at:
            #0 <null> <null> (libtsan.so.2+0x5e686)

        SUMMARY: ThreadSanitizer: data race (/bin/prog+0x10ab) (BuildId: 05)
        ==================
        ==42==Process memory map follows:
        \t0x5555-0x6666\t/bin/prog
        \t0x7777-0x8888\t/usr/lib/libtsan.so.2.0.0
        =================================================================
        ==43==ERROR: AddressSanitizer: attempting double-free on 0x6020 in thread T0:
            #0 0x7f3c  (/usr/lib/libasan.so.8+0xd7f28) (BuildId: aa)
            #1 0x5555  (/bin/prog+0x1234) (BuildId: 05)

        0x6020 is located 0 bytes inside of 16-byte region [0x6020,0x6030)
        freed by thread T0 here:
            #0 0x7f3c  (/usr/lib/libasan.so.8+0xd7f28)

        SUMMARY: AddressSanitizer: attempting double-free (/usr/lib/libasan.so.8+0xd7f28) in free
        """
        let (reports, modules) = SanitizerLog.parse(text)
        #expect(reports.count == 2)
        #expect(modules["prog"] == "/bin/prog")
        #expect(SanitizerLog.path(of: "libtsan.so.2", modules: modules) == "/usr/lib/libtsan.so.2.0.0")
        let race = reports[0]
        #expect(race.tool == .threadSanitizer && race.kind == "data race" && race.pid == 42)
        #expect(race.stacks.map(\.title) == ["Write of size 8 at 0x7208 by thread T3", "Previous read of size 8 at 0x7208 by main thread",
                                             "Thread T3 'oot.default-qos' (tid=7, running) created by main thread at"])
        #expect(race.stacks[0].frames.map(\.module) == ["prog"], "a frame with no module is left out")
        #expect(race.stacks[0].frames.first?.address == 0x10ab)
        #expect(race.summary == "data race (/bin/prog+0x10ab) (BuildId: 05)")
        let free = reports[1]
        #expect(free.tool == .addressSanitizer && free.kind == "attempting double-free" && free.pid == 43)
        #expect(free.stacks.map(\.title) == ["attempting double-free on 0x6020 in thread T0", "freed by thread T0 here"])
        #expect(free.stacks[0].frames.map(\.module) == ["/usr/lib/libasan.so.8", "/bin/prog"])
    }

    @Test func theSanitizersOptionsKeepTheProgramsOwnAndPutStrainsLast() {
        let environment = SanitizerLog.environment(["TSAN_OPTIONS": "halt_on_error=1", "PATH": "/bin"], folder: "/tmp/x")
        #expect(environment["TSAN_OPTIONS"] == "halt_on_error=1 log_path=/tmp/x/sanitizer symbolize=0 print_module_map=2")
        #expect(environment["ASAN_OPTIONS"] == "log_path=/tmp/x/sanitizer symbolize=0 print_module_map=2 verify_asan_link_order=0")
        #expect(environment["PATH"] == "/bin")
    }
}
