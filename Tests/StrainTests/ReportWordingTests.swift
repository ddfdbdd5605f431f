import Foundation
import StrainRecords
@testable import StrainReports
import StrainText
import Testing

/// summary.md short enough for a pull-request comment with the answer first, and the
/// small things a reader tripped on: a stack cell of `? / 8.0 MiB`, a metric in
/// seconds shown in ms, a camelCase metric beside names in words, the Swift version
/// without its patch release, and float noise in metrics.csv.
@Suite(.timeLimit(.minutes(20))) struct ReportWordingTests {
    /// The fixture's summary.md held every trace and every dump in `<details>`: 29,290
    /// characters for 22 trials (the default suite's, 61,207 of the 65,536 a comment
    /// takes). Each trace and stall is now a line with its place, and the page and
    /// run.json hold the frames.
    @Test func summaryMdGivesEachTraceAndStallALineWithItsPlaceAndPointsToTheFrames() throws {
        let run = try ReportTests.fixture()
        let report = RunReport(run)
        let markdown = MarkdownReport.render(report)
        #expect(markdown.count < 12_000, "\(markdown.count) characters")
        #expect(!markdown.contains("```") && !markdown.contains("<details>"), "no trace or dump in full")
        let traces = try #require(markdown.components(separatedBy: "\n## Traces\n\n").dropFirst().first?.components(separatedBy: "\n## ").first)
        for entry in report.traces.entries {
            #expect(traces.replacingOccurrences(of: "\\", with: "").contains("- **\(entry.trial.key.description)**: "), "\(entry.trial.key)")
        }
        #expect(traces.contains("  - entered the recursion at: `") && traces.contains("  - at: `"), "each trace's place: \(traces)")
        #expect(traces.contains("Every frame of each trace is in report.html (Traces) and run.json"), "\(traces)")
        let stalls = try #require(markdown.components(separatedBy: "\n## Stalls\n\n").dropFirst().first?.components(separatedBy: "\n## ").first)
        #expect(stalls.components(separatedBy: "\n- **").count - 1 == report.stalls.entries.count, "\(stalls)")
        #expect(stalls.contains("Every thread's frames are in report.html (Stalls) and run.json"), "\(stalls)")
        // The answer still leads: what failed, then why and what to do, before any table.
        let order = ["## What failed", "## Why, and what to do", "| strategy |", "## Traces"].map { markdown.range(of: $0)?.lowerBound }
        #expect(order.allSatisfy { $0 != nil } && order.map { $0! } == order.map { $0! }.sorted(), "\(markdown.prefix(1_500))")
    }

    /// The default suite, as the quick start runs it: its summary.md well under the
    /// 65,536 characters a pull-request comment takes (it was 60,724 to 64,979, and once cut).
    @Test func theDefaultSuitesSummaryIsUnderTwentyThousandCharacters() async throws {
        let out = try temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: out) }
        let suite = FixturePackage.repository.appendingPathComponent("Scenarios/smoke.yaml").path
        let result = try await StrainBinary.run(["run", suite, "--out", out + "/run", "--format", "md"], timeout: 900)
        #expect(result.status == 0, "\(result.stdout.suffix(2_000))\(result.stderr)")
        let summary = TestFiles.read(out + "/run/summary.md")
        #expect(summary.count > 2_000 && summary.count < 20_000, "summary.md of the default suite: \(summary.count) characters")
        #expect(!summary.contains("_Cut to fit"), "\(summary.suffix(400))")
        #expect(summary.contains("\n## Traces\n") && summary.contains("\n## Stalls\n"), "the traces and the stalls, a line each")
    }

    /// A crashed trial's stack column read `? / 8.0 MiB`, unexplained: it is `– / 8.0 MiB`
    /// (a main thread's 8 MiB less its guard page), and the table says what that means,
    /// in each view.
    @Test func aStackWhoseUseWasNotMeasuredIsADashThatTheTableExplains() throws {
        let run = try ReportTests.fixture()
        let crashed = try #require(run.trials.first { $0.outcome.kind == .crashed && $0.metrics.stackHighWaterBytes == nil && $0.metrics.stackSizeBytes != nil })
        let views = [("terminal", TerminalReport(color: false).render(run)), ("summary.md", MarkdownReport.render(run)), ("report.html", TestFiles.readable(HTMLReport.render(run)))]
        for (name, text) in views {
            #expect(!text.contains("? / "), "\(name)")
            #expect(text.contains("– / 8.0 MiB"), "\(name): \(crashed.key)")
            #expect(text.replacingOccurrences(of: "\n  ", with: " ").contains("how much of it was used is not known"), "\(name) says what the dash means")
        }
        // Only under a table that has such a cell.
        let noop = try #require(RunReport(run).outcomes.tables.first { $0.scenario == "noop" })
        #expect(noop.note == nil)
    }

    /// `flood seconds (s)` read `201.0 ms`, then `0.0000917 s` beside `91.7 µs` elsewhere;
    /// `archiveBytes` sat beside names in words. A time is written as every other time
    /// is, its column without a unit (`flood time`), and a camelCase name is shown in
    /// words while the record keeps its key.
    @Test func aDeclaredMetricIsShownInItsColumnsUnitAndInWords() throws {
        let run = try ReportTests.fixture()
        let tables = DeclaredMetrics(run).tables
        let flood = try #require(tables.first { $0.header.contains("flood time") }, "\(tables.map(\.header))")
        let column = try #require(flood.header.firstIndex(of: "flood time"))
        #expect(flood.rows.contains { $0[column] != "–" })
        for row in flood.rows where row[column] != "–" {
            #expect(row[column].wholeMatch(of: /\d{3} ms/) != nil, "\(row)")
        }
        #expect(!tables.contains { $0.header.contains { $0.hasSuffix("(s)") } }, "\(tables.map(\.header))")
        // A column whose cells write their unit does not say it again (`archive bytes (bytes, ↓ better)` over `137 KiB`).
        #expect(tables.contains { $0.header.contains("archive bytes (↓ better)") }, "\(tables.map(\.header))")
        #expect(tables.contains { $0.header.contains("items started before the probe (count)") }, "\(tables.map(\.header))")
        #expect(!tables.contains { $0.header.contains { $0.hasPrefix("archiveBytes") } })
        #expect(run.trials.contains { $0.metrics.custom["archiveBytes"] != nil }, "the record keeps the declared key")
        #expect(MetricDescriptor.displayName(of: "archiveBytes") == "archive bytes")
        #expect(MetricDescriptor.displayName(of: "HTTPBytesSent") == "HTTP bytes sent")
        // A time's column no longer says seconds over `202.0 ms`; the record keeps `flood seconds`.
        #expect(!tables.contains { $0.header.contains { $0.contains("seconds") } }, "\(tables.map(\.header))")
        #expect(run.trials.contains { $0.metrics.custom["flood seconds"] != nil }, "the record keeps the declared key")
        #expect(MetricDescriptor.displayName(of: "flood seconds") == "flood time")
        #expect(MetricDescriptor.displayName(of: "decodeSeconds") == "decode time")
        #expect(MetricDescriptor.displayName(of: "seconds") == "time")
        #expect(MetricDescriptor.displayName(of: "secondsSpent") == "seconds spent")
        // Never in exponent form or in seconds beside Strain's own µs and ms (`6.62e-05 s`, then `0.0000662 s`, were).
        #expect(Format.duration(6.62e-05) == "66.2 µs" && Format.duration(0.20199003) == "202 ms")
        // A time and a latency of the same length read the same (`66 µs` beside `66.2 µs`).
        for seconds in [0, 4.2e-7, 6.62e-06, 6.62e-05, 0.000126, 0.0009996, 0.0011, 0.0123, 0.405, 2.5] {
            #expect(Format.duration(seconds) == Format.nanoseconds(seconds * 1e9), "\(seconds)")
        }
        #expect(Format.duration(0) == "0 ns" && Format.duration(4.2e-7) == "420 ns" && Format.duration(0.0009996) == "1.00 ms" && Format.duration(0.000999) == "999 µs")
        // Three digits above 100 ms too (`405.4 ms` beside `126 µs`; `10.00 s`).
        #expect(Format.duration(0.4054) == "405 ms" && Format.duration(0.09996) == "100 ms" && Format.duration(0.9996) == "1.00 s"
                && Format.duration(10) == "10.0 s" && Format.duration(123.4) == "123 s")
    }

    /// A dump's thread group ended `[strain; S]`: the kernel's state letter, explained
    /// nowhere. Every view writes it in words.
    @Test func aDumpsThreadStateIsWrittenInWords() throws {
        let run = try ReportTests.fixture()
        let terminal = TerminalReport(color: false).render(run)
        let groups = terminal.split(separator: "\n").filter { $0.contains(" — ") && $0.hasSuffix("]") }
        #expect(!groups.isEmpty, "\(terminal)")
        for line in groups {
            #expect(line.contains("; sleeping") && line.wholeMatch(of: /.*; [A-Za-z](, .*)?\]/) == nil, "\(line)")
        }
        #expect(ThreadNames.state("R") == "running" && ThreadNames.state("D") == "in a disk wait" && ThreadNames.state("answering") == "answering")
    }

    /// report.html had two `<h2>Stalls</h2>`: the answer's list and the dumps. The answer's
    /// is "What stalled", beside "What failed", in report.html and summary.md alike.
    @Test func theAnswersStallListIsHeadedApartFromTheDumps() throws {
        let run = try ReportTests.fixture()
        let html = HTMLReport.render(run)
        #expect(html.components(separatedBy: "<h2>Stalls</h2>").count == 2, "one Stalls section, the dumps")
        #expect(html.contains("<h2>What stalled</h2>"))
        let markdown = MarkdownReport.render(run)
        #expect(markdown.contains("**What stalled** (each dump is under Stalls below):") && markdown.components(separatedBy: "## Stalls\n").count == 2, "\(markdown)")
    }

    /// A ranking's `fairness` and `together` were explained nowhere, and summary.md's
    /// column of `p99.9` dashes only under report.html's chart: each view says under the table.
    @Test func aRankingSaysWhatItsColumnsMean() throws {
        let run = try ReportTests.fixture()
        let note = "fairness: Jain's index of the operations each worker did"
        #expect(TerminalReport(color: false).render(run).contains(note))
        #expect(MarkdownReport.render(run).contains(note) && MarkdownReport.render(run).contains("p99.9: – where a trial had fewer than 2,000 samples"))
        #expect(HTMLReport.render(run).contains("<p class=\"note\">\(note.replacingOccurrences(of: "'", with: "&#39;"))"))
        // `2,000` / `samples.` broke apart at the end of a line; a terminal without the
        // p99.9 column (left out for width) is not told what it means.
        for width in 60...80 {
            #expect(!TerminalStyle(color: false, width: width).fit("  " + RankingSection.Table.note(shown: ["fairness", "together", "p99.9"]), hanging: 2).contains { $0.hasSuffix("2,000") })
        }
        #expect(RankingSection.Table.note(shown: ["fairness", "together"]) == "fairness: Jain's index of the operations each worker did (1.00 when all did as many, 1/workers when one did all). together: the workers there when the work began, of those asked for.")
    }

    /// The terminal's trace said `at:` for the faulting frame (`__pthread_kill_implementation`)
    /// and `in:` for the scenario's, where summary.md's `at:` and What failed's `at` name the
    /// scenario's: `at:` is that frame in every view, the faulting one `fault:`, as over a cycle.
    @Test func aTracesAtNamesTheSameFrameOnTheTerminalAndInSummaryMarkdown() throws {
        let run = try ReportTests.fixture()
        let terminal = TerminalReport(color: false).render(run).split(separator: "\n").map(String.init)
        let markdown = MarkdownReport.render(run).split(separator: "\n").map(String.init)
        let ats = terminal.filter { $0.hasPrefix("    at: #") }
        #expect(!ats.isEmpty && !terminal.contains { $0.hasPrefix("    in: ") }, "\(terminal)")
        for at in ats {
            let frame = at.replacing(/^    at: #[0-9,]+ {2}/, with: "")
            #expect(markdown.contains("  - at: `\(frame)`"), "\(frame) in summary.md too")
        }
        #expect(terminal.contains { $0.hasPrefix("    fault: #0  __pthread_kill_implementation") }, "\(terminal)")
    }

    /// The environment said `Swift 6.3` for a 6.3.1 toolchain: run.json records the
    /// compiler's version to its patch release, as `swift --version` prints it.
    @Test func theRecordNamesTheSwiftVersionToItsPatchRelease() async throws {
        let version = try await Tool.run(["swift", "--version"], timeout: 60)
        let printed = try #require(version.output.firstMatch(of: /Swift version (\d+\.\d+(?:\.\d+)?)/).map { String($0.1) }, "\(version.output)")
        let (result, record, _) = try await StrainBinary.runSuiteLeavingNothing("""
            name: version
            timeout: 30s
            profiles: [linux]
            runs:
              - scenario: noop
                strategies: [main]
            """, timeout: 60)
        #expect(result.status == 0, "\(result.stderr)")
        let recorded = try #require(record?.environment.swiftVersion)
        // A toolchain past the last patch release the binary knows says "or later".
        #expect(recorded == printed || recorded.hasSuffix(" or later"), "run.json says Swift \(recorded); swift --version says \(printed)")
        #expect(recorded.split(separator: ".").count == 3 || recorded.hasSuffix(" or later"), "\(recorded)")
    }

    /// metrics.csv wrote `0.0038680000000000003` for 3.868 ms, the float's sum error in
    /// full: numbers are written to 9 significant digits.
    /// Sizes and frame numbers as the tables write them: a size in a sentence has a
    /// space before its unit (`fixed cost 17.5 KiB`, it read `17.5KiB` beside the
    /// table's `512 KiB`), and a frame's number its separators (`#29,096` under
    /// `frames #1–#29,095`).
    @Test func aSizeInASentenceAndAFramesNumberAreWrittenAsTheTablesWriteThem() {
        #expect(ByteSize.prose(17_920) == "17.5 KiB" && ByteSize.prose(512 * 1024) == "512 KiB" && ByteSize.prose(8 << 20) == "8 MiB" && ByteSize.prose(100) == "100 B")
        #expect(ByteSize.prose(1028 * 1024, exact: true) == "1028 KiB")
        // A stack's size is exact where it is (`8 MiB`, as a sentence writes it), and `8.0 MiB` only near it.
        #expect(Format.bytes(8_388_608, exact: true) == "8 MiB" && Format.bytes(8_384_512, exact: true) == "8.0 MiB" && Format.bytes(67_108_864, exact: true) == "64 MiB")
        #expect(Format.stack(used: 8_388_608, size: 8_388_608) == "8 MiB / 8 MiB" && Format.stack(used: 1_363_148, size: 8_388_608) == "1.3 MiB / 8 MiB")
        // A measurement keeps its decimal, so a column of peak RSS reads alike (`26.0 MiB` beside `20.8 MiB`).
        #expect(Format.bytes(27_262_976) == "26.0 MiB")
        let frame = Frame(address: 0x1000, symbol: "main")
        #expect(TraceText.frameLines(frame, index: 29_096).first?.hasPrefix("#29,096  main") == true)
        #expect(TraceText.frameLines(frame, index: 999).first?.hasPrefix("#999  main") == true)
    }

    /// report.html writes a frame's number as the terminal does (`#29,096`; a list's own
    /// marker read `29096.`, and `53160.` for frame 353,160 at 400 px), and the
    /// Environment's limits in sizes and counts (`stack=8 MiB`; it read `stack=8388608`).
    @Test func reportHTMLWritesFrameNumbersAndLimitsAsTheOtherViewsDo() throws {
        var page = HTMLReport.Page()
        HTMLReport.frameItem(Frame(address: 0x1000, symbol: "main"), index: 353_160, into: &page)
        #expect(page.html.hasPrefix("<li><span class=\"n\">#353,160</span><span class=\"symbol\">main</span>"), "\(page.html)")
        let run = try ReportTests.fixture()
        let html = HTMLReport.render(run)
        #expect(!html.contains("<li value="))
        let numbers = html.matches(of: /<span class="n">#([0-9,]+)<\/span>/).map { String($0.1) }
        #expect(numbers.contains { $0.count > 3 } && numbers.allSatisfy { $0.count <= 3 || $0.contains(",") }, "\(numbers.prefix(20))")
        #expect(run.environment.rlimits["stack"] == 8 << 20)
        #expect(TestFiles.readable(html).contains("stack=8\u{00A0}MiB"), "\(html.firstMatch(of: /rlimits[^\n]*/)?.0 ?? "")")
        #expect(EnvironmentSection.limit(-1, of: "as") == "unlimited" && EnvironmentSection.limit(20_000, of: "nofile") == "20,000")
    }

    /// The Stalls intro counts only the stalls the heartbeat watchdog caught (`2 stalls:`
    /// headed a list of 4, two found by ptrace), and gives the dumps' threads as a range
    /// (their median, `34 threads`, was no dump's).
    @Test func theStallsIntroSaysWhatItCountsAndNoThreadCountNoDumpHad() throws {
        let run = try ReportTests.fixture()
        let summary = try #require(DumpText.watchdogSummary(run))
        let caught = run.trials.filter { $0.stall != nil }
        #expect(summary.hasPrefix("\(caught.count) caught by the heartbeat watchdog: "), "\(summary)")
        let threads = caught.compactMap(\.dump?.threadCount)
        let range = threads.min() == threads.max() ? "\(threads.max() ?? 0)" : "\(threads.min() ?? 0)–\(threads.max() ?? 0)"
        #expect(threads.isEmpty || summary.hasSuffix(", of \(range) threads"), "\(summary)")
        // The threshold the overshoot is added to is named: `median 411 ms (threshold + 10.7 ms)`
        // read as a sum that did not add up.
        #expect(summary.contains(/median \d+ ms without progress \(threshold 400 ms \+ [0-9.]+ ms\)/), "\(summary)")
        // Its median is of what each stall below gives, the time without progress: it gave the
        // time to the outcome's record, `median 415 ms` over stalls of 405 ms and 402 ms (re-trial 35j).
        let silent = caught.compactMap(\.stall?.silentSeconds).sorted()
        let median = silent.count % 2 == 1 ? silent[silent.count / 2] : (silent[silent.count / 2 - 1] + silent[silent.count / 2]) / 2
        #expect(summary.contains("a median \(Format.duration(median)) without progress"), "\(summary)")
        #expect(summary.contains(", each outcome recorded a median "), "\(summary)")
    }

    /// `strain exec --stall` has no heartbeat, and one stall has no median: exec's report said
    /// `1 caught by the heartbeat watchdog: a median 2.04 s …; their dumps took a median 509 µs` (re-trial 35k, N2).
    @Test func anExecStallIsCaughtByTheStallWatchAndOneStallHasNoMedian() throws {
        var run = try ReportTests.fixture()
        var trial = try #require(run.trials.first { $0.stall != nil && $0.dump != nil })
        trial.scenario = TrialKey.execScenario
        trial.stall?.recordedAfterSeconds = nil
        run.trials = [trial]
        let summary = try #require(DumpText.watchdogSummary(run))
        let silent = try #require(trial.stall?.silentSeconds)
        #expect(summary.hasPrefix("1 caught by --stall's watch: \(Format.duration(silent)) without progress ("), "\(summary)")
        #expect(summary.contains("; its dump took ") && !summary.contains("median") && !summary.contains("heartbeat"), "\(summary)")
    }

    @Test func metricsCSVWritesNumbersToNineSignificantDigits() async throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        var text = try String(contentsOfFile: ReportTests.fixturePath, encoding: .utf8)
        // The first trial's wall time (the bisect section above the trials has its own).
        let first = try #require(text.range(of: "\"wallSeconds\" : 0.052187968"))
        text.replaceSubrange(first, with: "\"wallSeconds\" : 0.0038680000000000003")
        try text.write(toFile: folder + "/run.json", atomically: true, encoding: .utf8)
        let result = try await StrainBinary.run(["report", folder + "/run.json", "--format", "csv", "--out", "-"], timeout: 60)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains(",0.003868,") && !result.stdout.contains("0.0038680000000000003"), "\(result.stdout.prefix(1_200))")
        // Every number has at most 9 significant digits.
        let numbers = result.stdout.components(separatedBy: "\r\n").dropFirst().flatMap(ExportTests.cells).filter { Double($0) != nil && $0.contains(".") }
        #expect(!numbers.isEmpty)
        let long = numbers.filter { number in
            let mantissa = number.split(separator: "e")[0].filter(\.isNumber).drop { $0 == "0" }
            return mantissa.count > 9
        }
        #expect(long.isEmpty, "\(long.prefix(5))")
    }
}
