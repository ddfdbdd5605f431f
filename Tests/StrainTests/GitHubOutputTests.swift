import Foundation
import StrainKit
import StrainRecords
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
            "::error file=ci/suites/annotated.yaml,line=5,title=Strain%3A completed noop main ios::1 of 1 repetition ended unexpectedly: completed ×1; the suite expects crashed",
            "::error file=ci/suites/annotated.yaml,line=5,title=Strain%3A completed noop thread(512KiB) ios::1 of 1 repetition ended unexpectedly: completed ×1; the suite expects crashed",
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

    /// A crash's annotation says where: at the file and line of its frame in the program's
    /// own code (strain_faults.c's null store), naming the frame and the suite's entry.
    @Test func aCrashIsAnnotatedAtTheFileAndLineOfItsFrameAndNamesIt() async throws {
        let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path
        let folder = TestFolders.root.appendingPathComponent("strain-gh-crash-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try """
            name: crashing
            runs:
              - scenario: crash
                parameters: {kind: null-dereference}
                strategies: [main]
            """.write(toFile: folder + "/crashing.yaml", atomically: true, encoding: .utf8)
        // The repository is the workspace: the crash's source file is inside it.
        let result = try await StrainBinary.run(["run", folder + "/crashing.yaml", "--out", folder + "/out", "--github"], timeout: 120,
                                                environment: ["GITHUB_WORKSPACE": repository])
        #expect(result.status == 1, "\(result.stdout)\n\(result.stderr)")
        let source = try String(contentsOfFile: repository + "/Sources/CStrainFaults/strain_faults.c", encoding: .utf8).components(separatedBy: "\n")
        let line = try #require(source.firstIndex { $0.contains("*nowhere = 1;") }) + 1
        let error = try #require(result.stdout.split(separator: "\n").first { $0.hasPrefix("::error ") }, "\(result.stdout)")
        #expect(error.hasPrefix("::error file=Sources/CStrainFaults/strain_faults.c,line=\(line),title=Strain%3A crashed(SIGSEGV) crash[kind=null-dereference] main linux::"), "\(error)")
        #expect(error.contains("%0Aat strain_crash_null_dereference at strain_faults.c:\(line)"), "the frame named: \(error)")
        #expect(error.hasSuffix("%0Aplanned by \(folder)/crashing.yaml:3"), "the suite's entry, outside the workspace, as typed: \(error)")
    }

    /// Outside the workspace (a library's source, or a build made elsewhere) GitHub cannot
    /// place an annotation: it stays at the suite's entry and names the frame.
    @Test func aFailureOutsideTheWorkspaceStaysAtTheSuitesEntryAndNamesTheFrame() {
        let place = FailurePlace(file: "/build/elsewhere/x.c", line: 7, label: "at", frame: "f at x.c:7:3 (app)")
        #expect(WorkflowCommand.error(at: place, suiteFile: "/repo/ci/s.yaml", line: 4, workspace: "/repo", title: "T", message: "M")
                == "::error file=ci/s.yaml,line=4,title=T::M%0Aat f at x.c:7:3 (app)")
        #expect(WorkflowCommand.error(at: place, suiteFile: "/repo/ci/s.yaml", line: 4, workspace: nil, title: "T", message: "M")
                == "::error file=/build/elsewhere/x.c,line=7,title=T::M%0Aat f at x.c:7:3 (app)%0Aplanned by /repo/ci/s.yaml:4", "no workspace: the frame's file as it is")
        #expect(WorkflowCommand.error(at: nil, suiteFile: "/repo/ci/s.yaml", line: 4, workspace: "/repo", title: "T", message: "M") == "::error file=ci/s.yaml,line=4,title=T::M")
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
        #expect(TestFiles.readable(list).contains("noop main linux: <b>completed ×3</b> of 3; expects crashed"), "the same words as the terminal's: \(list)")
        // `×3 of 3` on one line: a phone broke `timedOut ×1` / `of 1` after the bold.
        #expect(list.contains("</b>&nbsp;of&nbsp;3;"), "\(list)")
        // Nor before `×3`: a phone then broke `timedOut` / `×1 of 1`.
        #expect(list.contains("<b>completed&nbsp;×3</b>"), "\(list)")
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
