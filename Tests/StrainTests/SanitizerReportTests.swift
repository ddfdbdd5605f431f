import Foundation
import StrainKit
import StrainReports
import Testing

/// A trial's sanitizer reports in every view of a run: the terminal, Markdown and HTML
/// name each race with both accesses' places, and HTML sets the two stacks side by side.
@Suite struct SanitizerReportTests {
    static func racingRun() throws -> RunRecord {
        var run = try ReportTests.fixture()
        let access = { (title: String, line: Int) in
            SanitizerReport.Stack(title: title, frames: [
                Frame(address: 0x10, module: "/bin/prog", symbol: "Store.<add>(_:)", file: "/src/Store.swift", line: line),
                Frame(address: 0x20, module: "/usr/lib/libdispatch.so", symbol: "_dispatch_worker_thread"),
            ])
        }
        let report = SanitizerReport(tool: .threadSanitizer, kind: "data race", pid: 42,
                                     accesses: [access("Write of size 8 at 0x7208 by thread T3", 12), access("Previous read of size 8 at 0x7208 by thread T1", 17)],
                                     location: [access("Location is heap block of size 24 at 0x7200 allocated by main thread", 3)],
                                     threads: [], summary: "data race", count: 3, text: "WARNING: ThreadSanitizer: data race (pid=42)")
        run.trials[0].outcome = TrialOutcome(kind: .dataRace, message: "ThreadSanitizer reported 3 races (1 distinct)")
        run.trials[0].expected = false
        run.trials[0].sanitizerReports = [report]
        return run
    }

    @Test func aRaceIsNamedWithBothAccessesInTheTerminalMarkdownAndHTML() throws {
        let run = try Self.racingRun()
        let terminal = TerminalReport(color: false).render(run)
        #expect(terminal.contains("Sanitizer reports"), "\(terminal)")
        #expect(terminal.contains("ThreadSanitizer: data race at Store.<add>(_:) (Store.swift:12) and Store.<add>(_:) (Store.swift:17) (×3)"), "\(terminal)")
        let markdown = MarkdownReport.render(run)
        #expect(markdown.contains("## Sanitizer reports"))
        #expect(markdown.contains("Previous read of size 8 at 0x7208 by thread T1: `Store.&lt;add&gt;(_:) (Store.swift:17) ← _dispatch_worker_thread`"), "\(markdown)")
        let html = HTMLReport.render(run)
        #expect(html.contains("<section id=\"sanitizer\">"))
        let sideBySide = try #require(html.range(of: "<div style=\"display:flex;flex-wrap:wrap;gap:1em\">"))
        let after = html[sideBySide.upperBound...]
        #expect(after.components(separatedBy: "<div style=\"flex:1 1 18em").count - 1 >= 2, "two access columns")
        #expect(!html.contains("<add>"), "escaped")
    }

    @Test func aRunWithoutReportsHasNoSanitizerSection() throws {
        let run = try ReportTests.fixture()
        #expect(!MarkdownReport.render(run).contains("Sanitizer reports"))
        #expect(!HTMLReport.render(run).contains("id=\"sanitizer\""))
        #expect(!TerminalReport(color: false).render(run).contains("Sanitizer reports"))
    }
}
