import Foundation
import StrainKit
import StrainReports
import StrainRunner
import Testing

/// A real overflow in a child, symbolized by the real llvm-symbolizer, seen in
/// every format a user reads.
@Suite(.serialized, .timeLimit(.minutes(10))) struct SourceLocationEndToEndTests {
    static let suite = """
        name: chain-lines
        repetitions: 1
        timeout: 30s
        runs:
          - scenario: cyclic-graph
            parameters: {operation: unarchive, shape: chain, size: 2000}
            strategies: [thread(512KiB)]
            expect: completed
        """

    static func read(_ folder: String, _ file: String) throws -> String {
        try String(contentsOfFile: (folder as NSString).appendingPathComponent(file), encoding: .utf8)
    }

    @Test func theChainsTraceNamesGraphModelSwiftWithALineInEveryFormat() async throws {
        let (result, record, out) = try await StrainBinary.runSuite(Self.suite)
        #expect(result.status == 1, "the overflow is unexpected here: \(result.stderr)")
        let trace = try #require(record?.trials.first?.trace)
        let chain = try #require(trace.cycle?.frames.first { $0.symbol == "ChainNode.init(coder:)" })
        #expect(chain.file?.hasSuffix("GraphModel.swift") == true && (chain.line ?? 0) > 0, "\(chain)")
        let line = /GraphModel\.swift:\d+/
        #expect(result.stdout.contains(line), "terminal:\n\(result.stdout)")
        for file in ["summary.md", "report.html", "junit.xml"] {
            #expect(try Self.read(out, file).contains(line), "\(file) names GraphModel.swift with a line")
        }
        let validation = try await SchemaCheck.validate((out as NSString).appendingPathComponent("run.json"))
        #expect(validation.valid, "\(validation.output)")
    }

    @Test func withoutLLVMSymbolizerTheReportsSaySoAndKeepTheNames() async throws {
        let (result, record, out) = try await StrainBinary.runSuite(Self.suite, environment: ["STRAIN_LLVM_SYMBOLIZER": "none"])
        #expect(result.status == 1)
        let trace = try #require(record?.trials.first?.trace)
        #expect(trace.cycle?.frames.contains { $0.symbol == "ChainNode.init(coder:)" && $0.file == nil } == true)
        #expect(result.stdout.contains("llvm-symbolizer was not found"))
        #expect(try TestFiles.readable(Self.read(out, "report.html")).contains("llvm-symbolizer was not found"))
    }
}

/// The top-level command: its version, and the nearest name for a typo.
@Suite(.serialized, .timeLimit(.minutes(10))) struct CommandLineTests {
    @Test func versionPrintsStrainsVersion() async throws {
        let result = try await StrainBinary.run(["--version"])
        #expect(result.status == 0)
        #expect(result.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "strain \(StrainVersion.current)")
    }

    @Test func aMistypedCommandGetsTheNearestOne() async throws {
        let result = try await StrainBinary.run(["reprot", "run.json"])
        #expect(result.status == 2)
        #expect(result.stderr.contains("unknown command 'reprot'; did you mean 'report'?"), "\(result.stderr)")
    }

    /// A word that is no command, near none, and no file is said to be neither: it was
    /// taken for a suite `run` could not find (`frobnicate: error: no such file`, re-trial 35p, F19).
    @Test func aWordThatIsNeitherACommandNorAFileIsSaidToBeNeither() async throws {
        let result = try await StrainBinary.run(["frobnicate"])
        #expect(result.status == 2)
        #expect(result.stderr.hasPrefix("error: 'frobnicate' is neither a command nor a file; `strain run SUITE.yaml` runs a suite\nCommands: "), "\(result.stderr)")
    }

    /// Only `strain --version` takes `--version` (`strain run --version` is refused), so only
    /// its page lists it: every command's listed it (re-trial 35p, F3).
    @Test func onlyTheRootHelpListsVersion() async throws {
        #expect(try await StrainBinary.run(["--help"]).stdout.contains("  --version "))
        for arguments in [["run", "--help"], ["gate", "--help"], ["help", "exec"], ["baseline", "save", "--help"], ["list", "--help"]] {
            let help = try await StrainBinary.run(arguments)
            #expect(help.status == 0 && help.stdout.contains("-h, --help"), "\(arguments): \(help.stderr)")
            #expect(!help.stdout.contains("--version"), "\(arguments) lists a --version it refuses:\n\(help.stdout)")
        }
    }

    /// Every command that writes a folder says where by default, as a pattern: `gate --help`
    /// gave no default, and `merge --help` printed the moment it was asked (`Reports/merged-
    /// 20261203-141502`), a folder no run would use (re-trial 35p, F14 and F15).
    @Test func everyOutOptionSaysItsDefaultAsAPatternNotAMoment() async throws {
        for command in ["run", "bisect", "exec", "gate", "merge", "report"] {
            let help = try await StrainBinary.run([command, "--help"])
            let text = help.stdout.split(whereSeparator: \.isWhitespace).joined(separator: " ")
            let out = try #require(text.range(of: "--out <out> "), "\(command): \(help.stdout)")
            let said = text[out.upperBound...].prefix(400)
            #expect(said.contains("(default: "), "\(command) --help gives no default for --out: \(said)")
            #expect(text.firstMatch(of: /20[0-9]{6}-[0-9]{6}/) == nil, "\(command) --help shows a moment: \(help.stdout)")
        }
    }

    @Test func aMistypedOptionGetsTheNearestOne() async throws {
        let result = try await StrainBinary.run(["run", "Scenarios/smoke.yaml", "--formt", "md"])
        #expect(result.status == 2)
        #expect(result.stderr.contains("Did you mean '--format'?"), "\(result.stderr)")
    }

    @Test func theHelpExplainsFormatJSON() async throws {
        let result = try await StrainBinary.run(["report", "--help"])
        // The help wraps to the terminal's width: compare with single spaces.
        let text = result.stdout.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        #expect(text.contains("json (run.json again"), "\(result.stdout)")
    }
}

/// What the reports say besides the traces: the crash's reason, escapes, the progress line.
@Suite struct ReportTextTests {
    @Test func glibcsAbortMessageAndSwiftsFatalErrorAreTheCrashsReason() {
        #expect(CrashReason.message(stderr: "double free or corruption (!prev)\n") == "double free or corruption (!prev)")
        #expect(CrashReason.message(stderr: "noise\nSwift/ContiguousArrayBuffer.swift:675: Fatal error: Index out of range\n")
            == "Swift/ContiguousArrayBuffer.swift:675: Fatal error: Index out of range")
        #expect(CrashReason.message(stderr: "hello\n") == nil)
        #expect(CrashReason.message(stderr: nil) == nil)
    }

    @Test func theReasonStandsNextToTheSignalInEveryFormat() throws {
        var run = try ReportTests.fixture()
        let index = try #require(run.trials.firstIndex { $0.outcome.kind == .crashed })
        // glibc's text, as a real unguarded run's stderr had it.
        run.trials[index].stderr = "double free or corruption (!prev)\n"
        let reason = "double free or corruption (!prev)"
        #expect(TerminalReport(color: false).render(run).contains("reason: \(reason)"))
        #expect(MarkdownReport.render(run).contains(reason))
        #expect(HTMLReport.render(run).contains(reason))
        #expect(JUnitReport.render(run).contains("— \(reason)\" type=\"crashed\""))
    }

    @Test func markdownEscapesUnderscoresAndStarsInFrameNames() throws {
        var run = try ReportTests.fixture()
        let index = try #require(run.trials.firstIndex { $0.dump != nil })
        let markdown = MarkdownReport.render(run)
        let prose = markdown.components(separatedBy: "```").enumerated().filter { $0.offset % 2 == 0 }.map(\.element).joined()
        #expect(prose.contains("perform(\\_:)"), "a frame's (_:) cannot start emphasis")
        run.trials[index].outcome.message = "a*b"
        #expect(!MarkdownReport.render(run).contains(" a*b"))
    }

    @Test func theProgressLineFitsAnEightyColumnTerminal() {
        let terminal = TerminalReport(color: false)
        let next = "contended-collection[guard=rw-queue-async-barrier, collection=array, element=int, workers=8] thread(512KiB) linux #1"
        for columns in [40, 80, 120] {
            let line = terminal.progressLine(done: 3, total: 12, elapsedSeconds: 6, next: next, columns: columns)
            #expect(line.count <= columns - 1, "\(columns): \(line)")
            #expect(line.contains("3/12"))
        }
    }

    @Test func theEstimateFollowsTheTrialsThatJustFinished() {
        var estimate = ProgressEstimate()
        for index in 1...10 { estimate.finished(atElapsed: Double(index) * 0.01) }
        let fast = estimate.secondsLeft(remaining: 10)!
        for index in 1...8 { estimate.finished(atElapsed: 0.1 + Double(index) * 2) }
        let slow = estimate.secondsLeft(remaining: 10)!
        #expect(slow > fast * 50, "slower trials raise the estimate: \(fast) → \(slow)")
    }
}
