import Foundation
import StrainKit
import Testing

/// `strain run --github` through the built binary: annotations at the suite's
/// lines, relative to the workspace however the suite was named, and the step summary.
@Suite(.timeLimit(.minutes(10))) struct GitHubOutputTests {
    static let suite = """
        name: annotated
        runs:
          - scenario: noop
            strategies: [main]
          - scenario: noop
            strategies: [main, thread(512KiB)]
            profiles: [ios]
            expect: crashed
        """

    @Test func runAnnotatesEachUnexpectedKeyAtItsSuiteLineRelativeToTheWorkspaceAndFillsTheStepSummary() async throws {
        let workspace = TestFolders.root.appendingPathComponent("strain-gh-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: workspace + "/ci/suites", withIntermediateDirectories: true)
        let suite = workspace + "/ci/suites/annotated.yaml"
        try Self.suite.write(toFile: suite, atomically: true, encoding: .utf8)
        let summary = workspace + "/summary.md"
        try "## Before\n".write(toFile: summary, atomically: true, encoding: .utf8)
        // The suite named by its absolute path: the annotation still names it from the repository's root.
        let result = try await StrainBinary.run(["run", suite, "--out", workspace + "/out", "--github"], timeout: 120,
                                          environment: ["GITHUB_WORKSPACE": workspace, "GITHUB_STEP_SUMMARY": summary])
        #expect(result.status == 1, "two unexpected trials: \(result.stdout)\n\(result.stderr)")
        let commands = result.stdout.split(separator: "\n").filter { $0.hasPrefix("::") }
        #expect(commands == [
            "::error file=ci/suites/annotated.yaml,line=5,title=Strain%3A completed noop main ios::1 of 1 repetitions ended unexpectedly: completed ×1; the suite expects crashed",
            "::error file=ci/suites/annotated.yaml,line=5,title=Strain%3A completed noop thread(512KiB) ios::1 of 1 repetitions ended unexpectedly: completed ×1; the suite expects crashed",
            "::notice title=Strain run annotated::3 trials: 2 unexpected",
        ], "\(result.stdout)")
        // The terminal's summary ends with the failing keys, each once, counted.
        let summaryLines = result.stdout.components(separatedBy: "\n")
        let total = try #require(summaryLines.firstIndex(of: "3 trials: 2 unexpected"), "\(result.stdout)")
        #expect(Array(summaryLines[(total + 1)...].prefix(2)) == [
            "  noop main ios: completed ×1 of 1; expects crashed",
            "  noop thread(512KiB) ios: completed ×1 of 1; expects crashed",
        ], "\(result.stdout)")
        let appended = try String(contentsOfFile: summary, encoding: .utf8)
        let markdown = try String(contentsOfFile: workspace + "/out/summary.md", encoding: .utf8)
        #expect(appended == "## Before\n" + markdown, "the run's summary.md appended after what the step summary held")
    }

    @Test func aPathOutsideTheWorkspaceOrWithoutOneStaysAsTyped() {
        #expect(WorkflowCommand.annotationPath("/elsewhere/suite.yaml", workspace: "/repo") == "/elsewhere/suite.yaml")
        #expect(WorkflowCommand.annotationPath("/repo/a/../b/suite.yaml", workspace: "/repo/") == "b/suite.yaml")
        #expect(WorkflowCommand.annotationPath("suite.yaml", workspace: "/repo", currentDirectory: "/repo/sub") == "sub/suite.yaml")
        #expect(WorkflowCommand.annotationPath("suite.yaml", workspace: nil) == "suite.yaml")
        #expect(WorkflowCommand.annotationPath("/repository/suite.yaml", workspace: "/repo") == "/repository/suite.yaml", "a sibling folder whose name starts the same is outside")
    }
}

/// "What failed" in every format: one line per key, its repetitions counted
/// (ten timed-out repetitions of one key used to be ten identical lines).
@Suite(.timeLimit(.minutes(10))) struct WhatFailedTests {
    @Test func whatFailedIsOneLinePerKeyWithItsRepetitionsCountedInEveryFormat() async throws {
        let (result, record, out) = try await StrainBinary.runSuite("""
            name: repeated
            runs:
              - scenario: noop
                strategies: [main]
                repetitions: 3
                expect: crashed
              - scenario: noop
                strategies: [thread(512KiB)]
            """)
        #expect(result.status == 1, "\(result.stdout)\n\(result.stderr)")
        #expect(record?.trials.filter { !$0.expected }.count == 3)
        #expect(result.stdout.contains("\n4 trials: 3 unexpected\n  noop main linux: completed ×3 of 3; expects crashed\nWrote "), "\(result.stdout)")
        let markdown = try String(contentsOfFile: out + "/summary.md", encoding: .utf8)
        let section = try #require(markdown.components(separatedBy: "## What failed\n\n").dropFirst().first?.components(separatedBy: "\n\n").first, "\(markdown)")
        #expect(section == "- **noop main linux**: completed ×3 of 3; expects crashed", "\(markdown)")
        #expect(markdown.range(of: "## What failed")!.lowerBound < markdown.range(of: "## noop")!.lowerBound, "the answer before any table")
        let html = try String(contentsOfFile: out + "/report.html", encoding: .utf8)
        let list = try #require(html.components(separatedBy: "<ul class=\"unexpected\">").dropFirst().first?.components(separatedBy: "</ul>").first)
        #expect(list.components(separatedBy: "<li>").count == 2, "one item: \(list)")
        #expect(list.contains("noop main linux: <b>completed ×3</b> of 3, expected crashed"), "\(list)")
    }
}

/// A suite's description as its author wrote it: `code` in backticks is code in
/// HTML and Markdown, not literal backticks.
@Suite(.timeLimit(.minutes(10))) struct DescriptionMarkupTests {
    @Test func backticksInASuiteDescriptionBecomeCodeInHTMLAndMarkdown() async throws {
        let (result, _, out) = try await StrainBinary.runSuite("""
            name: described
            description: "Calls `SYS_gettid` <raw> and `a|b`; a lone ` stays"
            runs:
              - scenario: noop
                strategies: [main]
            """)
        #expect(result.status == 0, "\(result.stderr)")
        let html = try String(contentsOfFile: out + "/report.html", encoding: .utf8)
        #expect(html.contains("<p class=\"description\">Calls <code>SYS_gettid</code> &lt;raw&gt; and <code>a|b</code>; a lone ` stays</p>"), "\(html.prefix(3000))")
        let markdown = try String(contentsOfFile: out + "/summary.md", encoding: .utf8)
        #expect(markdown.contains("\nCalls `SYS_gettid` &lt;raw&gt; and `a|b`; a lone &#96; stays\n"), "\(markdown.prefix(600))")
    }
}
