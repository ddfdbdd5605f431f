import Foundation
@testable import StrainCLI
import StrainRecords
import StrainText
import Testing

/// From a gate row whose outcome changed to the evidence behind it, in every output:
/// gate.html links the candidate trial's anchor in the candidate's rendered report,
/// gate.md carries the evidence in one line (a pull-request comment cannot follow a
/// relative link), and the terminal names the report and the trial. And report.html
/// gives every trial an anchor derived from its key and repetition alone.
@Suite(.serialized) struct GateEvidenceTests {
    /// Two rows change outcome deterministically, by suite text alone (the keys stay
    /// the same): the starvation row blocks every cooperative thread for 1.5 s, which
    /// completes under a 20 s stall threshold and is `starved` under 400 ms (a thread
    /// dump); the crash row crashes on both sides, expected in the baseline and not in
    /// the candidate (a trace). `noop` does not change.
    static let baselineSuite = """
        name: gate-evidence
        timeout: 30s
        profiles: [linux]
        runs:
          - scenario: cooperative-starvation
            parameters: {hold-ms: 1500}
            strategies: [task]
            stall: 20s
            expect: completed
          - scenario: crash
            parameters: {kind: null-dereference}
            strategies: [thread(512KiB)]
            expect: crashed
          - scenario: noop
            strategies: [main]
        """

    static let candidateSuite = baselineSuite
        .replacingOccurrences(of: "stall: 20s", with: "stall: 400ms")
        .replacingOccurrences(of: "expect: crashed", with: "expect: completed")

    static let starvedKey = "cooperative-starvation[blockers=0, probe-priority=medium, hold-ms=1500] task linux"
    static let crashedKey = "crash[kind=null-dereference] thread(512KiB) linux"

    /// The text of `html` from `start` to the first `end` after it.
    static func slice(_ html: String, from start: String, to end: String) -> String? {
        guard let from = html.range(of: start), let to = html[from.upperBound...].range(of: end) else { return nil }
        return String(html[from.lowerBound..<to.upperBound])
    }

    /// The evidence line the terminal and gate.html quote is cut after a whole word, as
    /// gate.md's is: it read `… unsigned int> swift::ConcurrentRea…` (re-trial 35n, F2, 3 of 3).
    @Test func theEvidenceLineTheTerminalAndGateHTMLQuoteIsCutAfterAWholeWord() {
        var trial = OutcomeAdviceTests.trial(.crashed, index: 0)
        // The limit falls inside the long symbol after 368 characters of short words.
        trial.outcome.message = String(repeating: "frame ← ", count: 46) + "swift::ConcurrentReadableHashMap<swift::TupleCacheEntry> and more"
        let line = EvidenceLine.line(trial, limit: 400)
        #expect(line.count <= 400 && line.hasSuffix("…"), "\(line.suffix(60))")
        #expect(!line.contains("swift::Concurrent") && line.dropLast().hasSuffix("←"), "cut after the last whole word: \(line.suffix(60))")
    }

    @Test func anOutcomeChangedRowLeadsToItsCandidateTrialsEvidenceInGateHTMLMarkdownAndTheTerminal() async throws {
        let folder = try temporaryFolder()
        let store = folder + "/baselines"
        try TestFiles.write(Self.baselineSuite, to: folder + "/baseline.yaml")
        try TestFiles.write(Self.candidateSuite, to: folder + "/candidate.yaml")
        let first = try await StrainBinary.run(["run", folder + "/baseline.yaml", "--out", folder + "/a", "--format", "json"], timeout: 90)
        #expect(first.status == 0, "\(first.stdout)\(first.stderr)")
        let saved = try await StrainBinary.run(["baseline", "save", folder + "/a", "--name", "base", "--baselines", store], timeout: 30)
        #expect(saved.status == 0, "\(saved.stderr)")
        let second = try await StrainBinary.run(["run", folder + "/candidate.yaml", "--out", folder + "/b", "--format", "json"], timeout: 90)
        #expect(second.status == 1, "two unexpected outcomes: \(second.stdout)\(second.stderr)")

        let out = folder + "/gate"
        let gate = try await StrainBinary.run(["gate", folder + "/b", "--baseline", "base", "--baselines", store, "--out", out], timeout: 60)
        #expect(gate.status == 1, "\(gate.stdout)\(gate.stderr)")
        let verdicts = try #require(ChangedRuns.json(out + "/gate.json")["rows"] as? [[String: Any]]).map { $0["verdict"] as? String }
        #expect(verdicts.filter { $0 == "outcomeChanged" }.count == 2, "\(verdicts)")

        let html = TestFiles.readable(TestFiles.read(out + "/gate.html"))
        let report = TestFiles.readable(TestFiles.read(out + "/candidate/report.html"))
        #expect(report.hasPrefix("<!doctype html>"), "the gate renders the candidate's run beside its outputs")
        #expect(TestFiles.read(out + "/baseline/report.html").hasPrefix("<!doctype html>"), "and the baseline's")
        let stalls = try #require(Self.slice(report, from: "<section id=\"stalls\">", to: "</section>"), "the candidate report has a stall")
        let traces = try #require(Self.slice(report, from: "<section id=\"traces\">", to: "</section>"), "the candidate report has a trace")
        let markdown = TestFiles.read(out + "/gate.md").split(separator: "\n").map(String.init)

        for (key, section, evidence) in [(Self.starvedKey, stalls, "DispatchSemaphore.wait"), (Self.crashedKey, traces, "SIGSEGV")] {
            let row = try #require(Self.slice(html, from: "<th colspan=\"8\">\(key) ", to: "</tbody>"), "\(key)'s row in gate.html: \(html)")
            let link = try #require(row.firstMatch(of: /<a href="candidate\/report\.html#(trial-[^"]+)">/), "\(key): a link to the trial: \(row)")
            let anchor = String(link.1)
            #expect(anchor.hasSuffix("-r1"), "the first candidate repetition: \(anchor)")
            #expect("          candidate/report.html#\(anchor)".count <= 80, "the link fits a line under its row: \(anchor)")
            #expect(report.contains(" id=\"\(anchor)\""), "\(key): the anchor exists in candidate/report.html")
            #expect(section.contains(" id=\"\(anchor)\""), "\(key): the anchor is on the trial's evidence (its dump or trace)")
            #expect(row.contains(evidence), "\(key): the row says what the evidence is: \(row)")

            // Markdown: the evidence itself in one capped line, and the relative link.
            let line = try #require(markdown.first { $0.contains(key.replacingOccurrences(of: "[", with: "\\[").replacingOccurrences(of: "]", with: "\\]")) && $0.contains("](candidate/report.html#\(anchor))") },
                                    "\(key): an evidence line in gate.md: \(markdown.joined(separator: "\n"))")
            #expect(line.contains(evidence), "\(key): \(line)")
            #expect(line.utf8.count <= 1_000, "one capped line, its evidence and its advice each at most 300 characters: \(line.utf8.count) bytes")

            // The terminal: the link as gate.md gives it and the gate's folder, and which trial.
            #expect(gate.stdout.contains("at candidate/report.html#\(anchor) in \(out)\n"), "\(key): \(gate.stdout)")
            #expect(gate.stdout.contains("\(key) #1"), "\(key): the trial's key and repetition: \(gate.stdout)")
            // And in each view, what to do about it, as the candidate's report advises.
            // Its own label, not the metric column's: a phone showed `metric: what to do` (re-trial 35p, F21).
            #expect(row.contains("<td class=\"label\">what to do</td>"), "\(key): \(row)")
            #expect(line.contains(" What to do: "), "\(key): \(line)")
        }
        #expect(gate.stdout.components(separatedBy: "\n      what to do: ").count == 3, "both changed rows advised: \(gate.stdout)")
        #expect(gate.stdout.contains("filled a pool of") && gate.stdout.contains("don't block pool threads"), "the starved pool's own advice: \(gate.stdout)")

        // At 80 columns every line fits, the evidence's link among them (130 characters
        // with the folder before this), and `baseline list` and `show` fit too.
        let narrow = try await StrainBinary.run(["gate", folder + "/b", "--baseline", "base", "--baselines", store, "--out", folder + "/gate80"],
                                                timeout: 60, environment: ["COLUMNS": "80"])
        #expect(narrow.status == 1)
        let list = try await StrainBinary.run(["baseline", "list", "--baselines", store], timeout: 30, environment: ["COLUMNS": "80"])
        let show = try await StrainBinary.run(["baseline", "show", "base", "--baselines", store], timeout: 30, environment: ["COLUMNS": "80"])
        // An empty folder's "No baselines in … Save one with …" too (92 columns: re-trial 35n, F3).
        try FileManager.default.createDirectory(atPath: folder + "/no-baselines", withIntermediateDirectories: true)
        let none = try await StrainBinary.run(["baseline", "list", "--baselines", folder + "/no-baselines"], timeout: 30, environment: ["COLUMNS": "80"])
        #expect(none.stdout.contains("No baselines in"), "\(none.stdout)")
        for (name, output) in [("gate", narrow.stdout), ("baseline list", list.stdout), ("baseline show", show.stdout), ("empty baseline list", none.stdout)] {
            let over = output.split(separator: "\n").filter { $0.count > 80 && $0.trimmingCharacters(in: .whitespaces).contains(" ") }
            #expect(over.isEmpty, "\(name): lines over 80 columns: \(over)")
        }
        #expect(narrow.stdout.contains("candidate/report.html#trial-"), "\(narrow.stdout)")
        #expect(list.stdout.contains("base  ") && show.stdout.contains("Baseline base"), "\(list.stdout)\(show.stdout)")
        // The starvation's evidence is the dump's group that holds the work (the blockers'
        // semaphore wait, above); the crash's, the trace's first frames.
        let crashLine = try #require(markdown.first { $0.contains("](candidate/report.html#trial-crash") })
        #expect(crashLine.contains(" ← "), "the first frames of the trace: \(crashLine)")
        // The crash's place in the program's own code, which `gate --format github` annotates.
        let rows = try #require(ChangedRuns.json(out + "/gate.json")["rows"] as? [[String: Any]])
        let crashed = try #require(rows.first { ($0["outcomeReason"] as? String)?.contains("crashed") == true }, "\(rows)")
        let place = try #require((crashed["evidence"] as? [String: Any])?["place"] as? [String: Any], "\(crashed)")
        #expect((place["file"] as? String)?.hasSuffix("/Sources/CStrainFaults/strain_faults.c") == true && (place["line"] as? Int ?? 0) > 0, "\(place)")
        #expect((place["frame"] as? String)?.hasPrefix("strain_crash_null_dereference at strain_faults.c:") == true, "\(place)")
        let annotated = try await StrainBinary.run(["gate", folder + "/b", "--baseline", "base", "--baselines", store, "--out", folder + "/gate-gh", "--format", "github"],
                                                   timeout: 60, environment: ["GITHUB_WORKSPACE": PlantedRegressionTests.repository.path])
        let error = try #require(annotated.stdout.split(separator: "\n").first { $0.hasPrefix("::error ") && $0.contains("crash[kind=null-dereference]") }, "\(annotated.stdout)")
        #expect(error.hasPrefix("::error file=Sources/CStrainFaults/strain_faults.c,line=\(place["line"] as? Int ?? 0),"), "\(error)")
        #expect(error.contains("%0Aat strain_crash_null_dereference at strain_faults.c:"), "\(error)")
    }

    static let anchorSuite = """
        name: trial-anchors
        timeout: 30s
        repetitions: 2
        profiles: [linux]
        runs:
          - scenario: noop
            strategies: [main, thread(512KiB)]
          - scenario: crash
            strategies: [thread(512KiB)]
            expect: crashed
        """

    /// Every `id="trial-…"` in `page`, in order.
    static func trialAnchors(_ page: String) -> [String] {
        page.matches(of: /\sid="(trial-[^"]+)"/).map { String($0.1) }
    }

    @Test func reportHTMLGivesEveryTrialOneAnchorFromItsKeyAndRepetitionTheSameInEveryRun() async throws {
        let folder = try temporaryFolder()
        try TestFiles.write(Self.anchorSuite, to: folder + "/suite.yaml")
        var pages: [String] = []
        for name in ["a", "b"] {
            let run = try await StrainBinary.run(["run", folder + "/suite.yaml", "--out", folder + "/" + name], timeout: 90)
            #expect(run.status == 0, "\(run.stdout)\(run.stderr)")
            pages.append(TestFiles.read(folder + "/\(name)/report.html"))
        }
        let trials = try RunRecordFile.read(from: folder + "/a/run.json").trials
        #expect(trials.count == 6)
        let anchors = Self.trialAnchors(pages[0])
        #expect(anchors.count == trials.count, "one anchor per trial: \(anchors)")
        #expect(Set(anchors).count == anchors.count, "each once: \(anchors)")
        #expect(anchors.filter { $0.hasSuffix("-r1") }.count == 3 && anchors.filter { $0.hasSuffix("-r2") }.count == 3, "\(anchors)")
        #expect(Set(Self.trialAnchors(pages[1])) == Set(anchors), "another run of the same suite has the same anchors")
        // Both crashes are anchored on their trace (the second repetition's on the trace the first one's stands for).
        let traces = try #require(Self.slice(pages[0], from: "<section id=\"traces\">", to: "</section>"))
        let crashes = Self.trialAnchors(traces)
        #expect(crashes.count == 2 && crashes.allSatisfy { $0.hasPrefix("trial-crash-") }, "\(crashes)")
        let noop = anchors.filter { $0.hasPrefix("trial-noop-") }
        #expect(noop.count == 4, "the completed trials, on their rows: \(anchors)")
    }
}
