import Foundation
import StrainKit
import StrainReports
import StrainText
import Testing

/// The reports rendered from a fixed run.json (Fixtures/run.json, schema 4: a real
/// run of a small suite with one of every outcome, a harness error among them, its
/// `execution`, and the `bisect` section of a real `strain bisect` spliced in)
/// against golden files of the whole output. Set STRAIN_RECORD_GOLDEN=1 to record
/// them again after a deliberate change, then read the diff before committing.
@Suite struct ReportTests {
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures")
    static var fixturePath: String { fixtures.appendingPathComponent("run.json").path }

    static func fixture() throws -> RunRecord { try RunRecordFile.read(from: fixturePath) }

    /// Compares `text` with the golden file `name`, or records it when asked.
    static func matchesGolden(_ text: String, _ name: String) throws -> Bool {
        let path = fixtures.appendingPathComponent("golden").appendingPathComponent(name)
        if ProcessInfo.processInfo.environment["STRAIN_RECORD_GOLDEN"] == "1" {
            try text.write(to: path, atomically: true, encoding: .utf8)
            return true
        }
        let golden = try String(contentsOf: path, encoding: .utf8)
        if golden != text {
            let actual = TestFolders.root.appendingPathComponent("strain-\(name)")
            try? text.write(to: actual, atomically: true, encoding: .utf8)
            Issue.record("\(name) differs from its golden file; this rendering is at \(actual.path) (diff it; STRAIN_RECORD_GOLDEN=1 records it)")
            return false
        }
        return true
    }

    @Test func theMarkdownMatchesItsGoldenFile() throws {
        #expect(try Self.matchesGolden(MarkdownReport.render(Self.fixture()), "summary.md"))
    }

    @Test func theTerminalReportMatchesItsGoldenFile() throws {
        #expect(try Self.matchesGolden(TerminalReport(color: false).render(Self.fixture()), "terminal.txt"))
    }

    @Test func theJUnitXMLMatchesItsGoldenFileAndTheJUnitSchema() async throws {
        let xml = JUnitReport.render(try Self.fixture())
        #expect(try Self.matchesGolden(xml, "junit.xml"))
        let path = TestFolders.root.appendingPathComponent("strain-junit-\(UUID().uuidString).xml")
        try xml.write(to: path, atomically: true, encoding: .utf8)
        let check = try await XMLSchemaCheck.validate(path.path, schema: Self.fixtures.appendingPathComponent("junit.xsd").path)
        #expect(check.valid, "junit.xml does not match Fixtures/junit.xsd: \(check.output)")
        #expect(xml.contains("<failure message=\"crashed(SIGABRT), expected completed"), "the unexpected crash is a failure")
        #expect(xml.contains("<testsuite name=\"sync-cycle\""))
        #expect(xml.contains("<error message=\"harnessError"), "the harness error is an error, not a failure")
    }

    @Test func theHTMLPageMatchesItsGoldenFile() throws {
        // The whole page, cells, numbers, chart geometry and traces included: every
        // number in it comes from the fixed run.json, so nothing needs normalizing.
        let html = HTMLReport.render(try Self.fixture())
        #expect(try Self.matchesGolden(html, "report.html"))
        #expect(html.contains("Bisect"), "the bisect section is drawn")
        #expect(html.contains("invariantViolated") && html.contains("harnessError"))
        #expect(!html.contains("<script"), "the page needs no script")
        #expect(!html.contains("<link") && !html.contains("@import") && !html.contains("url("), "nothing is fetched")
        let external = html.matches(of: /https?:\/\/[^"'\s<]+/).map { String($0.0) }.filter { $0 != "http://www.w3.org/2000/svg" }
        #expect(external.isEmpty, "\(external)")
        #expect(TestFiles.readable(html).contains("⟳ a cycle of"), "the overflow's recursion is folded")
        #expect(TestFiles.readable(html).contains("holds strain.sync-cycle.0 and waits for strain.sync-cycle.1"), "the deadlock's cycle is named")
        #expect(html.contains("time ∝ limit^"), "the swept parameter gets a fitted exponent")
        #expect(html.contains("guards by throughput"))
    }

    @Test func everyStringFromTheRunIsEscapedInEveryFormat() async throws {
        var run = try Self.fixture()
        let hostile = "<script>alert(1)</script> | & \"quoted\""
        run.suite.name = hostile
        run.trials[0].scenario = hostile
        run.trials[0].parameters["size"] = hostile
        run.trials[0].outcome.message = hostile
        run.trials[0].stdout = hostile + "\u{1}"
        if var trace = run.trials.first(where: { $0.trace != nil })?.trace {
            trace.firstFrames[0].symbol = "Array<\(hostile)>.append"
            run.trials[run.trials.firstIndex { $0.trace != nil }!].trace = trace
        }
        let html = HTMLReport.render(run)
        #expect(!html.contains("<script>"))
        #expect(html.contains("&lt;script&gt;alert(1)&lt;/script&gt; | &amp; &quot;quoted&quot;"))
        let markdown = MarkdownReport.render(run)
        // Inside fenced code blocks text is literal; everywhere else it must be escaped.
        let prose = markdown.components(separatedBy: "```").enumerated().filter { $0.offset % 2 == 0 }.map(\.element).joined()
        #expect(!prose.contains("<script>"))
        #expect(markdown.contains("&lt;script&gt;alert(1)&lt;/script&gt; \\| &amp;"), "a | in a value does not split a table cell")
        let xml = JUnitReport.render(run)
        let path = TestFolders.root.appendingPathComponent("strain-junit-hostile-\(UUID().uuidString).xml")
        try xml.write(to: path, atomically: true, encoding: .utf8)
        let check = try await XMLSchemaCheck.validate(path.path, schema: Self.fixtures.appendingPathComponent("junit.xsd").path)
        #expect(check.valid, "escaped JUnit stays valid: \(check.output)")
    }

    @Test func oddValuesInARunNeitherCrashTheChartsNorReachTheirCoordinates() async throws {
        var run = try Self.fixture()
        let sweep = run.trials.indices.filter { run.trials[$0].scenario == "stack-depth" }
        run.trials[sweep[0]].parameters["limit"] = "nan"
        run.trials[sweep[1]].parameters["limit"] = "inf"
        run.trials[sweep[2]].metrics.wallSeconds = 0
        run.trials[sweep[3]].threadTimeline = []
        // As a run.json can hold it (1e300 is valid JSON): a trial's clock gone wrong.
        run.trials[sweep[3]].metrics.trialSeconds = 1e300
        run.trials[0].scenario = "a b"
        run.trials[1].scenario = "a-b"
        let html = HTMLReport.render(run)
        #expect(!html.contains("nan\"") && !html.contains("inf\"") && !html.contains("NaN"), "no NaN or infinity in an attribute")
        let ids = html.matches(of: /id="([^"]+)"/).map { String($0.1) }
        #expect(Set(ids).count == ids.count, "scenario anchors stay unique: \(ids)")

        // Markdown: "a b" and "a-b" stay two sections, the odd sweep values stay in
        // their headings, and no table cell holds a NaN or an infinity.
        let markdown = MarkdownReport.render(run)
        #expect(markdown.contains("\n## a b[") && markdown.contains("\n## a-b["), "\(markdown.prefix(600))")
        #expect(markdown.contains("\n## stack-depth[frame=256B, limit=nan] on linux") && markdown.contains("\n## stack-depth[frame=256B, limit=inf] on linux"))
        let cells = markdown.split(separator: "\n").filter { $0.hasPrefix("|") }
        #expect(cells.count > 10)
        #expect(!cells.contains { $0.lowercased().contains("nan") || $0.lowercased().contains("inf") }, "\(cells.filter { $0.lowercased().contains("nan") || $0.lowercased().contains("inf") })")

        // JUnit: still valid against the schema (every time a plain decimal), one
        // testsuite per scenario, every time attribute a finite number.
        let xml = JUnitReport.render(run)
        let path = TestFolders.root.appendingPathComponent("strain-junit-odd-\(UUID().uuidString).xml")
        try xml.write(to: path, atomically: true, encoding: .utf8)
        let check = try await XMLSchemaCheck.validate(path.path, schema: Self.fixtures.appendingPathComponent("junit.xsd").path)
        #expect(check.valid, "odd values keep JUnit valid: \(check.output)")
        #expect(xml.contains("<testsuite name=\"a b\"") && xml.contains("<testsuite name=\"a-b\""))
        let times = xml.matches(of: /\stime="([^"]*)"/).map { String($0.1) }
        #expect(times.count == run.trials.count + Set(run.trials.map(\.scenario)).count + 1, "\(times.count) time attributes")
        #expect(times.allSatisfy { Double($0)?.isFinite == true }, "\(times.filter { Double($0)?.isFinite != true })")
    }

    @Test func terminalOutputKeepsItsColoursButNotARunsControlSequences() {
        let painted = "\u{1B}[31mfailed\u{1B}[0m"
        #expect(TerminalStyle.safe(painted) == painted)
        // Without their ESC (and BEL), title and clear-screen sequences are inert text.
        #expect(TerminalStyle.safe("boom\u{1B}]0;pwned\u{07} \u{1B}[2J\u{1B}[Hdone") == "boom]0;pwned [2J[Hdone")
        #expect(TerminalStyle.safe("a\tb\nc") == "a\tb\nc")
    }

    @Test func aPowerLawIsFittedWithItsExponentAndFit() throws {
        let fit = try #require(GrowthFit([1, 2, 4, 8, 16].map { (x: Double($0), y: 3 * Double($0 * $0)) }))
        #expect(abs(fit.exponent - 2) < 1e-9)
        #expect(abs(fit.rSquared - 1) < 1e-9)
        #expect(fit.description(of: "time", over: "size") == "time ∝ size^2.0, R² 1.00")
        #expect(GrowthFit([(1, 1), (2, 2)]) == nil, "two points fit anything")
    }

    /// A sweep whose deepest point threw after 0.67 ms read `time ∝ depth^-0.3, R² 0.01`:
    /// the thrown trial was a point. With completed trials only, the same data say
    /// depth^3.0, and the sentence says what it left out.
    @Test func aGrowthFitUsesCompletedTrialsOnlyAndSaysWhatItLeftOut() throws {
        var run = try Self.fixture()
        let template = try #require(run.trials.first)
        run.trials = [100.0, 200, 400, 800, 1600].map { depth in
            var trial = template
            trial.id = TrialID(key: TrialKey(scenario: "nested-json", parameters: [.init(name: "depth", value: "\(Int(depth))")],
                                             strategy: .thread(stackBytes: 8 << 20), profile: .linux), repetition: 1)
            // The deepest throws at once (a depth limit); the rest take depth³.
            trial.outcome = TrialOutcome(kind: depth == 1600 ? .threw : .completed)
            trial.metrics.wallSeconds = depth == 1600 ? 0.00067 : 1e-9 * depth * depth * depth
            trial.metrics.peakRSSBytes = nil
            return trial
        }
        let sweep = try #require(GrowthSweep.sweeps(run).first)
        let line = try #require(sweep.time.first)
        #expect(line.points.count == 4)
        #expect(line.leftOut == 1)
        let fit = try #require(line.fit)
        #expect(abs(fit.exponent - 3) < 0.01)
        #expect(sweep.fitLines == ["thread(8MiB) linux: time ∝ depth^3.0, R² 1.00 (1 trial that did not complete left out)"])
    }

    @Test func theProgressLineShowsCountTimeLeftAndTheNextTrial() {
        let terminal = TerminalReport(color: false)
        let line = terminal.progressLine(done: 3, total: 12, elapsedSeconds: 6, next: "noop main linux #1", width: 12)
        #expect(line == "[###·········] 3/12  0:18 left  next: noop main linux #1")
        #expect(terminal.progressLine(done: 12, total: 12, elapsedSeconds: 30, next: nil, width: 4) == "[####] 12/12")
    }
}

/// The CLI's `report` command, run as a user would.
@Suite(.serialized, .timeLimit(.minutes(10))) struct ReportCommandTests {
    @Test func reportRendersEachFormatFromAStoredRun() async throws {
        let folder = TestFolders.root.appendingPathComponent("strain-report-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let run = folder.appendingPathComponent("run.json").path
        try FileManager.default.copyItem(atPath: ReportTests.fixturePath, toPath: run)
        for format in ["html", "md", "junit", "json"] {
            let result = try await StrainBinary.run(["report", run, "--format", format])
            #expect(result.status == 0, "\(format): \(result.stderr)")
        }
        // Through the binary, each file is the in-process render the golden files hold.
        for (file, golden) in [("report.html", "report.html"), ("summary.md", "summary.md"), ("junit.xml", "junit.xml")] {
            let written = try? String(contentsOf: folder.appendingPathComponent(file), encoding: .utf8)
            let expected = try String(contentsOf: ReportTests.fixtures.appendingPathComponent("golden").appendingPathComponent(golden), encoding: .utf8)
            #expect(written != nil, "\(file) is written beside run.json")
            #expect(written == expected, "\(file) is what Fixtures/golden/\(golden) holds")
        }
        let rewritten = try RunRecordFile.read(from: folder.appendingPathComponent("run.normalized.json").path)
        #expect(rewritten.trials.map(\.id) == (try ReportTests.fixture()).trials.map(\.id), "--format json rewrites the same run")
        let toStandardOutput = try await StrainBinary.run(["report", run, "--format", "md", "--out", "-"])
        #expect(toStandardOutput.stdout.hasPrefix("# Strain run: fixture"))
    }

    @Test func anOlderSchemaVersionStillRendersAndAnUnsupportedOneFailsWithExitCode2() async throws {
        let folder = TestFolders.root.appendingPathComponent("strain-versions-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        var json = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: ReportTests.fixturePath))) as! [String: Any]

        // Version 1 had no watchdog records.
        json["schemaVersion"] = 1
        var suite = json["suite"] as! [String: Any]
        suite["stallSeconds"] = nil
        json["suite"] = suite
        json["trials"] = (json["trials"] as! [[String: Any]]).map { trial in
            var trial = trial
            for key in ["dump", "stall", "threadTimeline", "capVerdicts"] { trial[key] = nil }
            return trial
        }
        let old = folder.appendingPathComponent("old.json")
        try JSONSerialization.data(withJSONObject: json).write(to: old)
        let rendered = try await StrainBinary.run(["report", old.path, "--format", "html", "--out", folder.appendingPathComponent("old.html").path])
        #expect(rendered.status == 0, "\(rendered.stderr)")

        json["schemaVersion"] = 99
        let future = folder.appendingPathComponent("future.json")
        try JSONSerialization.data(withJSONObject: json).write(to: future)
        let refused = try await StrainBinary.run(["report", future.path])
        #expect(refused.status == 2)
        #expect(refused.stderr.contains("schema version 99 is not supported; this Strain reads versions 1 to \(RunRecord.currentSchemaVersion)"), "\(refused.stderr)")

        let missing = try await StrainBinary.run(["report", folder.appendingPathComponent("nothing.json").path])
        #expect(missing.status == 2)
        #expect(missing.stderr.contains("no such file"), "\(missing.stderr)")
    }
}

/// Checks an XML file against an XML Schema with Python's `xmlschema` (installed by .ci/run).
enum XMLSchemaCheck {
    static func validate(_ path: String, schema: String) async throws -> (valid: Bool, output: String) {
        let (status, output) = try await Tool.run(["python3", "-c", "import sys, xmlschema; xmlschema.XMLSchema(sys.argv[1]).validate(sys.argv[2])", schema, path])
        return (status == 0, output)
    }
}

/// summary.md fits a pull-request comment, whatever the run.
@Suite struct MarkdownCapTests {
    /// The fixture's trials copied under `copies` parameter values each: a run whose
    /// summary.md would run to hundreds of kilobytes.
    static func largeRun(copies: Int) throws -> RunRecord {
        var run = try ReportTests.fixture()
        let original = run.trials
        run.trials = (0..<copies).flatMap { copy in
            original.map { trial in
                var trial = trial
                trial.id.key.parameters.append(TrialKey.Parameter(name: "copy", value: String(copy)))
                trial.index = copy * original.count + trial.index
                return trial
            }
        }
        return run
    }

    @Test func aLongSummaryIsCutToFitAPullRequestCommentKeepingWhatFailedAndNamingWhatItLeftOut() throws {
        let run = try Self.largeRun(copies: 60)
        #expect(MarkdownReport.full(run).count > 200_000, "the uncut summary is long")
        let markdown = MarkdownReport.render(run)
        #expect(markdown.count <= 65_536 && markdown.count <= MarkdownReport.characterLimit, "\(markdown.count)")
        #expect(markdown.hasPrefix("# Strain run: fixture\n"))
        #expect(markdown.contains("## What failed\n"), "the answer stays")
        let note = try #require(markdown.components(separatedBy: "\n---\n\n_Cut to fit a pull-request comment (65,000 characters): ").last, "\(markdown.suffix(500))")
        #expect(note.range(of: #"^[0-9]+ sections left out \(“"#, options: .regularExpression) != nil, "\(note)")
        #expect(note.hasSuffix("The whole report is report.html, and every number is in run.json._\n"), "\(note)")
        // Whole sections only: every kept table is complete (a section either is there with its end or not at all).
        #expect(markdown.components(separatedBy: "```").count % 2 == 1, "no code block cut in half")
    }

    @Test func aLongStallsSectionKeepsTheStallsThatFitAndSaysHowManyMoreReportHTMLHas() throws {
        // Scenarios/starvation.yaml's summary.md left its whole Stalls section out (over
        // 48,000 characters of dumps): the stalls are what that suite is for. A section of
        // folded entries that does not fit now keeps the entries that do.
        let entry = { (index: Int) in "<details><summary>stall \(index)</summary>\n\n```\n" + String(repeating: "frame\n", count: 150) + "```\n\n</details>\n\n" }
        let text = "# Strain run: s\n\n## What failed\n\n- x\n\n## Outcomes\n\n| a |\n| --- |\n\n## Stalls\n\n12 stalls.\n\n"
            + (0..<120).map(entry).joined() + "## Environment\n\n" + String(repeating: "e", count: 30_000) + "\n"
        #expect(text.count > 100_000)
        let markdown = MarkdownReport.render(fromText: text)
        #expect(markdown.count <= MarkdownReport.characterLimit, "\(markdown.count)")
        let stalls = try #require(markdown.components(separatedBy: "\n## Stalls\n").dropFirst().first, "the stalls stay: \(markdown.suffix(600))")
        let kept = stalls.components(separatedBy: "<details><summary>").count - 1
        #expect(kept >= 40 && kept < 120, "\(kept)")
        #expect(stalls.hasPrefix("\n12 stalls.\n\n<details><summary>stall 0</summary>"), "its head and its first entries, in order")
        #expect(stalls.contains("_… and \(120 - kept) more in report.html._"), "\(stalls.suffix(300))")
        #expect(markdown.contains("1 section left out (“Environment”); 1 cut short (“Stalls”: \(kept) of 120 kept)"), "\(markdown.suffix(400))")
        #expect(markdown.components(separatedBy: "```").count % 2 == 1, "no code block cut in half")
        #expect(markdown.components(separatedBy: "<details>").count == markdown.components(separatedBy: "</details>").count, "every fold closed")
    }

    @Test func aSummaryUnderTheLimitIsNotTouched() throws {
        let run = try ReportTests.fixture()
        #expect(MarkdownReport.render(run) == MarkdownReport.full(run))
        #expect(!MarkdownReport.render(run).contains("_Cut to fit"))
    }
}

/// Chart labels that say what they show.
@Suite struct ChartLabelTests {
    @Test func aQuarterSecondStepIsLabelledWithTwoDecimalsAndWholeStepsWithNone() {
        #expect(ChartAxis.decimals(for: 0.25) == 2, "0.25 s ticks read 0.25, 0.50, 0.75")
        #expect(ChartAxis.decimals(for: 0.2) == 1)
        #expect(ChartAxis.decimals(for: 0.5) == 1)
        #expect(ChartAxis.decimals(for: 1) == 0 && ChartAxis.decimals(for: 5) == 0 && ChartAxis.decimals(for: 20) == 0)
        #expect(ChartAxis.decimals(for: 0.001) == 3)
        #expect(ChartAxis.decimals(for: 0.0025) == 4)
    }

    @Test func aLongLegendIsCutWithAnEllipsisAndAShortOneIsLeftAlone() {
        #expect(SVGChart.legend("task-executor(64, 512KiB)") == "task-executor(64, 512Ki…")
        #expect(SVGChart.legend("task-executor(64, 512KiB)").count == 24)
        #expect(SVGChart.legend("thread(512KiB)") == "thread(512KiB)")
    }
}
