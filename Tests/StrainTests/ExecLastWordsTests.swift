import Foundation
import StrainKit
import StrainRunner
import StrainWire
import Testing

/// The words a program leaves when it dies (glibc's abort message) and the faults of
/// its forked children, in run.json and every report, through the built binary.
@Suite(.serialized, .timeLimit(.minutes(10))) struct ExecLastWordsTests {
    static let glibcReason = "free(): double free detected in tcache 2"

    @Test func aGlibcDoubleFreeCarriesGlibcsMessageInTheRecordAndEveryReportAndTheTerminalIsUnchanged() throws {
        let programs = try TestPrograms.c()
        let alone = try ProgramRun.run(programs.faults, ["double-free"])
        #expect(alone.termination == .signaled(SIGABRT), "\(alone.stderr)")
        try #require(alone.stderr.contains(Self.glibcReason), "this glibc says something else: \(alone.stderr)")

        let out = ExecTests.folder()
        let (under, run) = try ExecTests.exec(programs.faults, ["double-free"], out: out)
        #expect(under.termination == .signaled(SIGABRT))
        // The program's own output reaches the terminal as it does alone, before strain's lines.
        #expect(under.stdout == alone.stdout)
        #expect(under.stderr.hasPrefix(alone.stderr), "the program's standard error comes through unchanged: \(under.stderr.prefix(600))")
        #expect(under.stderr.contains("reason: \(Self.glibcReason)"), "strain says why on the terminal: \(under.stderr.prefix(800))")

        let trial = try #require(run?.trials.first)
        #expect(trial.outcome.kind == .crashed && trial.outcome.signal == SIGABRT, "\(trial.outcome)")
        #expect(trial.lastWords == Self.glibcReason, "\(String(describing: trial.lastWords))")
        let runJSON = (out as NSString).appendingPathComponent("run.json")
        let schema = try SchemaCheck.validate(runJSON)
        #expect(schema.valid, "\(schema.output)")
        for format in ["md", "html", "junit"] {
            let report = try ProgramRun.run(StrainBinary.path, ["report", runJSON, "--format", format, "--out", "-"])
            #expect(report.termination == .exited(0), "\(format): \(report.stderr)")
            #expect(report.stdout.contains(Self.glibcReason), "\(format) gives glibc's reason: \(report.stdout.prefix(1500))")
        }
    }

    @Test func aSwiftFatalErrorCarriesTheRuntimesMessageInTheRecord() throws {
        let program = try TestPrograms.swiftOverflow()
        let out = ExecTests.folder()
        let (under, run) = try ExecTests.exec(program, ["index-out-of-range"], out: out)
        #expect(under.termination == .signaled(SIGILL) || under.termination == .signaled(SIGTRAP), "\(under.stderr.prefix(400))")
        let trial = try #require(run?.trials.first)
        #expect(trial.outcome.kind == .crashed)
        #expect(trial.lastWords?.hasSuffix("Fatal error: Index out of range") == true, "\(String(describing: trial.lastWords))")
        let report = try ProgramRun.run(StrainBinary.path, ["report", (out as NSString).appendingPathComponent("run.json"), "--format", "md", "--out", "-"])
        #expect(report.stdout.contains("Fatal error: Index out of range"), "\(report.stdout.prefix(1500))")
    }

    @Test func aForkedChildsNullDereferenceIsSymbolizedUnderItsOwnProcessInTheRecordAndTheReports() throws {
        let programs = try TestPrograms.c()
        let out = ExecTests.folder()
        let (under, run) = try ExecTests.exec(programs.faults, ["fork-child-fault"], out: out)
        #expect(under.termination == .exited(0), "the program's own status: \(under.stderr)")
        let fields = under.stdout.split(separator: " ")
        let child = try #require(Int32(fields.count > 1 ? String(fields[1]) : ""), "\(under.stdout)")

        let trial = try #require(run?.trials.first)
        #expect(trial.outcome.kind == .completed, "the program itself completed: \(trial.outcome)")
        let faults = try #require(trial.processFaults, "the child's fault is in run.json")
        #expect(faults.count == 1)
        let fault = try #require(faults.first)
        #expect(fault.pid == child)
        #expect(fault.parentPid != nil && fault.parentPid != child && fault.parentPid != 1, "\(String(describing: fault.parentPid))")
        #expect(fault.commandLine == [programs.faults, "fork-child-fault"], "\(fault.commandLine)")
        #expect(fault.outcome.kind == .crashed && fault.outcome.signal == SIGSEGV)
        let top = try #require(fault.trace.firstFrames.first)
        #expect(top.symbol == "null_write", "\(fault.trace.firstFrames.prefix(4).map(\.displayName))")
        #expect(top.file?.hasSuffix("faults.c") == true && top.line == 42, "\(top.displayName)")
        #expect(fault.trace.firstFrames.contains { $0.symbol == "main" })
        #expect(under.stderr.contains("null_write"), "strain names the child's fault on the terminal: \(under.stderr.prefix(800))")

        let runJSON = (out as NSString).appendingPathComponent("run.json")
        let schema = try SchemaCheck.validate(runJSON)
        #expect(schema.valid, "\(schema.output)")
        for format in ["md", "html"] {
            let report = try ProgramRun.run(StrainBinary.path, ["report", runJSON, "--format", format, "--out", "-"])
            #expect(report.termination == .exited(0), "\(format): \(report.stderr)")
            #expect(report.stdout.contains("pid \(child)") && report.stdout.contains("null_write") && report.stdout.contains("faults.c:42"),
                    "\(format) shows the child's fault: \(report.stdout.prefix(2000))")
        }
    }

    @Test func theHandlersEscapedTextFieldsReadBackToTheirBytes() throws {
        let text = "STRAIN-FAULT 1\nsignal 6\npid 12\nppid 11\ncmdline ./a.out\\x00two words\\x00back\\\\slash\n"
            + "last_words first line\\nsecond line\nlast_words Fatal error: boom\nEND\n"
        let record = try #require(FaultRecord(parsing: text[...]))
        #expect(record.pid == 12 && record.parentPid == 11)
        #expect(record.commandLine == ["./a.out", "two words", "back\\slash"], "\(String(describing: record.commandLine))")
        #expect(record.lastWords == "first line\nsecond line\nFatal error: boom", "\(String(describing: record.lastWords))")
    }
}
