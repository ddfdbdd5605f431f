import Foundation
import StrainGate
import StrainRecords
import Testing

/// The gate's outputs as a reader meets them: every repetition drawn, each effect size
/// named for what it is, the rows a summary counts really there, inconclusive rows
/// named in the terminal, and each side's run pointed to.
struct GateReportReadingTests {
    /// A page's text without the spans that keep hyphenated words whole.
    static func readable(_ html: String) -> String {
        html.replacing(/<span class="nb">([^<]*)<\/span>/) { String($0.1) }.replacingOccurrences(of: "<wbr>", with: "")
    }

    /// A 30 % slower row and 11 rows slower by too little to prove at 3 repetitions.
    static func report() throws -> GateReport {
        let slow = Fake.key()
        let old = Fake.walls(10, center: 0.05).enumerated().map { Fake.trial(slow, repetition: $0.offset + 1, wall: $0.element) }
        let new = Fake.walls(10, center: 0.065, salt: 5).enumerated().map { Fake.trial(slow, repetition: $0.offset + 1, wall: $0.element) }
        let few = (1...11).map { Fake.key("few-\($0)", []) }
        let fewOld = few.flatMap { key in (1...3).map { Fake.trial(key, repetition: $0, wall: 0.010 + Double($0) * 0.0001) } }
        let fewNew = few.flatMap { key in (1...3).map { Fake.trial(key, repetition: $0, wall: 0.013 + Double($0) * 0.0001) } }
        var report = try Gate.compare(baseline: Fake.run(old + fewOld), candidate: Fake.run(new + fewNew), options: GateOptions(mode: .interleaved))
        report.runFiles = ["baseline-run.json", "candidate-run.json"]
        return report
    }

    @Test func theHTMLDrawsEveryRepetitionOfEachSideAsADot() throws {
        let report = try Self.report()
        let html = report.renderHTML()
        let failing = try #require(html.components(separatedBy: "<section id=\"failing\">").dropFirst().first?.components(separatedBy: "</section>").first)
        // One failing row (wall) of 10 repetitions a side: 10 grey dots above, 10 below.
        #expect(failing.components(separatedBy: "<circle class=\"baseline\"").count - 1 == 10, "\(failing)")
        #expect(failing.components(separatedBy: "<circle class=\"candidate\"").count - 1 == 10, "\(failing)")
        let wall = try #require(report.rows.first { $0.verdict == .regressed }?.metrics.first { $0.metric == "wall" })
        #expect(wall.baselineSamples?.count == 10 && wall.candidateSamples?.count == 10)
        // The slowest candidate sits at the right edge of the shared scale.
        #expect(failing.contains("cx=\"146.0\""), "\(failing)")
    }

    /// A file name or an option a reader copies is never broken at its hyphen on a
    /// phone (`baseline-` / `run.json`, `--` / `out` at 400 px).
    @Test func theHTMLKeepsHyphenatedNamesWhole() throws {
        let html = try Self.report().renderHTML()
        #expect(html.contains(">baseline-run.json</a>") == false && html.contains("><span class=\"nb\">baseline-run.json</span></a>"), "\(html)")
        // `--out` inside the command it belongs to, kept whole (`strain report` / `<file> --out <page.html>` broke).
        #expect(html.contains(/<span class="nb">[^<]*--out &lt;page\.html&gt;[^<]*<\/span>/) && html.contains(".nb{white-space:nowrap}"), "\(html)")
    }

    @Test func eachEffectSizeSaysWhatItIs() throws {
        let report = try Self.report()
        #expect(report.renderHTML().contains("<th>baseline → candidate (change of the median)</th>"))
        // Where there is no ratio (a count, an outcome) the column says why: its heading says so.
        #expect(report.renderHTML().contains("<th>ratio, Hodges–Lehmann (95% interval), or why none</th>"))
        #expect(report.renderMarkdown().contains("| median change | ratio, Hodges–Lehmann (95% interval), or why none |"))
        #expect(report.renderText().contains("Hodges–Lehmann ratio 1.29"), "\(report.renderText())")
    }

    /// The strips say what they show where a screenshot, a print or a pull request keeps
    /// it: each strip's scale written at its ends, and which colour is which side above
    /// each table (a tooltip alone showed in none of them).
    @Test func eachSamplesStripWritesItsScaleAndThePageKeysItsColours() throws {
        let report = try Self.report()
        let html = report.renderHTML()
        let wall = try #require(report.rows.first { $0.verdict == .regressed }?.metrics.first { $0.metric == "wall" })
        let all = (wall.baselineSamples ?? []) + (wall.candidateSamples ?? [])
        let strip = GateReport.samples(wall)
        let ends = strip.matches(of: /<text x="[0-9.]+" y="37"(?: text-anchor="end")?>([^<]+)<\/text>/).map { String($0.1) }
        #expect(ends == [Gate.format(all.min()!, wall.unit), Gate.format(all.max()!, wall.unit)], "\(strip)")
        #expect(strip.contains("<path class=\"scale\""), "the scale's line under the dots: \(strip)")
        // Ends that read the same are written once: `14.8 MiB … 14.8 MiB`.
        var close = wall
        (close.baselineSamples, close.candidateSamples) = ([0.05000, 0.05001], [0.05002])
        let once = GateReport.samples(close)
        #expect(once.contains(">all 50.0 ms</text>") && !once.contains("text-anchor=\"end\""), "\(once)")
        #expect(once.contains("repetitions, all 50.0 ms\"") && once.matches(of: /cx="75\.0"/).count == 3, "one value, its dots at the middle: \(once)")
        // A table with such a strip gives it as the legend's example.
        var row = try #require(report.rows.first { $0.verdict == .regressed })
        row.metrics = [close]
        let table = GateReport.table([row], failingOnly: false)
        #expect(table.contains("written once: <code>all 50.0 ms</code>)."), "\(table.prefix(900))")
        for section in ["failing", "other"] {
            let body = try #require(html.components(separatedBy: "<section id=\"\(section)\">").dropFirst().first?.components(separatedBy: "<table").first, "\(section)")
            let legend = body.replacingOccurrences(of: #"<[^>]+>"#, with: "", options: .regularExpression)
            #expect(legend.contains(" baseline on the upper row, ") && legend.contains(" candidate on the lower ") && legend.contains("written at its ends"), "\(section): \(legend)")
            // No strip here reads the same throughout: the legend gives no example of one (it
            // said `all 14.8 MiB` on every page, re-trial 35k).
            #expect(!legend.contains("written once"), "\(section): \(legend)")
            #expect(body.contains("<circle class=\"baseline legend-dot\"") && body.contains("<circle class=\"candidate legend-dot\""), "the key's dots in the strips' colours: \(body)")
        }
    }

    /// On a phone the rows stack: every cell of a metric's row says which column it is,
    /// so the reason (the last columns) is on screen, not past the right edge.
    @Test func onAPhoneEveryCellOfARowNamesItsColumnAndTheRowsStack() throws {
        let html = try Self.report().renderHTML()
        let rows = html.components(separatedBy: "<tr class=\"").dropFirst().filter { !$0.hasPrefix("key") && !$0.hasPrefix("evidence") }
        #expect(!rows.isEmpty)
        for row in rows {
            let cells = row.components(separatedBy: "</tr>")[0].matches(of: /<td(?: class="[^"]*")?(?: data-label="([^"]*)")?(?: colspan="\d+")?>/).map { $0.1.map(String.init) }
            #expect(cells.count == 8 && cells.compactMap { $0 } == GateReport.columns, "\(row.prefix(400))")
        }
        let phone = try #require(GateReport.css.components(separatedBy: "@media (max-width:600px){").dropFirst().first)
        #expect(phone.contains("table.rows,table.rows tbody,table.rows tr,table.rows th,table.rows td{display:block"), "\(phone)")
        #expect(phone.contains("table.rows thead{display:none}") && phone.contains("content:attr(data-label)"), "\(phone)")
    }

    /// A counted gate runs each build's repetitions in one run: its header says that, not
    /// that the builds' repetitions alternated; the scenarios it timed in rounds are named.
    @Test func aCountedGatesHeaderSaysWhatRanNotThatRepetitionsAlternated() throws {
        var report = try Self.report()
        #expect(report.renderHTML().contains("Interleaved A/B: both builds ran in one job, repetitions alternating."), "a gate.json without a schedule: rounds")
        report.schedule = GateSchedule(counted: true, together: true, repetitions: 3, timedScenarios: ["queue-flood"])
        let sentence = "Counted A/B: both builds ran in one job, each its 3 repetitions in one run, the two at once"
        for (name, text) in [("html", Self.readable(report.renderHTML())), ("md", report.renderMarkdown())] {
            #expect(text.contains(sentence), "\(name): \(text.prefix(900))")
            #expect(!text.contains("repetitions alternating"), "\(name)")
            #expect(text.contains("Not countable, so timed in alternating rounds: queue-flood."), "\(name): \(text.prefix(900))")
        }
        let text = report.renderText()
        #expect(text.hasPrefix("Gate (counted A/B, each build's repetitions in one run) on s: "), "\(text.prefix(300))")
        #expect(text.contains("\n  Not countable, so timed in alternating rounds: queue-flood.\n"), "\(text.prefix(400))")
        report.schedule = GateSchedule(counted: false, together: false, repetitions: 3)
        #expect(report.renderMarkdown().contains("Interleaved A/B: both builds ran in one job, repetitions alternating."))
    }

    /// A row whose candidate crashed is annotated where it crashed, when the evidence has
    /// the frame's file and line inside the workspace, and names the frame and the suite's entry.
    @Test func aCrashedRowsAnnotationIsAtItsFrameAndNamesIt() throws {
        var report = try Self.report()
        let index = try #require(report.rows.firstIndex { $0.verdict == .regressed })
        report.rows[index].verdict = .outcomeChanged
        report.rows[index].outcomeReason = "crashed(SIGSEGV) ×1, expected completed"
        report.rows[index].suiteLine = 5
        report.rows[index].evidence = TrialEvidence(trial: TrialID(key: report.rows[index].key, repetition: 1), report: "candidate/report.html", anchor: "trial-x-r1",
                                                    line: "crashed(SIGSEGV)", place: FailurePlace(file: "/repo/Sources/App/Store.swift", line: 42, label: "at", frame: "Store.save() at Store.swift:42:7 (app)"))
        report.suitePath = "/repo/ci/suite.yaml"
        let error = try #require(report.renderGitHub(workspace: "/repo").split(separator: "\n").first { $0.hasPrefix("::error ") })
        #expect(error.hasPrefix("::error file=Sources/App/Store.swift,line=42,title=Strain gate%3A "), "\(error)")
        #expect(error.hasSuffix("%0Aat Store.save() at Store.swift:42:7 (app)%0Aplanned by ci/suite.yaml:5"), "\(error)")
        // Outside the workspace: at the suite's entry, the frame still named.
        let outside = try #require(report.renderGitHub(workspace: "/elsewhere").split(separator: "\n").first { $0.hasPrefix("::error ") })
        #expect(outside.hasPrefix("::error file=/repo/ci/suite.yaml,line=5,") && outside.hasSuffix("%0Aat Store.save() at Store.swift:42:7 (app)"), "\(outside)")
    }

    @Test func theMarkdownCountsTheLinesItFoldsAway() throws {
        let markdown = try Self.report().renderMarkdown()
        let folded = try #require(markdown.components(separatedBy: "<details><summary>").dropFirst().first)
        let summary = try #require(folded.components(separatedBy: "</summary>").first)
        let table = folded.components(separatedBy: "</details>")[0].split(separator: "\n").filter { $0.hasPrefix("| ") && !$0.hasPrefix("| verdict") }
        #expect(summary.hasPrefix("\(table.count) other lines of 11 trials"), "\(summary) against \(table.count) lines")
    }

    @Test func theTerminalNamesTheInconclusiveRowsItCanAndCountsTheRest() throws {
        let text = try Self.report().renderText()
        #expect(text.contains("11 rows inconclusive"), "\(text)")
        #expect(text.contains("    few-1 main linux: wall (too few repetitions)"), "\(text)")
        let named = text.split(separator: "\n").filter { $0.hasPrefix("    ") && $0.contains(": wall (") }
        #expect(named.count == 8, "\(text)")
        #expect(text.contains("    and 3 more: gate.md and gate.html name each"), "\(text)")
    }

    @Test func everyOutputPointsToEachSidesRun() throws {
        let report = try Self.report()
        #expect(Self.readable(report.renderHTML()).contains("<a href=\"baseline-run.json\">baseline-run.json</a>, <a href=\"candidate-run.json\">candidate-run.json</a>"))
        #expect(report.renderMarkdown().contains("`baseline-run.json`, `candidate-run.json`; `strain report <file>` renders either"))
        // gate.html draws the values of the metrics that did not stay unchanged, and says no more (a re-trial
        // read "every repetition's value" and found none on an all-unchanged A/A).
        #expect(report.renderMarkdown().contains("gate.html shows every repetition's value of each metric that did not stay unchanged."))
        #expect(report.renderText().contains("each side's run: baseline-run.json, candidate-run.json"))
        // A cross-run gate keeps the candidate's run only: "each side's run" named one file.
        var one = report
        one.runFiles = ["candidate-run.json"]
        #expect(one.renderText().contains("  the candidate's run: candidate-run.json (strain report renders it)"), "\(one.renderText())")
        #expect(one.renderMarkdown().contains("The candidate's run (traces, dumps): `candidate-run.json`; `strain report <file>` renders it;"))
        #expect(Self.readable(one.renderHTML()).contains("<p>The candidate's run, with its traces and dumps: "))
    }

    @Test func theCommentNamesEachSidesBinaryAndRunWithoutTheRunnersFolders() throws {
        // The CI recipe copies each build under $RUNNER_TEMP and gates from the workspace.
        var report = try Self.report()
        report.baselineBuild = BuildIdentity(executablePath: "/__w/_temp/strain-base-bin/order-strain", buildID: "aaaaaaaaaaaaaaaa", contentHash: nil)
        report.candidateBuild = BuildIdentity(executablePath: "/__w/_temp/strain-head-bin/order-strain", buildID: "bbbbbbbbbbbbbbbb", contentHash: nil)
        report.runFiles = ["/__w/orders/orders/strain-reports/run/run.json"]
        let markdown = report.renderMarkdown(directory: "/__w/orders/orders")
        #expect(!markdown.contains("/__w/"), "\(markdown)")
        #expect(markdown.contains("build `aaaaaaaaaaaa` (`strain-base-bin/order-strain`)") && markdown.contains("build `bbbbbbbbbbbb` (`strain-head-bin/order-strain`)"),
                "\(markdown)")
        #expect(markdown.contains("`strain-reports/run/run.json`"), "\(markdown)")
        // The job's log keeps the whole paths.
        #expect(report.renderText().contains("/__w/_temp/strain-base-bin/order-strain"), "\(report.renderText())")
    }
}

/// What the gate calls a different suite.
struct SuiteDifferenceTests {
    static func suite(repetitions: Int, timeout: Double = 30) -> ResolvedSuite {
        ResolvedSuite(name: "smoke", description: nil, path: "Scenarios/smoke.yaml", repetitions: repetitions, timeoutSeconds: timeout, stallSeconds: nil,
                      profiles: ["linux"], runs: [ResolvedRun(scenario: "noop", parameters: [], strategies: ["main"], profiles: ["linux"], repetitions: repetitions,
                                                              timeoutSeconds: timeout, stallSeconds: nil, expect: [:])],
                      textHash: "same")
    }

    /// A gate of two runs under different stack limits warns: an overflow on the main
    /// thread flipped under `ulimit -s 512` and was blamed on the code, "the same build on
    /// both sides" (re-trial 35q, F3).
    @Test func aGateOfRunsUnderDifferentStackLimitsWarnsThatOutcomesCanChangeForThatAlone() throws {
        var old = Fake.environment, new = Fake.environment
        old.rlimits = ["stack": 8 << 20]
        new.rlimits = ["stack": 512 << 10]
        let trials = [Fake.trial(Fake.key(), repetition: 1)]
        let report = try Gate.compare(baseline: Fake.run(trials, environment: old), candidate: Fake.run(trials, environment: new),
                                      options: GateOptions(mode: .crossRun, allowFingerprintMismatch: true))
        #expect(report.warnings == ["The runs' stack limits differ (ulimit -s: 8 MiB for the baseline, 512 KiB for the candidate): "
            + "an outcome on the main thread, whose stack that limit sets, can change for that alone."], "\(report.warnings ?? [])")
        #expect(report.renderText().contains("warning: the runs' stack limits differ"), "\(report.renderText())")
        let same = try Gate.compare(baseline: Fake.run(trials, environment: old), candidate: Fake.run(trials, environment: old),
                                    options: GateOptions(mode: .crossRun, allowFingerprintMismatch: true))
        #expect(same.warnings == nil, "\(same.warnings ?? [])")
    }

    @Test func anotherCountOfRepetitionsIsNotAnotherSuiteButAnotherTimeoutIs() {
        // Strain's CI gates a 1-repetition run against its 3-repetition smoke baseline.
        #expect(SuiteDifference.warning(baseline: Self.suite(repetitions: 3), candidate: Self.suite(repetitions: 1)) == nil)
        let timeout = SuiteDifference.warning(baseline: Self.suite(repetitions: 3), candidate: Self.suite(repetitions: 1, timeout: 20))
        #expect(timeout?.contains("timeout 30 s → 20 s") == true, "\(timeout ?? "no warning")")
        #expect(timeout?.contains("repetitions") == false, "\(timeout ?? "")")
    }
}

/// What the files say of rows that decide nothing, and the counts every output gives.
extension GateReportReadingTests {
    /// gate.md and gate.html gave an inconclusive timing row only its estimate (`×0.949`)
    /// in the column headed "or why none", and only the terminal said "too few
    /// repetitions": each file now gives every inconclusive row its reason beside it.
    @Test func everyInconclusiveRowGivesItsReasonInGateMdAndGateHTML() throws {
        let report = try Self.report()
        let markdownRows = report.renderMarkdown().split(separator: "\n").filter { $0.hasPrefix("| inconclusive |") }
        #expect(markdownRows.count == 11, "\(markdownRows)")
        for row in markdownRows {
            #expect(row.contains("| ×1.") && row.contains("; too few repetitions to judge: needs ≥ "), "\(row)")
            // Not judged, no q: `–` as gate.html writes it, not an empty cell (re-trial 35j).
            let cells = row.split(separator: "|", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
            #expect(cells.count > 6 && cells[6] == "–", "\(row)")
        }
        let htmlRows = Self.readable(report.renderHTML()).components(separatedBy: "<td data-label=\"verdict\">inconclusive</td>").dropFirst()
            .map { $0.components(separatedBy: "</tr>")[0] }
        #expect(htmlRows.count == 11)
        for row in htmlRows {
            let effect = try #require(row.firstMatch(of: /<td class="effect"[^>]*>([^<]*)<\/td>/).map { String($0.1) }, "\(row)")
            #expect(effect.hasPrefix("×1.") && effect.contains("; too few repetitions to judge: needs ≥ "), "\(effect)")
            #expect(row.contains(">–</td>"), "\(row)")
        }
    }

    /// gate.md said "0 rows unchanged" (trials) where the terminal said "5 unchanged"
    /// (counted metrics): both were true and read as a contradiction. Every output gives
    /// the same sentence, trials and then their metrics, each by verdict.
    @Test func theTerminalGateMdAndGateHTMLGiveTheSameCountsOfTrialsAndMetrics() throws {
        let report = try Self.report()
        let metrics = report.rows.flatMap(\.metrics)
        let inconclusive = metrics.filter { $0.verdict == .inconclusive }.count
        #expect(report.tally.hasPrefix("12 trial keys compared, 0 unchanged in every metric and outcome (a key with an inconclusive metric is not counted unchanged); the \(metrics.count) metrics of all 12: 1 regressed, \(inconclusive) inconclusive"),
                "\(report.tally)")
        #expect(report.renderText().contains("\n  \(report.tally)\n"), "\(report.renderText())")
        #expect(report.renderMarkdown().contains("\n\(report.tally) A timing row can fail only"), "\(report.renderMarkdown().suffix(500))")
        #expect(Self.readable(report.renderHTML()).contains("<p>\(report.tally)</p>"))
        #expect(!report.renderMarkdown().contains("rows unchanged") && !report.renderHTML().contains("unchanged rows"))
    }
}
