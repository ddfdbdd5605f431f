import Foundation
import StrainKit
@testable import StrainReports
import StrainText
import Testing

/// The one report model every format lays out: what one view shows, the others show too.
@Suite struct RunReportTests {
    /// A section's heading as summary.md writes it (`## Traces`), for the sections
    /// that have one heading per section.
    static func markdownHeading(_ section: any TextSection) -> String? {
        section.markdown().split(separator: "\n").first.map(String.init)
    }

    @Test func everySectionSummaryMdShowsTheTerminalShowsTooUnderTheSameHeading() throws {
        let report = RunReport(try ReportTests.fixture())
        let style = TerminalStyle(color: false)
        var shown = 0
        for section in report.sections where !section.markdown().isEmpty {
            // The terminal leaves the environment to the files and ends with what failed instead;
            // summary.md names the scenarios' own metrics under one heading and leaves their
            // tables, which the terminal prints, to report.html.
            if section is EnvironmentSection || section is FailedSection { continue }
            if section is MetricsSection {
                #expect(section.markdown().hasPrefix("## The scenarios' own metrics\n\n") && section.markdown().contains("in report.html"), "\(section.markdown())")
                continue
            }
            let lines = section.terminalLines(style)
            #expect(!lines.isEmpty, "\(type(of: section)) is in summary.md but not in the terminal")
            // Markdown escapes `_`, `*` and `|` with a backslash.
            let heading = try #require(Self.markdownHeading(section)).replacingOccurrences(of: "## ", with: "").replacingOccurrences(of: "\\", with: "")
            #expect(lines.contains(heading), "\(type(of: section)): \(heading) in \(lines.prefix(3))")
            shown += 1
        }
        #expect(shown >= 6, "the fixture has tables, verdicts, traces, stalls and a bisect: \(shown)")
    }

    @Test func everyViewNamesTheSameFailedKeys() throws {
        let run = try ReportTests.fixture()
        let report = RunReport(run)
        let keys = report.failed.entries.map(\.key.key.description)
        #expect(keys.count >= 2, "\(keys)")
        let terminal = TerminalReport(color: false).render(report)
        let markdown = MarkdownReport.render(report).replacingOccurrences(of: "\\", with: "")
        let html = HTMLReport.render(report)
        let junit = JUnitReport.render(report)
        let closing = terminal.components(separatedBy: "\n").suffix(keys.count)
        for key in keys {
            #expect(closing.contains { $0.hasPrefix("  \(key): ") }, "the terminal ends with \(key)")
            #expect(markdown.contains("- **\(key)**: "), "summary.md's What failed names \(key)")
            #expect(TestFiles.readable(html).contains("<li>\(HTMLText.escape(key)): "), "the page's answer names \(key)")
        }
        let failures = junit.matches(of: /<(failure|error) message=/).count
        #expect(failures == run.trials.filter { !$0.expected }.count, "junit.xml has a failure or error per unexpected trial")
    }
}

/// summary.md answers first, as report.html's answer box: what failed, then why and
/// what to do, and the stalls a line each, before any table.
@Suite struct SummaryAnswerTests {
    @Test func summaryMdSaysWhyAndWhatToDoAndNamesTheStallsRightAfterWhatFailed() throws {
        let markdown = MarkdownReport.render(try ReportTests.fixture())
        let failed = try #require(markdown.range(of: "## What failed\n"))
        let why = try #require(markdown.range(of: "## Why, and what to do\n"), "no answer block: the reasons sat after every table")
        let firstTable = try #require(markdown.range(of: "\n| "))
        #expect(failed.lowerBound < why.lowerBound && why.lowerBound < firstTable.lowerBound)
        let block = String(markdown[why.upperBound...].components(separatedBy: "\n## ")[0])
        #expect(block.contains("Deep but finite: overflows 512 KiB and completes on 8 MiB"), "the stack verdict: \(block)")
        #expect(block.contains("sync-cycle") && block.contains("deadlocked") && block.contains("holds strain.sync-cycle.0"), "the stall and its wait cycle: \(block)")
        // Said once: the verdicts are not repeated under a heading of their own further down.
        #expect(markdown.components(separatedBy: "Deep but finite: overflows 512 KiB and completes on 8 MiB").count - 1 == 2, "one line per verdict, two verdicts")
        #expect(!markdown.contains("## Stack verdicts"))
    }

    /// report.html says each stack verdict once, in its answer box, as summary.md does
    /// (it said each again under Verdicts, without its outcome).
    @Test func reportHTMLSaysEachStackVerdictOnce() throws {
        let html = TestFiles.readable(HTMLReport.render(try ReportTests.fixture()))
        #expect(html.components(separatedBy: "Deep but finite: overflows 512 KiB and completes on 8 MiB").count - 1 == 2, "one line per verdict, two verdicts")
        let verdicts = html.range(of: "<section id=\"verdicts\">").map { String(html[$0.lowerBound...].prefix { $0 != "§" }.components(separatedBy: "</section>")[0]) } ?? ""
        #expect(!verdicts.contains("Deep but finite"), "\(verdicts)")
        #expect(html.contains("href=\"#verdicts\"") == !verdicts.isEmpty)
    }

    /// Every item of "Why, and what to do" is headed `KEY: OUTCOME`, a stall's, a
    /// failing key's and a stack verdict's alike: the verdict's key in brackets as
    /// every key is written (it read `cyclic-graph (operation=…)`), and no `×1`
    /// (a failing key had it, a stall did not).
    @Test func everyAnswerIsHeadedByItsKeyAndOutcomeInOneForm() throws {
        let run = try ReportTests.fixture()
        let answer = RunReport(run).answer
        let headings = answer.advice.map(\.bold) + answer.stalls.map(\.heading)
        #expect(headings.count >= 3, "\(headings)")
        for heading in headings {
            #expect(heading.wholeMatch(of: /[a-z-]+(\[[^\]]*\])?( .+ (linux|ios|macos))?: [a-zA-Z]+(\([A-Z0-9]+\))?( ×[0-9]+)?(, .+)?/) != nil, "\(heading)")
            #expect(!heading.hasSuffix(" ×1") && !heading.contains(" ("), "\(heading)")
        }
        // A stack verdict spans strategies and profiles: its heading names those that ran out (re-trial 35m: it named none).
        #expect(headings.contains { $0.hasPrefix("cyclic-graph[") && $0.hasSuffix("] thread(512KiB) linux: stackOverflow") }, "\(headings)")
        // Each view bolds exactly those headings, the stalls' included (they read `**KEY**: deadlocked — …`).
        let markdown = MarkdownReport.render(run)
        let html = TestFiles.readable(HTMLReport.render(run))
        for heading in headings {
            #expect(markdown.contains("- **\(MarkdownReport.escape(heading))**: "), "summary.md: \(heading)")
            #expect(html.contains("<b>\(HTMLText.escape(heading))</b>"), "report.html: \(heading)")
        }
    }
}

/// Thread names as the kernel keeps them are cut to 15 characters; a GCD worker's is
/// the tail of its root queue's label, which the reports write whole where it is known.
@Suite struct ThreadNameTests {
    @Test func aGCDWorkersCutNameIsWrittenAsItsRootQueuesLabelInEveryFormat() throws {
        let run = try ReportTests.fixture()
        let names = Set(run.trials.compactMap(\.dump).flatMap(\.groups).flatMap(\.threads).map(\.name))
        #expect(names.contains("-qos.overcommit"), "the fixture's GCD workers, as /proc names them: \(names)")
        let markdown = MarkdownReport.render(run)
        let terminal = TerminalReport(color: false).render(run)
        let html = HTMLReport.render(run)
        for (format, text) in [("summary.md", markdown), ("terminal", terminal), ("report.html", html)] {
            #expect(!text.contains("[-qos.overcommit") && !text.contains(" -qos.overcommit "), "\(format) writes the cut name")
            #expect(text.contains("com.apple.root.…-qos.overcommit"), "\(format) names the overcommit pool")
        }
    }
}

/// A libdispatch worker that ran Strain's work on a serial queue of its own is named by
/// its root queue's whole label, which the kernel's 15 characters cut to the same
/// `-qos.overcommit` for all six overcommit pools.
@Suite struct OvercommitWorkerNameTests {
    @Test func aSerialQueueWorkerThatRanStrainsWorkIsNamedByItsWholeRootQueueLabelInTheDump() async throws {
        let (result, run, out) = try await StrainBinary.runSuite("""
        name: overcommit-names
        timeout: 20s
        stall: 400ms
        runs:
          - scenario: thread-explosion
            parameters: {items: 300, block: semaphore}
            strategies: [gcd-serial-queues]
            expect: starved
        """, timeout: 60)
        #expect(result.status == 0, "\(result.stdout)\n\(result.stderr)")
        let trial = try #require(run?.trials.first)
        let dump = try #require(trial.dump, "\(trial.outcome)")
        let blocked = try #require(dump.groups.first { $0.inWork }, "\(dump.groups.map(\.summary))")
        #expect(blocked.count > 100, "the blocked workers of the overcommit pool: \(blocked.count)")
        let names = Set(blocked.threads.map(\.name))
        // A private serial queue without a target or QoS drains on the default QoS's
        // overcommit root queue (libdispatch on Linux never moves it to another root).
        #expect(names == ["com.apple.root.default-qos.overcommit"], "\(names)")
        let summary = TestFiles.read(out + "/summary.md")
        #expect(summary.contains("com.apple.root.default-qos.overcommit") && !summary.contains("com.apple.root.…-qos.overcommit"), "\(summary.prefix(3000))")
    }
}
