import Foundation
import StrainGate
import StrainRecords
import Testing

/// The gate's outputs as a reader meets them: every repetition drawn, each effect size
/// named for what it is, the rows a summary counts really there, inconclusive rows
/// named in the terminal, and each side's run pointed to.
struct GateReportReadingTests {
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
        #expect(failing.contains("cx=\"116.0\""), "\(failing)")
    }

    @Test func eachEffectSizeSaysWhatItIs() throws {
        let report = try Self.report()
        #expect(report.renderHTML().contains("<th>baseline → candidate (change of the median)</th>"))
        #expect(report.renderHTML().contains("<th>ratio, Hodges–Lehmann (95% interval)</th>"))
        #expect(report.renderMarkdown().contains("| median change | ratio, Hodges–Lehmann (95% interval) |"))
        #expect(report.renderText().contains("Hodges–Lehmann ratio 1.29"), "\(report.renderText())")
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
        #expect(report.renderHTML().contains("<a href=\"baseline-run.json\">baseline-run.json</a>, <a href=\"candidate-run.json\">candidate-run.json</a>"))
        #expect(report.renderMarkdown().contains("`baseline-run.json`, `candidate-run.json`; `strain report <file>` renders either"))
        #expect(report.renderText().contains("each side's run: baseline-run.json, candidate-run.json"))
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

    @Test func anotherCountOfRepetitionsIsNotAnotherSuiteButAnotherTimeoutIs() {
        // Strain's CI gates a 1-repetition run against its 3-repetition smoke baseline.
        #expect(SuiteDifference.warning(baseline: Self.suite(repetitions: 3), candidate: Self.suite(repetitions: 1)) == nil)
        let timeout = SuiteDifference.warning(baseline: Self.suite(repetitions: 3), candidate: Self.suite(repetitions: 1, timeout: 20))
        #expect(timeout?.contains("timeout 30 s → 20 s") == true, "\(timeout ?? "no warning")")
        #expect(timeout?.contains("repetitions") == false, "\(timeout ?? "")")
    }
}
