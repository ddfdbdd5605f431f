import Foundation
import StrainRecords
import StrainCLI
import StrainKit
import StrainReports
import StrainScenarios
import StrainSuite
import StrainText
import Testing

/// How many times each word of `text` occurs (white space between words).
private func wordCounts(_ text: String) -> [Substring: Int] {
    TerminalStyle.spacedAtSymbolBreaks(text).split(whereSeparator: \.isWhitespace).reduce(into: [:]) { $0[$1, default: 0] += 1 }
}

/// Lines of `text` wider than `columns`.
private func wide(_ text: String, _ columns: Int = 80) -> [String] {
    text.components(separatedBy: "\n").filter { $0.count > columns }
}

/// Lines of `text` wider than `columns` that have a space to break at: a single word
/// longer than a line (a record's absolute path) stays whole, never cut.
private func breakable(_ text: String, _ columns: Int = 80) -> [String] {
    wide(text, columns).filter { $0.split(separator: " ").count > 1 }
}

/// `strain gate`'s terminal summary in an 80-column window: fitted between words as
/// `strain run`'s report is, a long reason wrapped under its row, no word cut.
@Suite(.serialized, .timeLimit(.minutes(10))) struct GateWidthTests {
    @Test func aGateAtEightyColumnsFitsEveryLineAndSplitsNoWord() async throws {
        let fixture = try await ChangedRuns.make()
        defer { try? FileManager.default.removeItem(atPath: fixture.folder) }
        // Relative paths, so that no path alone is wider than the window.
        let arguments = ["gate", "b", "--baseline", "base", "--baselines", "baselines"]
        let whole = try await CommandRun.run(arguments + ["--out", "whole"], in: fixture.folder, removing: ["COLUMNS"])
        #expect(whole.status == 3, "\(whole.stdout)\(whole.stderr)")
        #expect(!breakable(whole.stdout).isEmpty, "the gate has lines to fit:\n\(whole.stdout)")

        let piped = try await CommandRun.run(arguments + ["--out", "whole"], in: fixture.folder, environment: ["COLUMNS": "80"])
        #expect(piped.status == 3, "\(piped.stdout)\(piped.stderr)")
        #expect(breakable(piped.stdout).isEmpty, "every line fits 80 columns:\n\(breakable(piped.stdout).joined(separator: "\n"))")
        #expect(wordCounts(piped.stdout) == wordCounts(whole.stdout), "the same words, none cut:\n\(piped.stdout)")
        // A reason wrapped under its row: its lines after the first indented past the row's.
        let lines = piped.stdout.components(separatedBy: "\n")
        let outcome = try #require(lines.firstIndex { $0.hasPrefix("      outcome: ") }, "\(piped.stdout)")
        #expect(lines[outcome + 1].hasPrefix("          "), "the reason goes on under its row:\n\(piped.stdout)")

        // On an 80-column terminal the same.
        let shown = try await CommandRun.run(arguments + ["--out", "whole"], in: fixture.folder, environment: ["COLUMNS": "80"], terminal: true)
        #expect(shown.status == 3, "\(shown.stdout)")
        let drawn = shown.stdout.replacing(/\u{1B}\[[0-9;]*[mK]/, with: "").replacingOccurrences(of: "\r\n", with: "\n")
        #expect(breakable(drawn).isEmpty, "every line fits an 80-column terminal:\n\(breakable(drawn).joined(separator: "\n"))")
        #expect(wordCounts(drawn) == wordCounts(whole.stdout), "the same words, none cut:\n\(drawn)")
    }

    @Test func gateGitHubIsTheSameAsFormatGitHubAsRunSpellsIt() async throws {
        let fixture = try await ChangedRuns.make()
        defer { try? FileManager.default.removeItem(atPath: fixture.folder) }
        let arguments = ["gate", "b", "--baseline", "base", "--baselines", "baselines", "--out", "gate"]
        let format = try await CommandRun.run(arguments + ["--format", "github"], in: fixture.folder, removing: ["COLUMNS", "GITHUB_STEP_SUMMARY"])
        let flag = try await CommandRun.run(arguments + ["--github"], in: fixture.folder, removing: ["COLUMNS", "GITHUB_STEP_SUMMARY"])
        #expect(format.status == 3 && flag.status == 3, "\(flag.stdout)\(flag.stderr)")
        #expect(flag.stdout == format.stdout, "--github prints what --format github does:\n\(flag.stdout)\n---\n\(format.stdout)")
        #expect(flag.stdout.hasPrefix("::error "), "\(flag.stdout)")
        // With --format text, both: the summary, then the annotations.
        let both = try await CommandRun.run(arguments + ["--format", "text", "--github"], in: fixture.folder, removing: ["COLUMNS", "GITHUB_STEP_SUMMARY"])
        #expect(both.status == 3, "\(both.stderr)")
        let summary = try #require(both.stdout.range(of: "Gate (cross-run"), "\(both.stdout)")
        let annotation = try #require(both.stdout.range(of: "::error "), "\(both.stdout)")
        #expect(summary.lowerBound < annotation.lowerBound, "\(both.stdout)")
        let help = try await StrainBinary.run(["gate", "--help"])
        #expect(help.stdout.contains("--github"), "gate's help names --github:\n\(help.stdout)")
    }
}

/// `strain explain NAME` at 80 columns: its prose broken between words, its starter
/// suite's long flow lists broken where YAML reads them the same.
@Suite(.timeLimit(.minutes(10))) struct ExplainWidthTests {
    /// The tables write `archiveBytes` as "archive bytes": `explain`, where a user learns the
    /// names to write in a suite, says which is which; a scenario without such a name says nothing.
    @Test func explainSaysHowTheReportsWriteACamelCaseMetricAndATimesName() async throws {
        let graph = try await StrainBinary.run(["explain", "cyclic-graph"], environment: ["COLUMNS": "1000"])
        #expect(graph.stdout.contains("Reports write this name in words (archiveBytes as \"archive bytes\"); run.json, metrics.csv and the thresholds under a suite's gate key use it as above."), "\(graph.stdout)")
        // `flood seconds` over `202.0 ms` said a unit its cells did not use.
        let flood = try await StrainBinary.run(["explain", "thread-explosion"], environment: ["COLUMNS": "1000"])
        #expect(flood.stdout.contains("Reports write this name as a time, its cells giving the unit (flood seconds as \"flood time\"); run.json, metrics.csv and the thresholds under a suite's gate key use it as above."), "\(flood.stdout)")
        let json = try await StrainBinary.run(["explain", "nested-json"], environment: ["COLUMNS": "1000"])
        #expect(json.status == 0 && !json.stdout.contains("Reports write"), "\(json.stdout)")
    }

    @Test func everyExplanationFitsEightyColumnsSplitsNoWordAndItsSuiteReadsTheSame() async throws {
        let names = ScenarioCatalog.builtIn.names
        #expect(names.count == 17)
        var fitted = 0
        for name in names {
            let whole = try await StrainBinary.run(["explain", name], environment: ["COLUMNS": "1000"])
            #expect(whole.status == 0, "\(name): \(whole.stderr)")
            if !wide(whole.stdout).isEmpty { fitted += 1 }
            // At COLUMNS=80, and in a pipe without COLUMNS (as `strain list`: 80).
            for columns in ["80", nil] {
                let result = try await CommandRun.run(["explain", name], in: FileManager.default.temporaryDirectory.path,
                                                      environment: columns.map { ["COLUMNS": $0] } ?? [:], removing: columns == nil ? ["COLUMNS"] : [])
                #expect(result.status == 0, "\(name): \(result.stderr)")
                #expect(wide(result.stdout).isEmpty, "\(name), COLUMNS=\(columns ?? "unset"): lines over 80:\n\(wide(result.stdout).joined(separator: "\n"))")
                #expect(wordCounts(result.stdout) == wordCounts(whole.stdout), "\(name): the same words, none cut:\n\(result.stdout)")
                let marker = "A suite to start from (it passes as it is):\n\n"
                let suite = try #require(result.stdout.components(separatedBy: marker).dropFirst().first, "\(name): \(result.stdout)")
                let wholeSuite = try #require(whole.stdout.components(separatedBy: marker).dropFirst().first)
                // The same runs, parameters, strategies and expectations; only the text (its hash)
                // and the lines the runs start on differ.
                func read(_ text: String) throws -> ResolvedSuite {
                    var resolved = try SuiteParser(catalog: .builtIn).parse(text, path: "s.yaml").resolved
                    resolved.textHash = nil
                    for index in resolved.runs.indices { resolved.runs[index].line = nil }
                    return resolved
                }
                #expect(try read(suite) == read(wholeSuite), "\(name): the fitted suite reads as the whole one:\n\(suite)")
            }
        }
        #expect(fitted >= 5, "explanations with lines to fit: \(fitted)")
    }
}

/// What `strain` says about a mistake on its command line: once, and in one casing.
@Suite(.timeLimit(.minutes(10))) struct CommandLineErrorTests {
    @Test func anOptionTypoGetsItsHintOnce() async throws {
        for (arguments, hint) in [(["run", "--formt", "json"], "'--format'"), (["gate", "--repetition", "3"], "'--repetitions'")] {
            let result = try await StrainBinary.run(arguments)
            #expect(result.status == 2, "\(arguments): \(result.stderr)")
            #expect(result.stderr.components(separatedBy: "Did you mean").count - 1 == 1, "\(arguments): one hint:\n\(result.stderr)")
            #expect(result.stderr.contains("Did you mean \(hint)?"), "\(arguments): \(result.stderr)")
        }
    }

    @Test func argumentParsersErrorsSayErrorAsStrainsOwnDo() async throws {
        let cases: [([String], String)] = [
            (["run", "--jobs", "0"], "error: --jobs 0 is out of range"),
            (["run", "--formt", "json"], "error: unknown option '--formt'"),
            (["gate", "--format", "githb"], "error: the value 'githb' is invalid"),
            (["explain"], "error: missing expected argument"),
        ]
        for (arguments, start) in cases {
            let result = try await StrainBinary.run(arguments)
            #expect(result.status == 2, "\(arguments): \(result.stderr)")
            #expect(result.stderr.hasPrefix(start), "\(arguments): \(result.stderr)")
            #expect(!result.stderr.contains("Error:"), "\(arguments): \(result.stderr)")
        }
    }
}

/// `strain --help`: the usage and the commands first, the exit codes after them.
@Suite(.timeLimit(.minutes(10))) struct HelpOrderTests {
    @Test func theRootHelpShowsUsageAndCommandsBeforeTheExitCodes() async throws {
        for arguments in [["--help"], ["help"]] {
            let help = try await StrainBinary.run(arguments, environment: ["COLUMNS": "80"])
            #expect(help.status == 0, "\(help.stderr)")
            let text = help.stdout
            let usage = try #require(text.range(of: "USAGE: strain"), "\(text)")
            let commands = try #require(text.range(of: "SUBCOMMANDS:"), "\(text)")
            let codes = try #require(text.range(of: "Exit codes ("), "\(text)")
            #expect(usage.lowerBound < commands.lowerBound && commands.lowerBound < codes.lowerBound, "\(arguments): usage, commands, then exit codes:\n\(text)")
            let lines = text.components(separatedBy: "\n")
            #expect(lines.prefix(12).contains { $0.hasPrefix("USAGE: ") }, "the usage near the top:\n\(text)")
            // No wrap puts `1.` at a line's start, where it reads as a numbered list.
            let listed = lines.filter { $0.wholeMatch(of: /\s*\d+\.(\s.*)?/) != nil }
            #expect(listed.isEmpty, "lines that read as a numbered list: \(listed)")
            #expect(wide(text).isEmpty, "\(wide(text))")
        }
    }

    /// `run` and `gate` carry their own exit-code tables: after the usage, the
    /// arguments and the options, never before them.
    @Test(arguments: [["run", "--help"], ["gate", "--help"], ["help", "run"], ["help", "gate"]])
    func aCommandsHelpShowsItsUsageAndOptionsBeforeItsExitCodes(_ arguments: [String]) async throws {
        let help = try await StrainBinary.run(arguments, environment: ["COLUMNS": "80"])
        #expect(help.status == 0, "\(help.stderr)")
        let text = help.stdout
        let usage = try #require(text.range(of: "USAGE: strain"), "\(text)")
        let options = try #require(text.range(of: "OPTIONS:"), "\(text)")
        let codes = try #require(text.range(of: "Exit codes ("), "\(text)")
        #expect(usage.lowerBound < options.lowerBound && options.lowerBound < codes.lowerBound, "\(arguments): usage, options, then exit codes:\n\(text)")
        #expect(text.contains("  143  ") || arguments.contains("gate"), "the whole table is there: \(text)")
        #expect(wide(text).isEmpty, "\(wide(text))")
    }

    @Test func wrappingKeepsANumberThatEndsASentenceWithTheWordBeforeIt() {
        let note = ExitCodeContract.otherCommands.joined(separator: " ")
        for width in 30...78 {
            let pieces = TextTable.wrap(note, width: width)
            #expect(!pieces.contains { $0.wholeMatch(of: /\d+\.(\s.*)?/) != nil }, "width \(width): \(pieces)")
            #expect(pieces.allSatisfy { $0.count <= width || !$0.contains(" ") }, "width \(width): \(pieces)")
        }
    }
}

/// Numbers and sizes in the terminal: one grouping rule, and the article a size is read with.
@Suite struct NumberFormatTests {
    @Test func allocationAndInstructionCountsGroupTheirThousands() {
        #expect(MetricDescriptor.Unit.allocations(1_253) == "1,253 allocs")
        #expect(MetricDescriptor.Unit.allocations(842) == "842 allocs")
        #expect(MetricDescriptor.Unit.allocations(-1_020) == "-1,020 allocs")
        #expect(MetricDescriptor.Unit.allocations(34_200) == "34.2 k allocs")
        #expect(MetricDescriptor.Unit.instructions(9_500) == "9,500 instr")
    }

    @Test func aStackSizeInATraceIsReadWithItsArticle() throws {
        let text = TerminalReport(color: false).render(RunReport(try ReportTests.fixture()))
        #expect(text.contains("SIGABRT on an 8.0 MiB stack"), "\(text)")
        #expect(text.contains("the low end of a 512 KiB stack"), "\(text)")
        let wrong = text.matches(of: /\ba 8[0-9.]*\s?[KMG]iB/).map { String($0.0) }
        #expect(wrong.isEmpty, "\(wrong)")
    }
}

/// Help a user copies from at 80 columns: each example a whole command (its lines
/// continued with `\`, never wrapped to column 0), each default said once.
@Suite(.timeLimit(.minutes(10))) struct HelpExampleTests {
    @Test(arguments: ["bisect", "run", "gate", "merge", "exec"])
    func aCommandsHelpAt80ColumnsHasWholeExamplesAndEachDefaultOnce(_ command: String) async throws {
        let help = try await StrainBinary.run([command, "--help"], environment: ["COLUMNS": "80"])
        #expect(help.status == 0, "\(help.stderr)")
        let lines = help.stdout.components(separatedBy: "\n")
        // An example's line that goes on: the next starts indented, never at column 0.
        for (line, next) in zip(lines, lines.dropFirst()) where line.hasPrefix("  strain ") || line.hasSuffix(" \\") {
            #expect(!next.hasPrefix("--"), "\(command): an example's options wrapped to column 0:\n\(line)\n\(next)")
        }
        // argument-parser prints `(default: X)` itself; the text saying it too doubled it.
        let flat = help.stdout.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        for twice in [#/\(default [^():]+\)\. \(default: /#, #/default: all of them\)\. \(default:/#, #/default: those three\./#] {
            #expect(flat.firstMatch(of: twice) == nil, "\(command): a default said twice: \(flat.firstMatch(of: twice).map { String($0.0) } ?? "")")
        }
    }
}

/// A mistake's message at 80 columns is fitted between words as the reports are (the
/// scenario list after a misspelt name was one line of 334 columns); in a pipe without
/// COLUMNS (a CI log) each message stays on its line. `exec`'s usage fits too.
@Suite(.timeLimit(.minutes(10))) struct ErrorWidthTests {
    @Test func errorsAndExecsUsageFitEightyColumnsWithTheSameWords() async throws {
        let folder = FileManager.default.temporaryDirectory.path
        let mistakes = [["explain", "cyclic-grpah"], ["rnu"], ["report", "/nonexistent/folder/of/a/run/that/was/never/written/run.json"]]
        for arguments in mistakes {
            let whole = try await CommandRun.run(arguments, in: folder, removing: ["COLUMNS"])
            #expect(whole.status == 2, "\(arguments): \(whole.stderr)")
            #expect(!wide(whole.stderr).isEmpty, "\(arguments): a message wider than 80 to fit: \(whole.stderr)")
            let fitted = try await CommandRun.run(arguments, in: folder, environment: ["COLUMNS": "80"])
            #expect(fitted.status == 2, "\(arguments): \(fitted.stderr)")
            #expect(wide(fitted.stderr).isEmpty, "\(arguments): lines over 80:\n\(fitted.stderr)")
            #expect(wordCounts(fitted.stderr) == wordCounts(whole.stderr), "\(arguments): the same words:\n\(fitted.stderr)")
        }
        let help = try await CommandRun.run(["exec", "--help"], in: folder, environment: ["COLUMNS": "80"])
        #expect(help.status == 0, "\(help.stderr)")
        #expect(wide(help.stdout).isEmpty, "exec's help at 80 columns:\n\(help.stdout)")
        #expect(help.stdout.contains("USAGE: strain exec [--out <out>] [--stall <duration>]"), "\(help.stdout)")
        let save = try await CommandRun.run(["baseline", "save", "--help"], in: folder, environment: ["COLUMNS": "80"])
        #expect(save.status == 0 && wide(save.stdout).isEmpty, "baseline save's help at 80 columns:\n\(save.stdout)")
    }
}
