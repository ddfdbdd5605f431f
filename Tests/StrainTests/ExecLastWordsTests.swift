import Foundation
import StrainKit
import StrainRecords
import StrainText
import StrainExec
import StrainReports
import StrainRunner
import StrainWire
import Testing

/// The words a program leaves when it dies (glibc's abort message) and the faults of
/// its forked children, in run.json and every report, through the built binary.
@Suite(.serialized, .timeLimit(.minutes(10))) struct ExecLastWordsTests {
    static let glibcReason = "free(): double free detected in tcache 2"

    @Test func aGlibcDoubleFreeCarriesGlibcsMessageInTheRecordAndEveryReportAndTheTerminalIsUnchanged() async throws {
        let programs = try await TestPrograms.c()
        let alone = try await ProgramRun.run(programs.faults, ["double-free"])
        #expect(alone.termination == .signaled(SIGABRT), "\(alone.stderr)")
        try #require(alone.stderr.contains(Self.glibcReason), "this glibc says something else: \(alone.stderr)")

        let out = ExecTests.folder()
        defer { try? FileManager.default.removeItem(atPath: out) }
        let (under, run) = try await ExecTests.exec(programs.faults, ["double-free"], out: out)
        #expect(under.termination == .signaled(SIGABRT))
        // The program's own output reaches the terminal as it does alone, before strain's lines.
        #expect(under.stdout == alone.stdout)
        #expect(under.stderr.hasPrefix(alone.stderr), "the program's standard error comes through unchanged: \(under.stderr.prefix(600))")
        #expect(under.stderr.contains("reason: \(Self.glibcReason)"), "strain says why on the terminal: \(under.stderr.prefix(800))")

        let trial = try #require(run?.trials.first)
        #expect(trial.outcome.kind == .crashed && trial.outcome.signal == SIGABRT, "\(trial.outcome)")
        #expect(trial.lastWords == Self.glibcReason, "\(String(describing: trial.lastWords))")
        // The main thread died: its name is the program's, and the message does not point at another thread.
        #expect(trial.trace?.threadName == "faults" && trial.outcome.message?.contains("the fault was in thread") != true, "\(trial.outcome)")
        let runJSON = (out as NSString).appendingPathComponent("run.json")
        let schema = try await SchemaCheck.validate(runJSON)
        #expect(schema.valid, "\(schema.output)")
        for format in ["md", "html", "junit"] {
            let report = try await ProgramRun.run(StrainBinary.path, ["report", runJSON, "--format", format, "--out", "-"])
            #expect(report.termination == .exited(0), "\(format): \(report.stderr)")
            #expect(report.stdout.contains(Self.glibcReason), "\(format) gives glibc's reason: \(report.stdout.prefix(1500))")
        }
    }

    /// A crash inside a stdio call the probe passes on to libc (`fputs(NULL, stderr)`) is
    /// the program's call, not the probe's source: the advice blamed `fputs at
    /// strain_preload.c:675:18 (libStrainProbe.so)` (re-trial 33n, F8).
    @Test func aCrashInAStdioCallThroughTheProbeIsPlacedInTheProgramsCaller() async throws {
        let folder = ExecTests.folder()
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let source = folder + "/fputs_null.c", program = folder + "/fputs_null"
        try TestFiles.write("""
            #include <stdio.h>
            __attribute__((noinline)) static void log_error(const char *text) { fputs(text, stderr); }
            int main(void) { log_error(NULL); return 0; }
            """, to: source)
        try await TestPrograms.compile([TestPrograms.compiler, "-O0", "-g", "-o", program, source])
        let (under, run) = try await ExecTests.exec(program, [], out: folder + "/out")
        #expect(under.termination == .signaled(SIGSEGV), "\(under.stderr.prefix(400))")
        let trial = try #require(run?.trials.first)
        let point = try #require(trial.trace.flatMap(TraceText.pointOfFailure), "\(trial.outcome)")
        #expect(point.symbol == "log_error" && point.file?.hasSuffix("fputs_null.c") == true, "\(point.displayName)")
        let advice = OutcomeAdvice.text(for: trial)
        #expect(advice.contains("in log_error at fputs_null.c:2:") && !advice.contains("strain_preload.c"), "\(advice)")
    }

    /// A closing line that states no error after one that does is not the reason: a
    /// script's hint after its error, a logger's error before its cleanup line, an atexit
    /// line after a traceback (re-trial 33n, F9). A closing line that does state one stays.
    @Test func aClosingLineAfterTheErrorIsNotTheReason() {
        #expect(StandardErrorWords.lastWords(in: "error: disk quota exceeded on /var/data\nhint: run cleanup.sh first\n") == "error: disk quota exceeded on /var/data")
        #expect(StandardErrorWords.lastWords(in: "ERROR:root:replica lag 93s exceeds limit 30s\ncleanup done\n") == "ERROR:root:replica lag 93s exceeds limit 30s")
        let traceback = "Traceback (most recent call last):\n  File \"a.py\", line 3, in <module>\n    users[\"user_id\"]\nKeyError: 'user_id'\ncleanup: removed 3 temporary files\n"
        #expect(StandardErrorWords.lastWords(in: traceback) == "KeyError: 'user_id'")
        #expect(StandardErrorWords.lastWords(in: "error: retrying\nthe queue is empty\nerror: gave up on the queue\n") == "error: gave up on the queue")
        #expect(StandardErrorWords.lastWords(in: "starting\nthe queue is empty\n") == "the queue is empty", "no error anywhere: the last line")
    }

    @Test func aSwiftFatalErrorCarriesTheRuntimesMessageInTheRecord() async throws {
        let program = try await TestPrograms.swiftOverflow()
        let out = ExecTests.folder()
        defer { try? FileManager.default.removeItem(atPath: out) }
        let (under, run) = try await ExecTests.exec(program, ["index-out-of-range"], out: out)
        #expect(under.termination == .signaled(SIGILL) || under.termination == .signaled(SIGTRAP), "\(under.stderr.prefix(400))")
        let trial = try #require(run?.trials.first)
        #expect(trial.outcome.kind == .crashed)
        #expect(trial.lastWords?.hasSuffix("Fatal error: Index out of range") == true, "\(String(describing: trial.lastWords))")
        let report = try await ProgramRun.run(StrainBinary.path, ["report", (out as NSString).appendingPathComponent("run.json"), "--format", "md", "--out", "-"])
        #expect(report.stdout.contains("Fatal error: Index out of range"), "\(report.stdout.prefix(1500))")
    }

    /// An optimised build's failed precondition prints nothing: the trap's place, through
    /// the inlined frame the compiler's debug information gives it, says which check it was.
    @Test func anOptimizedSwiftPreconditionIsNamedByTheTrapsInlinedFrame() async throws {
        let program = try await TestPrograms.swiftOptimized()
        let out = ExecTests.folder()
        defer { try? FileManager.default.removeItem(atPath: out) }
        let (under, run) = try await ExecTests.exec(program, ["precondition"], out: out)
        #expect(under.termination == .signaled(SIGILL) || under.termination == .signaled(SIGTRAP), "\(under.stderr.prefix(400))")
        #expect(!under.stderr.contains("the message an -O build drops"), "the build dropped the message: \(under.stderr.prefix(400))")
        let trial = try #require(run?.trials.first)
        #expect(trial.outcome.kind == .crashed)
        #expect(CrashReason.message(for: trial) == "Swift runtime failure: precondition failure", "\(String(describing: trial.trace?.firstFrames.first))")
        #expect(under.stderr.contains("overflow.swift:") && under.stderr.contains(": Swift runtime failure: precondition failure. That is a trap"),
                "what to do names the check and its line: \(under.stderr.suffix(1200))")
        let report = try await ProgramRun.run(StrainBinary.path, ["report", (out as NSString).appendingPathComponent("run.json"), "--format", "md", "--out", "-"])
        #expect(report.stdout.contains("— `Swift runtime failure: precondition failure`"), "\(report.stdout.prefix(1500))")
    }

    @Test func aMultiLineSwiftPreconditionsReasonIsItsFatalErrorLineNotItsClosingLine() async throws {
        let program = try await TestPrograms.swiftOverflow()
        let out = ExecTests.folder()
        defer { try? FileManager.default.removeItem(atPath: out) }
        let (under, run) = try await ExecTests.exec(program, ["multi-line-fatal"], out: out)
        #expect(under.termination == .signaled(SIGILL) || under.termination == .signaled(SIGTRAP), "\(under.stderr.prefix(400))")
        let trial = try #require(run?.trials.first)
        let words = try #require(trial.lastWords, "the runtime's message is in run.json")
        let fatal = try #require(words.split(separator: "\n").first.map(String.init))
        #expect(fatal.hasSuffix(": Fatal error: BUG DETECTED: wait() must not be called when on an EventLoop."), "\(words)")
        #expect(words.hasSuffix("- event loop associated to future: SelectableEventLoop { descriptor = 3 }"), "the whole message is kept: \(words)")
        let report = try await ProgramRun.run(StrainBinary.path, ["report", (out as NSString).appendingPathComponent("run.json"), "--format", "md", "--out", "-"])
        // summary.md's trace line: `KEY: HEADLINE — `REASON``.
        #expect(report.stdout.contains(" — `\(fatal)`"), "\(report.stdout.prefix(1500))")
        #expect(!report.stdout.contains(" — `- event loop"), "not the message's closing line: \(report.stdout.prefix(1500))")
    }

    @Test func aForkedChildsNullDereferenceIsSymbolizedUnderItsOwnProcessInTheRecordAndTheReports() async throws {
        let programs = try await TestPrograms.c()
        let out = ExecTests.folder()
        defer { try? FileManager.default.removeItem(atPath: out) }
        let (under, run) = try await ExecTests.exec(programs.faults, ["fork-child-fault"], out: out)
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
        #expect(top.file?.hasSuffix("faults.c") == true && top.line == 43, "\(top.displayName)")
        #expect(fault.trace.firstFrames.contains { $0.symbol == "main" })
        #expect(under.stderr.contains("null_write"), "strain names the child's fault on the terminal: \(under.stderr.prefix(800))")

        let runJSON = (out as NSString).appendingPathComponent("run.json")
        let schema = try await SchemaCheck.validate(runJSON)
        #expect(schema.valid, "\(schema.output)")
        for format in ["md", "html"] {
            let report = try await ProgramRun.run(StrainBinary.path, ["report", runJSON, "--format", format, "--out", "-"])
            #expect(report.termination == .exited(0), "\(format): \(report.stderr)")
            #expect(report.stdout.contains("pid \(child)") && report.stdout.contains("null_write") && report.stdout.contains("faults.c:43"),
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

/// Programs that say why they die on their own standard error (Rust, a JVM): the probe
/// keeps its tail (fd 2 only, the terminal unchanged) and the record gives the line
/// that says why, through the built binary.
@Suite(.serialized, .timeLimit(.minutes(10))) struct ExecStandardErrorWordsTests {
    /// rustc on PATH or in ~/.cargo/bin (rustup's), or nil.
    static let rustc: String? = {
        let environment = ProcessInfo.processInfo.environment
        let folders = (environment["PATH"] ?? "").split(separator: ":").map(String.init) + [(environment["HOME"] ?? "/root") + "/.cargo/bin"]
        return folders.map { ($0 as NSString).appendingPathComponent("rustc") }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }()

    /// A Rust program that overflows its main thread's stack (`overflow`) or panics with `panic = "abort"` (`panic`).
    static func rustProgram() async throws -> String {
        let folder = ExecTests.folder()
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let source = (folder as NSString).appendingPathComponent("words.rs")
        try """
            fn deeper(n: u64) -> u64 { let kept = [n; 64]; if n == u64::MAX { 0 } else { deeper(n + 1) + kept[(n % 64) as usize] } }
            fn main() {
                let mode = std::env::args().nth(1).unwrap_or_default();
                if mode == "panic" { panic!("the answer was {}", 42); }
                println!("{}", deeper(0));
            }
            """.write(toFile: source, atomically: true, encoding: .utf8)
        let program = (folder as NSString).appendingPathComponent("words")
        let built = try await ProgramRun.run(rustc!, ["-C", "panic=abort", "-C", "opt-level=0", "-o", program, source], timeout: 180)
        try #require(built.termination == .exited(0), "\(built.stderr)")
        return program
    }

    @Test(.enabled(if: rustc != nil, "no rustc on PATH or in ~/.cargo/bin: install Debian's rustc (apt-get install rustc; about 270 MB, so not in .ci/setup) to check Rust's last words"))
    func aRustOverflowAndAnAbortingPanicAreRecordedWithRustsOwnWords() async throws {
        let program = try await Self.rustProgram()
        let alone = try await ProgramRun.run(program, [])
        #expect(alone.termination == .signaled(SIGABRT), "\(alone.stderr)")
        let (overflowed, overflowRun) = try await ExecTests.exec(program, [], out: ExecTests.folder())
        #expect(overflowed.termination == .signaled(SIGABRT))
        // The same bytes but the thread's id (`thread 'main' (1234) has overflowed its stack`, Rust 1.87 and later).
        let withoutIDs = { (text: String) in text.replacingOccurrences(of: #" \(\d+\)"#, with: "", options: .regularExpression) }
        #expect(withoutIDs(overflowed.stderr).hasPrefix(withoutIDs(alone.stderr)), "Rust's own words reach the terminal unchanged: \(overflowed.stderr.prefix(400))")
        let overflow = try #require(overflowRun?.trials.first)
        #expect(overflow.outcome.kind == .stackOverflow, "\(overflow.outcome.description)")
        // `thread 'main' has overflowed its stack`; Rust 1.87 and later add the thread's id: `thread 'main' (1234) has …`.
        let overflowWords = try #require(overflow.lastWords, "Rust's words are in run.json")
        #expect(overflowWords.hasPrefix("thread 'main'") && overflowWords.hasSuffix(" has overflowed its stack") && !overflowWords.contains("\n"), "\(overflowWords)")
        #expect(overflowed.stderr.contains("reason: \(overflowWords)"), "\(overflowed.stderr.suffix(1500))")

        let (panicked, panicRun) = try await ExecTests.exec(program, ["panic"], out: ExecTests.folder())
        #expect(panicked.termination == .signaled(SIGABRT))
        let panic = try #require(panicRun?.trials.first)
        #expect(panic.outcome.kind == .crashed && panic.outcome.signal == SIGABRT, "\(panic.outcome.description)")
        // `thread 'main' panicked at words.rs:4:26:` and the message on the next line (Rust 1.73 and later), or one line before.
        let panicWords = try #require(panic.lastWords, "Rust's words are in run.json")
        #expect(panicWords.hasPrefix("thread 'main'") && panicWords.contains(" panicked at ") && panicWords.contains("words.rs:4:"), "\(panicWords)")
        #expect(panicWords.contains("the answer was 42") && !panicWords.contains("stack backtrace") && !panicWords.contains("note:"), "\(panicWords)")
    }

    @Test func aJVMsUncaughtStackOverflowErrorIsRecordedWithItsExceptionLineNotItsLastStackLine() async throws {
        guard let tools = ExecJVMTests.javaTools() else {
            Issue.record("no javac and java on PATH: install a JDK (Debian: default-jdk-headless) to check a JVM's last words")
            return
        }
        let deep = try await ExecJVMTests.compile("Deep", "public class Deep { static int f(int n) { return f(n + 1) + 1; } public static void main(String[] a) { f(0); } }")
        let out = ExecTests.folder()
        defer { try? FileManager.default.removeItem(atPath: out) }
        let (overflowed, run) = try await ExecTests.exec(tools.java, ["-Xss512k", "-cp", deep, "Deep"], out: out, timeout: 120)
        #expect(overflowed.termination == .exited(1), "\(overflowed.stderr.suffix(500))")
        #expect(overflowed.stderr.hasPrefix("Exception in thread \"main\" java.lang.StackOverflowError\n\tat Deep.f"), "\(overflowed.stderr.prefix(300))")
        let trial = try #require(run?.trials.first)
        #expect(trial.outcome.kind == .threw, "\(trial.outcome.description): \(trial.outcome.message ?? "")")
        #expect(trial.lastWords == "Exception in thread \"main\" java.lang.StackOverflowError", "\(String(describing: trial.lastWords))")
        let runJSON = (out as NSString).appendingPathComponent("run.json")
        for format in ["md", "html", "junit"] {
            let report = try await ProgramRun.run(StrainBinary.path, ["report", runJSON, "--format", format, "--out", "-"])
            #expect(report.stdout.contains("java.lang.StackOverflowError"), "\(format) gives the JVM's reason: \(report.stdout.prefix(1500))")
        }
    }

    @Test func aProgramThatWritesMuchToStandardErrorPrintsExactlyWhatItPrintsAloneAndItsLastLineIsKept() async throws {
        let programs = try await TestPrograms.c()
        let alone = try await ProgramRun.run(programs.faults, ["chatter"])
        #expect(alone.termination == .exited(2))
        #expect(alone.stderr.utf8.count > 300_000, "more than the probe keeps: \(alone.stderr.utf8.count) bytes")
        let (under, run) = try await ExecTests.exec(programs.faults, ["chatter"], out: ExecTests.folder())
        #expect(under.termination == alone.termination)
        #expect(under.stdout == alone.stdout)
        #expect(under.stderr == alone.stderr, "byte for byte: \(under.stderr.utf8.count) against \(alone.stderr.utf8.count) bytes")
        let trial = try #require(run?.trials.first)
        #expect(trial.outcome.kind == .threw)
        // The last line that is not indented; the indented chatter before it is not the reason.
        #expect(trial.lastWords == "chatter: gave up after 6000 lines", "\(String(describing: trial.lastWords))")
    }

    @Test func aCProgramThatSaysNothingOnStandardErrorBeforeItsFaultGetsNoLastWords() async throws {
        let programs = try await TestPrograms.c()
        let (under, run) = try await ExecTests.exec(programs.faults, ["silent-segv"], out: ExecTests.folder())
        #expect(under.termination == .signaled(SIGSEGV))
        #expect(under.stdout == "about to write through NULL\n")
        let trial = try #require(run?.trials.first)
        #expect(trial.outcome.kind == .crashed && trial.outcome.signal == SIGSEGV, "\(trial.outcome.description)")
        #expect(trial.lastWords == nil, "standard output is not standard error: \(String(describing: trial.lastWords))")
        #expect(!under.stderr.contains("reason:"), "\(under.stderr.prefix(400))")
    }

    @Test func aForkedChildsAbortCarriesItsOwnWordsNotItsParents() async throws {
        let programs = try await TestPrograms.c()
        let (under, run) = try await ExecTests.exec(programs.faults, ["fork-child-says"], out: ExecTests.folder())
        #expect(under.termination == .exited(0), "\(under.stderr)")
        #expect(under.stderr.hasPrefix("parent: about to fork\nchild: giving up\n"), "\(under.stderr.prefix(400))")
        let trial = try #require(run?.trials.first)
        #expect(trial.outcome.kind == .completed && trial.lastWords == nil, "the parent completed: \(trial.outcome.description)")
        let fault = try #require(trial.processFaults?.first, "the child's abort is in run.json")
        #expect(fault.outcome.signal == SIGABRT)
        #expect(fault.lastWords == "child: giving up", "the child's own tail, begun at the fork: \(String(describing: fault.lastWords))")
    }

    /// `c++` on PATH (Debian's g++), or nil.
    static let cxx: String? = {
        let folders = (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":").map(String.init)
        return folders.map { ($0 as NSString).appendingPathComponent("c++") }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }()

    /// Runs `program` alone and under `strain exec`: the program's stdout and stderr come
    /// through byte for byte (strain's own lines follow the program's), and it aborts both times.
    static func abortsAloneAndUnderExec(_ program: String, _ arguments: [String], out: String) async throws -> (ProgramRun.Result, RunRecord?) {
        let alone = try await ProgramRun.run(program, arguments)
        #expect(alone.termination == .signaled(SIGABRT), "\(alone.stderr)")
        let (under, run) = try await ExecTests.exec(program, arguments, out: out)
        #expect(under.termination == .signaled(SIGABRT), "\(under.stderr.prefix(600))")
        #expect(under.stdout == alone.stdout)
        // The program's standard error, byte for byte and once, then strain's own lines.
        #expect(under.stderr.hasPrefix(alone.stderr + "strain: the program's outcome is "), "\(under.stderr.prefix(900))")
        return (under, run)
    }

    @Test func aCProgramsWordsPrintedByStdioBeforeItAbortsAreItsReason() async throws {
        let programs = try await TestPrograms.c()
        let out = ExecTests.folder()
        defer { try? FileManager.default.removeItem(atPath: out) }
        let (under, run) = try await Self.abortsAloneAndUnderExec(programs.faults, ["stdio-abort"], out: out)
        let trial = try #require(run?.trials.first)
        #expect(trial.outcome.kind == .crashed && trial.outcome.signal == SIGABRT, "\(trial.outcome.description)")
        // fprintf, fputs and fprintf again: the final message, not the line before it.
        let reason = "widgets.conf: line 12: expected a count, found 'many'"
        #expect(trial.lastWords == reason, "\(String(describing: trial.lastWords))")
        #expect(under.stderr.contains("\nreason: \(reason)\n"), "\(under.stderr.suffix(900))")
        let report = try await ProgramRun.run(StrainBinary.path, ["report", (out as NSString).appendingPathComponent("run.json"), "--format", "md", "--out", "-"])
        #expect(report.stdout.contains(" — `\(reason)`"), "summary.md's trace line: \(report.stdout.prefix(1500))")
    }

    @Test func aToolsErrorBeforeItsUsageLineIsItsReasonNotTheUsage() async throws {
        let programs = try await TestPrograms.c()
        let out = ExecTests.folder()
        defer { try? FileManager.default.removeItem(atPath: out) }
        let alone = try await ProgramRun.run(programs.faults, ["usage-exit"])
        #expect(alone.termination == .exited(3), "\(alone.stderr)")
        let (under, run) = try await ExecTests.exec(programs.faults, ["usage-exit"], out: out)
        #expect(under.termination == .exited(3))
        #expect(under.stderr.hasPrefix(alone.stderr), "\(under.stderr.prefix(600))")
        let trial = try #require(run?.trials.first)
        #expect(trial.outcome.kind == .threw, "\(trial.outcome.description)")
        // perror's line says what went wrong; the usage line after it does not (it was the reason).
        #expect(trial.lastWords == "error: cannot open /nonexistent/input.csv: No such file or directory", "\(String(describing: trial.lastWords))")
    }

    /// A shell's `echo … >&2` makes fd 1 a copy of fd 2 and writes there (dash by write,
    /// bash by stdio's printf and putchar on stdout): its words were never kept.
    @Test(arguments: ["/bin/bash", "/bin/sh"])
    func aShellScriptsErrorEchoedToStandardErrorIsItsLastWords(shell: String) async throws {
        let folder = ExecTests.folder()
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let script = (folder as NSString).appendingPathComponent("deploy.sh")
        try """
            die() { echo "error: missing $1" >&2; exit 2; }
            echo "deploying"
            printf 'checking %s\\n' "$0" >&2
            [ -f /nonexistent/deploy.conf ] || die /nonexistent/deploy.conf
            """.write(toFile: script, atomically: true, encoding: .utf8)
        let alone = try await ProgramRun.run(shell, [script])
        #expect(alone.termination == .exited(2), "\(alone.stderr)")
        let (under, run) = try await ExecTests.exec(shell, [script], out: (folder as NSString).appendingPathComponent("out"))
        #expect(under.termination == .exited(2))
        #expect(under.stdout == alone.stdout)
        #expect(under.stderr.hasPrefix(alone.stderr), "\(under.stderr.prefix(600))")
        let trial = try #require(run?.trials.first)
        #expect(trial.outcome.kind == .threw, "\(trial.outcome.description)")
        #expect(trial.lastWords == "error: missing /nonexistent/deploy.conf", "\(shell): \(String(describing: trial.lastWords))")
    }

    @Test(.enabled(if: cxx != nil, "no c++ on PATH: install g++ (.ci/setup does) to check libstdc++'s terminate message"))
    func anUncaughtCxxExceptionIsRecordedWithLibstdcxxsTerminateAndWhatLines() async throws {
        let folder = ExecTests.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let program = (folder as NSString).appendingPathComponent("terminate")
        try await TestPrograms.compile([Self.cxx!, "-O0", "-g", "-o", program, TestPrograms.sources + "/terminate.cpp"])
        let out = ExecTests.folder()
        defer { try? FileManager.default.removeItem(atPath: out) }
        let (under, run) = try await Self.abortsAloneAndUnderExec(program, [], out: out)
        let trial = try #require(run?.trials.first)
        #expect(trial.outcome.kind == .crashed && trial.outcome.signal == SIGABRT, "\(trial.outcome.description)")
        let words = "terminate called after throwing an instance of 'std::runtime_error'\n  what():  the widget count went negative"
        #expect(trial.lastWords == words, "\(String(describing: trial.lastWords))")
        #expect(under.stderr.contains("reason: \(words)"), "\(under.stderr.suffix(900))")
        let report = try await ProgramRun.run(StrainBinary.path, ["report", (out as NSString).appendingPathComponent("run.json"), "--format", "md", "--out", "-"])
        #expect(report.stdout.contains(" — `terminate called after throwing an instance of 'std::runtime_error' what():  the widget count went negative`"),
                "the report's one-line reason has both: \(report.stdout.prefix(1500))")
    }

    @Test func aMultiLineSwiftStyleMessageOnStandardErrorIsRecordedFromItsFatalErrorLine() async throws {
        let programs = try await TestPrograms.c()
        let out = ExecTests.folder()
        defer { try? FileManager.default.removeItem(atPath: out) }
        let (under, run) = try await Self.abortsAloneAndUnderExec(programs.faults, ["swift-style-abort"], out: out)
        let trial = try #require(run?.trials.first)
        let fatal = "NIOCore/EventLoopFuture.swift:1234: Fatal error: BUG DETECTED: wait() must not be called when on an EventLoop."
        let words = try #require(trial.lastWords, "the message is in run.json")
        #expect(words.hasPrefix(fatal + "\n") && words.contains("- event loop associated to future"), "\(words)")
        #expect(under.stderr.contains("\nreason: \(fatal)\n"), "\(under.stderr.suffix(1500))")
        #expect(CrashReason.message(for: trial) == fatal, "\(String(describing: CrashReason.message(for: trial)))")
        let report = try await ProgramRun.run(StrainBinary.path, ["report", (out as NSString).appendingPathComponent("run.json"), "--format", "md", "--out", "-"])
        #expect(report.stdout.contains(" — `\(fatal)`"), "\(report.stdout.prefix(2000))")
        #expect(!report.stdout.contains(" — `- event loop"), "not the message's closing line: \(report.stdout.prefix(2000))")
    }

    /// Node's `process.abort()` prints no message, only its native and JavaScript stacks:
    /// their last numbered line was the record's last words and the reason (re-trial 33m, F2).
    /// Node 18's own words, as it wrote them on this machine.
    @Test func aNumberedStackWithNoMessageIsNoReason() {
        let abort = """
            ----- Native stack trace -----

             1: 0xd3a3c0  [node]
             2: 0xf50bdf v8::internal::FunctionCallbackArguments::Call(v8::internal::CallHandlerInfo) [node]
             5: 0x195e376  [node]

            ----- JavaScript stack trace -----

            1: delta (/work/rt33m/src/js_abort.js:4:41)
            2: gamma (/work/rt33m/src/js_abort.js:3:27)
            10: gamma (/work/rt33m/src/js_abort.js:3:27)

            """
        #expect(StandardErrorWords.lastWords(in: abort) == nil)
        #expect(StandardErrorWords.lastWords(in: "the queue is empty\n" + abort) == "the queue is empty", "a message before the stacks is the reason")
    }

    @Test func theReasonLineIsPickedOutOfATail() {
        let jvm = "Exception in thread \"main\" java.lang.IllegalStateException: outer\n\tat A.f(A.java:3)\nCaused by: java.io.IOException: inner\n\tat A.g(A.java:9)\n\t... 2 more\n"
        #expect(StandardErrorWords.lastWords(in: jvm) == "Exception in thread \"main\" java.lang.IllegalStateException: outer\nCaused by: java.io.IOException: inner")
        let rust = "\nthread 'main' panicked at src/main.rs:4:5:\nboom\nnote: run with `RUST_BACKTRACE=1` environment variable to display a backtrace\n"
        #expect(StandardErrorWords.lastWords(in: rust) == "thread 'main' panicked at src/main.rs:4:5:\nboom")
        #expect(StandardErrorWords.lastWords(in: "\nthread 'main' has overflowed its stack\nfatal runtime error: stack overflow\n") == "thread 'main' has overflowed its stack")
        #expect(StandardErrorWords.lastWords(in: "\n  \n") == nil)
        let long = String(repeating: "x", count: 2000)
        let capped = StandardErrorWords.lastWords(in: "first\n" + long + "\n")
        #expect(capped?.count == StandardErrorWords.limit && capped?.hasSuffix("…") == true, "the message's start says what went wrong")
        // A debug-build precondition over many lines (SwiftNIO's), then the runtime's own stack trace.
        let swift = "NIOCore/EventLoopFuture.swift:1234: Fatal error: BUG DETECTED: wait() must not be called\n- deadlocks\n\n"
            + "Further information:\n- event loop associated to future: SelectableEventLoop\nCurrent stack trace:\n0    libswiftCore.so    0x1 f + 1\n"
        #expect(StandardErrorWords.lastWords(in: swift) == "NIOCore/EventLoopFuture.swift:1234: Fatal error: BUG DETECTED: wait() must not be called\n"
            + "- deadlocks\nFurther information:\n- event loop associated to future: SelectableEventLoop")
        #expect(StandardErrorWords.lastWords(in: "warming up\nterminate called after throwing an instance of 'E'\n  what():  boom\n")
            == "terminate called after throwing an instance of 'E'\n  what():  boom")
        // Ruby, Python, Lua and Node: the line that says what went wrong, not the trace's or the closing line.
        #expect(StandardErrorWords.lastWords(in: "a.rb:1:in 'f': stack level too deep (SystemStackError)\n\tfrom a.rb:1:in 'f'\n\t ... 10067 levels...\n\tfrom a.rb:3:in '<main>'\n")
            == "a.rb:1:in 'f': stack level too deep (SystemStackError)")
        // Ruby 3.1's deadlock: the `(fatal)` line, not the thread list after it (its unindented
        // `* #<Thread …>` lines were taken for the final message).
        let rubyDeadlock = "d7.rb:6:in `sleep': No live threads left. Deadlock? (fatal)\n2 threads, 2 sleeps current:0x55 main thread:0x55\n"
            + "* #<Thread:0x7f sleep_forever>\n   rb_thread_t:0x55 native:0x7f int:0\n   \n* #<Thread:0x7f d7.rb:5 sleep_forever>\n"
            + "   rb_thread_t:0x55 native:0x7f int:0\n   \n\tfrom d7.rb:6:in `wait'\n\tfrom d7.rb:6:in `<main>'\n"
        #expect(StandardErrorWords.lastWords(in: rubyDeadlock) == "d7.rb:6:in `sleep': No live threads left. Deadlock? (fatal)")
        #expect(StandardErrorWords.lastWords(in: "Traceback (most recent call last):\n  File \"a.py\", line 3, in <module>\n    f()\nRecursionError: maximum recursion depth exceeded\n")
            == "RecursionError: maximum recursion depth exceeded")
        #expect(StandardErrorWords.lastWords(in: "lua: a.lua:1: boom\nstack traceback:\n\t[C]: in ?\n") == "lua: a.lua:1: boom")
        #expect(StandardErrorWords.lastWords(in: "/a.js:1\nfunction f() { f() }\n             ^\n\nRangeError: Maximum call stack size exceeded\n    at f (/a.js:1:14)\n\nNode.js v18.19.0\n")
            == "RangeError: Maximum call stack size exceeded")
        #expect(StandardErrorWords.lastWords(in: "retrying\nconfig: cannot start:\nport 80 is taken\n") == "config: cannot start:\nport 80 is taken")
        // A usage line or a pointer to the help after the error is not the reason; alone, it is all there is.
        #expect(StandardErrorWords.lastWords(in: "ls: invalid option -- 'z'\nTry 'ls --help' for more information.\n") == "ls: invalid option -- 'z'")
        #expect(StandardErrorWords.lastWords(in: "tool: no input\nUsage: tool [-v] FILE\n  -v  say more\n") == "tool: no input")
        #expect(StandardErrorWords.lastWords(in: "usage: tool FILE\n") == "usage: tool FILE")
    }

    @Test func theReportsReasonIsTheLineThatSaysWhatWentWrongNotTheLastLine() {
        let nio = "NIOCore/EventLoopFuture.swift:1234: Fatal error: BUG DETECTED: wait() must not be called\nFurther information:\n- event loop associated to future: SelectableEventLoop"
        #expect(CrashReason.line(of: nio) == "NIOCore/EventLoopFuture.swift:1234: Fatal error: BUG DETECTED: wait() must not be called")
        #expect(CrashReason.line(of: "thread 'main' panicked at src/main.rs:4:5:\nboom") == "thread 'main' panicked at src/main.rs:4:5: boom")
        // A message whose own first line ends with `:` goes on to its detail (it stopped at `invalid configuration:`).
        #expect(CrashReason.line(of: "thread 'config-loader' (25313) panicked at src/main.rs:6:19:\ninvalid configuration:\nkey 'port' = \"80a80\": invalid digit found in string\nnote: run with `RUST_BACKTRACE=1`")
            == "thread 'config-loader' (25313) panicked at src/main.rs:6:19: invalid configuration: key 'port' = \"80a80\": invalid digit found in string")
        #expect(CrashReason.line(of: "terminate called after throwing an instance of 'E'\n  what():  boom") == "terminate called after throwing an instance of 'E' what():  boom")
        #expect(CrashReason.line(of: "Exception in thread \"main\" java.lang.IllegalStateException: outer\nCaused by: java.io.IOException: inner")
            == "Exception in thread \"main\" java.lang.IllegalStateException: outer")
        #expect(CrashReason.line(of: "free(): double free detected in tcache 2") == "free(): double free detected in tcache 2")
        #expect(CrashReason.line(of: "\n \n") == nil)
    }
}

/// Where a recursion was entered, when the entering frame has functions inlined into it.
@Suite(.serialized, .timeLimit(.minutes(10))) struct ExecEntryTests {
    /// A C++ thread's lambda that recurses without end, built with -O1: the lambda is
    /// inlined into `std::thread`'s invoker. The recursion was entered at the lambda's
    /// line (threadcycle.cpp:12), where "entered the recursion" and its file:line now
    /// point, in the terminal's trace and in summary.md; it pointed at the invoker's
    /// physical frame (`_M_run at std_thread.h:210`).
    @Test(.enabled(if: ExecStandardErrorWordsTests.cxx != nil, "no c++ on PATH: install g++ (.ci/setup does) to check a C++ thread's recursion"))
    func aRecursionEnteredFromAnInlinedLambdaIsPlacedAtTheLambdasLine() async throws {
        let folder = ExecTests.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let program = (folder as NSString).appendingPathComponent("threadcycle")
        try await TestPrograms.compile([ExecStandardErrorWordsTests.cxx!, "-O1", "-g", "-pthread", "-o", program, TestPrograms.sources + "/threadcycle.cpp"])
        let out = ExecTests.folder()
        defer { try? FileManager.default.removeItem(atPath: out) }
        let (under, run) = try await ExecTests.exec(program, [], out: out)
        #expect(under.termination == .signaled(SIGSEGV), "\(under.stderr.suffix(900))")
        let trial = try #require(run?.trials.first)
        #expect(trial.outcome.kind == .stackOverflow, "\(trial.outcome.description)")
        let entry = try #require(under.stderr.split(separator: "\n").first { $0.hasSuffix("← entered the recursion") }, "\(under.stderr.suffix(1500))")
        #expect(entry.contains("threadcycle.cpp:12:"), "the lambda's line: \(entry)")
        let report = try await ProgramRun.run(StrainBinary.path, ["report", (out as NSString).appendingPathComponent("run.json"), "--format", "md", "--out", "-"])
        #expect(report.stdout.contains("threadcycle.cpp:12"), "summary.md names the lambda's line: \(report.stdout.prefix(2000))")
        #expect(!report.stdout.contains("entered the recursion at std::thread"), "\(report.stdout.prefix(2000))")
    }

    /// An overflow of over 100,000 small frames: the probe's record is megabytes long.
    /// At the old 1 MiB read limit it was cut before its memory map, so no frame had a
    /// name ("the fault record was cut short", `0x55b354b3a1ae`), and the cut line gave
    /// a last frame of half an address. Now the whole record is read and named.
    @Test func anOverflowOfOverAHundredThousandSmallFramesIsNamedWhole() async throws {
        let folder = ExecTests.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let program = (folder as NSString).appendingPathComponent("tinyframes")
        try await TestPrograms.compile([TestPrograms.compiler, "-O1", "-g", "-o", program, TestPrograms.sources + "/tinyframes.c"])
        let out = ExecTests.folder()
        defer { try? FileManager.default.removeItem(atPath: out) }
        let (under, run) = try await ExecTests.exec(program, [], out: out)
        #expect(under.termination == .signaled(SIGSEGV), "\(under.stderr.suffix(900))")
        let trial = try #require(run?.trials.first)
        let trace = try #require(trial.trace)
        #expect(trial.outcome.kind == .stackOverflow, "\(trial.outcome.description): \(trial.outcome.message ?? "")")
        #expect(trace.totalFrames > 100_000, "\(trace.totalFrames) frames")
        let probe = (out as NSString).appendingPathComponent("probe")
        let record = ((try? FileManager.default.contentsOfDirectory(atPath: probe)) ?? []).first { $0.hasPrefix("fault-") && $0.hasSuffix(".txt") }
        let size = record.flatMap { (try? FileManager.default.attributesOfItem(atPath: (probe as NSString).appendingPathComponent($0)))?[.size] as? Int } ?? 0
        #expect(size > 1 << 20, "the record is over the old 1 MiB limit: \(size) B")
        #expect(trace.cycle?.frames.contains { $0.symbol == "depth" } == true, "the cycle is named: \(trace.cycle.map(TraceText.cycle) ?? "none")")
        #expect(trace.lastFrames.contains { $0.symbol == "main" }, "the thread's start is named: \(trace.lastFrames.map(\.displayName))")
        #expect(!under.stderr.contains("cut short"), "\(under.stderr.prefix(900))")
    }
}
