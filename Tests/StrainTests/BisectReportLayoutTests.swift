import Foundation
import StrainRecords
import StrainReports
import StrainText
import Testing

/// A bisect's report answers first: the answer before any table, in report.html and
/// summary.md; the probes drawn on the parameter's axis; their tables folded below.
struct BisectReportLayoutTests {
    static func bisectRun() throws -> RunRecord {
        try RunRecordFile.read(from: ReportTests.fixtures.appendingPathComponent("bisect-run.json").path)
    }

    @Test func theHTMLGivesTheAnswerBeforeAnyTableAndNotThePerProbeAdvice() throws {
        let html = HTMLReport.render(try Self.bisectRun())
        let answer = try #require(html.range(of: "<section id=\"bisect\">"), "a bisect section")
        let firstTable = try #require(html.range(of: "<table"))
        let firstScenario = try #require(html.range(of: "class=\"scenario\""))
        #expect(answer.lowerBound < firstTable.lowerBound && answer.lowerBound < firstScenario.lowerBound)
        // The probes' tables are folded under one summary, after the answer.
        let folded = try #require(html.range(of: "<details class=\"probes\"><summary>The probes: "))
        #expect(answer.lowerBound < folded.lowerBound && folded.lowerBound < firstScenario.lowerBound)
        // The bisect already ran it on larger stacks: the answer box does not advise it per probe.
        let head = String(html[..<answer.lowerBound])
        #expect(!head.contains("Run it on a larger stack too"), "\(head)")
    }

    @Test func theHTMLDrawsEachProbedValueOnceColouredByHowItEnded() throws {
        let run = try Self.bisectRun()
        let html = HTMLReport.render(run)
        let search = try #require(run.bisect?.searches.first)
        let trials = Dictionary(uniqueKeysWithValues: run.trials.map { ($0.index, $0) })
        let probed = search.probes.compactMap { trials[$0] }
        let values = Set(probed.compactMap { $0.key.strategy.chosenStackBytes })
        let failedValues = Set(probed.filter { $0.outcome.kind != .completed }.compactMap { $0.key.strategy.chosenStackBytes })
        let svg = try #require(html.components(separatedBy: "<svg class=\"probes\"").dropFirst().first?.components(separatedBy: "</svg>").first)
        // A dot per value (the legend's two dots are the key's, not probes).
        #expect(svg.components(separatedBy: "<circle class=\"probe-ok\"").count + svg.components(separatedBy: "<circle class=\"probe-failed\"").count - 2 == values.count, "\(svg)")
        #expect(svg.components(separatedBy: "class=\"probe-failed\"").count - 1 == failedValues.count, "\(svg)")
        #expect(!failedValues.isEmpty && failedValues.count < values.count)
        // The answer's value is marked on the axis.
        #expect(svg.contains("class=\"probe-answer\""))
    }

    @Test func summaryMdGivesTheAnswerBeforeAnyTableAndFoldsTheProbes() throws {
        let markdown = MarkdownReport.render(try Self.bisectRun())
        let answer = try #require(markdown.range(of: "## Bisect\n"))
        let firstTable = try #require(markdown.range(of: "| strategy |"))
        #expect(answer.lowerBound < firstTable.lowerBound)
        let probes = try #require(markdown.range(of: "## Probes\n\n<details><summary>"))
        #expect(probes.lowerBound < firstTable.lowerBound)
        // Inside the fold the tables are `###`, so the length cap keeps or drops the fold whole.
        let fold = markdown[probes.upperBound...].components(separatedBy: "</details>")[0]
        #expect(!fold.contains("\n## ") && fold.contains("\n### "), "\(fold.prefix(400))")
    }

    /// The answer names its configuration as a trial key does, parameters in the
    /// scenario's order (it read `cyclic-graph (games=4, operation=unarchive, …)`,
    /// sorted by name), in every view.
    @Test func theAnswerNamesItsConfigurationAsTheProbesKeysDo() throws {
        let run = try Self.bisectRun()
        let subject = "cyclic-graph[operation=unarchive, shape=chain, size=1000, players=3, games=4]: "
        #expect(run.trials.first?.key.configuration == String(subject.dropLast(2)))
        #expect(MarkdownReport.render(run).contains("- **\(subject)"))
        #expect(TestFiles.readable(HTMLReport.render(run)).contains("<li><b>cyclic-graph[operation=unarchive, shape=chain, size=1000, players=3, games=4]: "))
        // What `strain bisect` prints at its end (it took the parameters from the record's dictionary, sorted).
        let terminal = TerminalReport(color: false).renderBisect(run)
        #expect(terminal.contains("  \(subject)"), "\(terminal)")
    }

    @Test func aRunThatIsNotOnlyABisectKeepsItsUsualOrder() throws {
        // The golden fixture holds a bisect section beside trials of other scenarios.
        let markdown = MarkdownReport.render(try ReportTests.fixture())
        let failed = try #require(markdown.range(of: "## What failed"))
        let bisect = try #require(markdown.range(of: "## Bisect"))
        #expect(failed.lowerBound < bisect.lowerBound)
        #expect(!markdown.contains("## Probes"))
    }
}

extension BisectReportLayoutTests {
    /// A size bisect has told deep recursion from unbounded: no view repeats, per probe,
    /// the verdict that asks to run it on a larger stack to tell them apart.
    @Test func aBisectsAnswerIsNotFollowedByPerProbeRunItOnALargerStackVerdicts() throws {
        var run = try Self.bisectRun()
        #expect(run.trials.contains { $0.outcome.kind == .stackOverflow }, "the bisect's probes overflowed")
        // As a size bisect probes it: one stack, a parameter value per probe, so each
        // overflowing probe is a configuration of its own with one stack size tried.
        for index in run.trials.indices {
            run.trials[index].parameters["size"] = "\(100 * (index + 1))"
        }
        let probeVerdicts = StackVerdict.verdicts(for: run).filter { $0.kind == .undetermined }
        #expect(probeVerdicts.count >= 2, "each overflowing probe would ask for a larger stack: \(probeVerdicts.map(\.explanation))")
        let views = [("terminal", TerminalReport(color: false).render(run)), ("summary.md", MarkdownReport.render(run)), ("report.html", HTMLReport.render(run))]
        for (name, text) in views {
            #expect(!text.contains("Run it on a larger stack too"), "\(name) repeats the question the bisect answered")
        }
    }
}

extension BisectReportLayoutTests {
    /// Two stack sizes that round alike (1296 and 1304 KiB, both `1.3 MiB`): the verdict
    /// read "overflows 1.3 MiB and completes on 1.3 MiB" (re-trial 35m). They are written exactly.
    @Test func aVerdictOverStacksThatRoundAlikeWritesThemExactly() throws {
        var run = try ReportTests.fixture()
        let overflowed = try #require(run.trials.first { $0.outcome.kind == .stackOverflow && $0.metrics.stackSizeBytes != nil })
        let configuration = Set(overflowed.key.parameters)
        for index in run.trials.indices where run.trials[index].scenario == overflowed.scenario && Set(run.trials[index].key.parameters) == configuration {
            switch run.trials[index].outcome.kind {
            case .stackOverflow: run.trials[index].metrics.stackSizeBytes = 1296 << 10
            case .completed: run.trials[index].metrics.stackSizeBytes = 1304 << 10
            default: break
            }
        }
        let verdict = try #require(StackVerdict.verdicts(for: run).first { $0.scenario == overflowed.scenario && Set($0.key.parameters) == configuration })
        #expect(verdict.explanation.contains("overflows 1296 KiB and completes on 1304 KiB"), "\(verdict.explanation)")
        #expect(!verdict.explanation.contains("1.3 MiB"))
        // Sizes that read apart stay in their short form.
        let plain = try #require(StackVerdict.verdicts(for: try ReportTests.fixture()).first { $0.kind == .deepButFinite })
        #expect(plain.explanation.contains("overflows 512 KiB and completes on 8 MiB"), "\(plain.explanation)")
    }

    /// A verdict's heading names where it ran out in the run's order (the quick start read
    /// `thread(512KiB) linux, thread(64MiB) linux, thread(8MiB) linux`, sorted as text).
    @Test func aVerdictNamesWhereItRanOutInTheRunsOrder() throws {
        var run = try ReportTests.fixture()
        let first = try #require(run.trials.firstIndex { $0.outcome.kind == .stackOverflow })
        var copies = [run.trials[first], run.trials[first]]
        copies[0].id.key.strategy = .thread(stackBytes: 8 << 20)
        copies[1].id.key.strategy = .thread(stackBytes: 64 << 20)
        run.trials.insert(contentsOf: copies, at: first + 1)
        let verdict = try #require(StackVerdict.verdicts(for: run).first { $0.scenario == run.trials[first].scenario && Set($0.key.parameters) == Set(run.trials[first].key.parameters) })
        let original = "\(run.trials[first].key.strategy) \(run.trials[first].key.profile.rawValue)"
        let profile = run.trials[first].key.profile.rawValue
        #expect(Array(verdict.ranOutOn.prefix(3)) == [original, "thread(8MiB) \(profile)", "thread(64MiB) \(profile)"], "\(verdict.ranOutOn)")
    }
}
