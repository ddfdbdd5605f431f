import Foundation
import StrainRecords
import Testing

/// Two runs of one suite whose second changes two rows deterministically, and the
/// baseline saved from the first: `noop main` is expected to throw in the second
/// suite (so its `completed` is an outcome that got worse), and `noop thread(512KiB)`
/// runs under a memory limit that leaves no room for the trial (a harness error).
/// No verdict here depends on a timing.
enum ChangedRuns {
    static let baselineSuite = """
        name: gate-cli
        timeout: 30s
        profiles: [linux]
        runs:
          - scenario: noop
            strategies: [main]
          - scenario: noop
            strategies: [thread(512KiB)]
          - scenario: noop
            strategies: [gcd-global]
        """

    static let candidateSuite = """
        name: gate-cli
        timeout: 30s
        profiles: [linux]
        runs:
          - scenario: noop
            strategies: [main]
            expect: threw
          - scenario: noop
            strategies: [thread(512KiB)]
            memory-limit: 64MiB
          - scenario: noop
            strategies: [gcd-global]
        """

    struct Fixture {
        var folder: String
        var store: String
        var baselineRun: String
        var candidateRun: String
        var candidateSuite: String
        /// The suite lines of the two changed runs' entries in the candidate suite.
        var outcomeLine: Int
        var harnessLine: Int
    }

    /// Runs both suites and saves the first as baseline `base`.
    static func make() async throws -> Fixture {
        let folder = try temporaryFolder()
        let store = folder + "/baselines"
        try TestFiles.write(baselineSuite, to: folder + "/baseline.yaml")
        try TestFiles.write(candidateSuite, to: folder + "/candidate.yaml")
        let first = try await StrainBinary.run(["run", folder + "/baseline.yaml", "--out", folder + "/a", "--format", "json"], timeout: 60)
        #expect(first.status == 0, "\(first.stdout)\(first.stderr)")
        let saved = try await StrainBinary.run(["baseline", "save", folder + "/a", "--name", "base", "--baselines", store], timeout: 30)
        #expect(saved.status == 0, "\(saved.stderr)")
        let second = try await StrainBinary.run(["run", folder + "/candidate.yaml", "--out", folder + "/b", "--format", "json"], timeout: 60)
        #expect(second.status == 3, "a harness error: \(second.stdout)\(second.stderr)")
        let entries = candidateSuite.split(separator: "\n", omittingEmptySubsequences: false).enumerated()
            .filter { $0.element.contains("- scenario: noop") }.map { $0.offset + 1 }
        return Fixture(folder: folder, store: store, baselineRun: folder + "/a", candidateRun: folder + "/b",
                       candidateSuite: folder + "/candidate.yaml", outcomeLine: entries[0], harnessLine: entries[1])
    }

    static func json(_ path: String) throws -> [String: Any] {
        try #require(JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: path))) as? [String: Any])
    }
}

/// `strain gate` through the built binary: calibration, GitHub output and its step
/// summary, gate.html, and the selection options of an interleaved gate.
@Suite(.serialized) struct GateCommandTests {
    static let noopSuite = """
        name: gate-calibrate
        timeout: 30s
        profiles: [linux]
        runs:
          - scenario: noop
            strategies: [main, thread(512KiB)]
        """

    @Test func aCalibrationFromAnAARerunIsStoredInTheBaselineAndShownByShowAndList() async throws {
        let folder = try temporaryFolder()
        let store = folder + "/baselines"
        try TestFiles.write(Self.noopSuite, to: folder + "/suite.yaml")
        try TestFiles.write(Self.noopSuite.replacingOccurrences(of: "main, thread(512KiB)", with: "gcd-global"), to: folder + "/other.yaml")
        for name in ["a", "b"] {
            let run = try await StrainBinary.run(["run", folder + "/suite.yaml", "--out", folder + "/" + name, "--format", "json"], timeout: 60)
            #expect(run.status == 0, "\(run.stderr)")
        }
        let other = try await StrainBinary.run(["run", folder + "/other.yaml", "--out", folder + "/other", "--format", "json"], timeout: 60)
        #expect(other.status == 0, "\(other.stderr)")
        #expect(try await StrainBinary.run(["baseline", "save", folder + "/a", "--name", "base", "--baselines", store]).status == 0)

        let calibrated = try await StrainBinary.run(["gate", "--calibrate", folder + "/b/run.json", "--baseline", "base", "--baselines", store], timeout: 30)
        #expect(calibrated.status == 0, "\(calibrated.stderr)")
        let match = try #require(calibrated.stdout.firstMatch(of: /^Calibrated baseline base from (.+): (\d+) timing row-metrics, 1 A\/A run so far\n$/),
                                 "\(calibrated.stdout)")
        #expect(match.1 == folder + "/b/run.json")
        let rows = try #require(Int(match.2))
        #expect(rows >= 2, "both noop rows have timings: \(calibrated.stdout)")
        let file = try ChangedRuns.json(store + "/base.json")
        #expect((file["calibration"] as? [String: Double])?.count == rows)
        #expect(file["calibrationRuns"] as? Int == 1)

        let show = try await StrainBinary.run(["baseline", "show", "base", "--baselines", store])
        #expect(show.stdout.contains("\n  calibration: \(rows) row-metrics from 1 A/A run; δ median "), "\(show.stdout)")
        #expect(!show.stdout.contains("not calibrated"), "\(show.stdout)")

        let again = try await StrainBinary.run(["gate", "--calibrate", folder + "/a", "--baseline", "base", "--baselines", store], timeout: 30)
        #expect(again.status == 0, "\(again.stderr)")
        #expect(again.stdout.hasSuffix(", 2 A/A runs so far\n"), "\(again.stdout)")
        let list = try await StrainBinary.run(["baseline", "list", "--baselines", store])
        #expect(list.stdout.hasPrefix("base  gate-calibrate, 2 trials, ") && list.stdout.hasSuffix(", calibrated by 2 A/A runs\n"), "\(list.stdout)")

        // Refusals: each exit 2 with its reason, the baseline left as it was.
        let before = try Data(contentsOf: URL(fileURLWithPath: store + "/base.json"))
        let refusals: [([String], String)] = [
            (["gate", "--calibrate", folder + "/b"], "error: --calibrate needs --baseline NAME: the stored baseline whose code the rerun ran again\n"),
            (["gate", "--calibrate", folder + "/b", "--baseline", store + "/base.json"],
             "error: --calibrate records into a stored baseline; give its name, not a path (save it first with `strain baseline save`)\n"),
            (["gate", "--calibrate", folder + "/other", "--baseline", "base"],
             "error: \(folder)/other shares no completed timing row with baseline base; a calibration needs a rerun of the same suite\n"),
            (["gate", "--calibrate", folder + "/nothing", "--baseline", "base"],
             "error: \(folder)/nothing: no such run.json; give a run.json that `strain run` wrote, or its directory\n"),
        ]
        for (arguments, message) in refusals {
            let refused = try await StrainBinary.run(arguments + ["--baselines", store], timeout: 30)
            #expect(refused.status == 2, "\(arguments): \(refused.stdout)")
            #expect(refused.stderr == message, "\(arguments): \(refused.stderr)")
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: store + "/base.json")) == before)
    }

    @Test func theGitHubFormatAnnotatesEachFailingRowAtItsSuiteLineAndAppendsTheSummary() async throws {
        let fixture = try await ChangedRuns.make()
        let summary = fixture.folder + "/step-summary.md"
        try TestFiles.write("## An earlier step\n", to: summary)
        let out = fixture.folder + "/gate"
        let gate = try await StrainBinary.run(["gate", fixture.candidateRun, "--baseline", "base", "--baselines", fixture.store, "--format", "github", "--out", out],
                                        timeout: 30, environment: ["GITHUB_STEP_SUMMARY": summary])
        #expect(gate.status == 3, "a harness error row makes the gate incomplete: \(gate.stdout)\(gate.stderr)")
        let report = try ChangedRuns.json(out + "/gate.json")
        let conclusion = try #require(report["conclusion"] as? String)
        #expect(conclusion.hasPrefix("incomplete: 1 harness error, 1 outcome changed"), "\(conclusion)")
        let suitePath = try RunRecordFile.read(from: fixture.candidateRun + "/run.json").suite.path
        #expect(suitePath.hasSuffix("/candidate.yaml"))

        // The worst first; ':' and ',' escaped in properties, as workflow commands need.
        let lines = gate.stdout.split(separator: "\n").map(String.init)
        #expect(lines.count == 4, "two annotations, the notice and the files line: \(gate.stdout)")
        let harness = "::error file=\(suitePath),line=\(fixture.harnessLine),title=Strain gate%3A harness error noop thread(512KiB) linux::"
            + "outcome: the harness failed in the candidate: memory-limit 64MiB leaves no room"
        #expect(lines.first?.hasPrefix(harness) == true, "\(lines.first ?? "")\nwanted: \(harness)")
        #expect(lines.dropFirst().first == "::error file=\(suitePath),line=\(fixture.outcomeLine),title=Strain gate%3A outcome changed noop main linux::"
                + "outcome: completed is not what the suite expects; the baseline's outcomes all were", "\(gate.stdout)")
        #expect(lines.dropFirst(2).first == "::notice title=Strain gate::\(conclusion)")
        #expect(lines.last == "Wrote \(out)/gate.json, gate.md, gate.html and junit.xml, and each side's run as baseline/report.html and candidate/report.html")
        #expect(!gate.stdout.contains("Strain gate: gate-cli"), "no text summary unless asked")

        // The step summary: what was there, then the comparison in Markdown, the same as gate.md.
        let appended = TestFiles.read(summary)
        #expect(appended.hasPrefix("## An earlier step\n<!-- strain-gate -->\n### Strain gate: gate-cli — \(conclusion)\n"), "\(appended)")
        #expect(appended.contains("\nCross-run against base; "), "\(appended)")
        #expect(appended.contains("\n| **harness error** | noop thread(512KiB) linux | outcome | | the harness failed in the candidate: memory-limit 64MiB leaves no room"), "\(appended)")
        #expect(appended.contains("\n| **outcome changed** | noop main linux | outcome | | completed is not what the suite expects; the baseline's outcomes all were | | | | completed ×1 → completed ×1 |\n"),
                "\(appended)")
        let markdown = TestFiles.read(out + "/gate.md")
        #expect(appended == "## An earlier step\n" + markdown)

        // A second gate appends, never replaces.
        let second = try await StrainBinary.run(["gate", fixture.candidateRun, "--baseline", "base", "--baselines", fixture.store, "--format", "github", "--out", out],
                                          timeout: 30, environment: ["GITHUB_STEP_SUMMARY": summary])
        #expect(second.status == 3)
        #expect(TestFiles.read(summary) == "## An earlier step\n" + markdown + markdown)
    }

    @Test func gateHTMLShowsTheVerdictWithEveryFailingRowAndTheRest() async throws {
        let fixture = try await ChangedRuns.make()
        let out = fixture.folder + "/gate"
        let gate = try await StrainBinary.run(["gate", fixture.candidateRun, "--baseline", "base", "--baselines", fixture.store, "--out", out], timeout: 30)
        #expect(gate.status == 3, "\(gate.stdout)\(gate.stderr)")
        let conclusion = try #require(ChangedRuns.json(out + "/gate.json")["conclusion"] as? String)
        #expect(gate.stdout.contains(conclusion), "the text summary: \(gate.stdout)")
        let html = TestFiles.readable(TestFiles.read(out + "/gate.html"))
        #expect(html.hasPrefix("<!DOCTYPE html>\n") && html.hasSuffix("</html>\n"))
        #expect(html.contains("<title>Strain gate: gate-cli</title>"))
        #expect(html.contains("<p class=\"fail\"><b>\(conclusion)</b></p>"), "the verdict at the top")
        #expect(html.contains("Cross-run against base; "))
        let failing = try #require(html.firstRange(of: "<section id=\"failing\"><h2>What failed</h2>"), "a failing section")
        let failingEnd = try #require(html[failing.upperBound...].firstRange(of: "</section>"))
        let failingRows = String(html[failing.upperBound..<failingEnd.lowerBound])
        #expect(failingRows.contains("<tr class=\"key\"><th colspan=\"8\">noop thread(512KiB) linux <span class=\"outcomes\">outcomes completed ×1 → harnessError ×1</span></th></tr>\n<tr class=\"bad\"><td data-label=\"verdict\">harness error</td><td data-label=\"metric\">outcome</td><td class=\"wide\" colspan=\"6\">the harness failed in the candidate: memory-limit 64MiB leaves no room"),
                "\(failingRows)")
        #expect(failingRows.contains("<tr class=\"key\"><th colspan=\"8\">noop main linux <span class=\"outcomes\">outcomes completed ×1 → completed ×1</span></th></tr>\n<tr class=\"bad\"><td data-label=\"verdict\">outcome changed</td><td data-label=\"metric\">outcome</td><td class=\"wide\" colspan=\"6\">completed is not what the suite expects; the baseline&apos;s outcomes all were</td></tr>\n<tr class=\"evidence\"><td></td><td class=\"label\">evidence</td><td class=\"wide\" colspan=\"6\"><a href=\"candidate/report.html#trial-noop-main-linux-"),
                "\(failingRows)")
        let order = ["harness error", "outcome changed"].compactMap { failingRows.firstRange(of: $0)?.lowerBound }
        #expect(order.count == 2 && order[0] < order[1], "the worst row first")
        #expect(!failingRows.contains("gcd-global"), "the unchanged row is not among the failing ones")
        #expect(html[failingEnd.upperBound...].contains("noop gcd-global linux"), "the third row is shown below the failing ones")
        let junit = TestFiles.read(out + "/junit.xml")
        #expect(junit.contains("noop thread(512KiB) linux") && junit.contains("noop main linux"), "\(junit)")
        let host = try RunRecordFile.read(from: fixture.candidateRun + "/run.json").environment.host
        #expect(!host.isEmpty && junit.contains(" hostname=\"\(host)\">"), "JUnit names the machine the candidate ran on, \(host): \(junit)")
    }

    static let selectionSuite = """
        name: gate-select
        timeout: 30s
        profiles: [linux]
        runs:
          - scenario: noop
            strategies: [main, thread(512KiB), gcd-global]
          - scenario: stack-depth
            parameters: {frame: 64B, limit: 10}
            strategies: [thread(8MiB)]
        """

    /// The trial keys of each round's run and of the gate's rows.
    static func interleavedKeys(_ out: String) throws -> (a: Set<String>, b: Set<String>, rows: Set<String>) {
        let a = try RunRecordFile.read(from: out + "/rounds/A1/run.json").trials.map(\.key.description)
        let b = try RunRecordFile.read(from: out + "/rounds/B1/run.json").trials.map(\.key.description)
        let rows = try RunRecordFile.read(from: out + "/candidate-run.json").trials.map(\.key.description)
        return (Set(a), Set(b), Set(rows))
    }

    @Test func anInterleavedGatePassesFilterAndSkipToBothBuildsRuns() async throws {
        let folder = try temporaryFolder()
        let suite = folder + "/suite.yaml"
        try TestFiles.write(Self.selectionSuite, to: suite)
        let out = folder + "/gate"
        let gate = try await StrainBinary.run(["gate", "--baseline-binary", StrainBinary.path, suite, "--repetitions", "2",
                                         "--filter", "scenario=noop", "--skip", "strategy=main", "--out", out], timeout: 90, environment: ["COLUMNS": "80"])
        #expect(gate.status == 0, "\(gate.stdout)\(gate.stderr)")
        // Each round but the last says how long the rounds left should take, from the rounds so far.
        let rounds = gate.stdout.split(separator: "\n").filter { $0.hasPrefix("round ") }
        #expect(rounds.count == 2, "\(gate.stdout)")
        #expect(rounds.first?.wholeMatch(of: /round 1\/2 done \(A and B\), \d+ s; about \d+ s left/) != nil, "\(gate.stdout)")
        #expect(rounds.last?.wholeMatch(of: /round 2\/2 done \(A and B\), \d+ s/) != nil, "\(gate.stdout)")
        // Said before the first round, which prints nothing until it ends (re-trial 35m: 20 s of silence),
        // and fitted to 80 columns like every other line but a long path (it was 82: re-trial 35n, F1).
        let words = gate.stdout.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        let opening = try #require(words.range(of: "2 rounds, each running A and B in turn (ABBA); each round's line estimates the rest"), "\(gate.stdout)")
        #expect(opening.upperBound <= (words.range(of: "round 1/2 done")?.lowerBound ?? words.startIndex), "\(gate.stdout)")
        let wide = gate.stdout.split(separator: "\n").filter { $0.count > 80 && $0.trimmingCharacters(in: .whitespaces).contains(" ") }
        #expect(wide.isEmpty, "lines over 80 columns: \(wide)")
        let keys = try Self.interleavedKeys(out)
        // The filter leaves out stack-depth, the skip noop main: each has a trial only it removes.
        let wanted: Set = ["noop thread(512KiB) linux", "noop gcd-global linux"]
        #expect(keys.a == wanted, "\(keys.a)")
        #expect(keys.b == wanted, "\(keys.b)")
        #expect(keys.rows == wanted)
        let rows = try #require(ChangedRuns.json(out + "/gate.json")["rows"] as? [[String: Any]])
        #expect(rows.count == 2, "one row per selected key: \(rows.count)")
        #expect(TestFiles.read(out + "/rounds/A1.log").contains("Running gate-select: 2 trials"), "\(TestFiles.read(out + "/rounds/A1.log"))")
    }

    @Test func aPlanListedAt80ColumnsFitsWithEachTrialStartingItsOwnLine() async throws {
        let folder = try temporaryFolder()
        let suite = folder + "/long.yaml"
        try TestFiles.write("""
            name: long
            runs:
              - scenario: cyclic-graph
                parameters:
                  operation: [unarchive]
                  shape: [chain]
                  size: [2000, 3000]
                  players: [3]
                  games: [4]
                strategies: [gcd-global, thread(512KiB)]

            """, to: suite)
        // A pipe without COLUMNS: one trial a line, whole (100 columns here).
        let piped = try await StrainBinary.run(["run", suite, "--list"], timeout: 30)
        #expect(piped.status == 0, "\(piped.stderr)")
        let whole = piped.stdout.split(separator: "\n")
        #expect(whole.count == 5 && whole.last == "4 trials", "\(piped.stdout)")
        #expect(whole.contains { $0.count > 80 }, "the names are longer than 80 columns: \(piped.stdout)")
        // At 80 columns (26 of the smoke suite's 36 lines ran past them): each trial
        // starts a line, its parameters continued under it, nothing over 80.
        let narrow = try await StrainBinary.run(["run", suite, "--list"], timeout: 30, environment: ["COLUMNS": "80"])
        let lines = narrow.stdout.split(separator: "\n")
        #expect(lines.allSatisfy { $0.count <= 80 }, "\(narrow.stdout)")
        #expect(lines.filter { !$0.hasPrefix(" ") }.count == 5, "\(narrow.stdout)")
        #expect(lines.joined(separator: " ").split(separator: " ") == piped.stdout.split(whereSeparator: { $0 == " " || $0 == "\n" }), "no word lost or split: \(narrow.stdout)")
    }

    @Test func anInterleavedGateRunsTheSameShardOnBothBuilds() async throws {
        let folder = try temporaryFolder()
        let suite = folder + "/suite.yaml"
        try TestFiles.write(Self.selectionSuite, to: suite)
        let listed = try await StrainBinary.run(["run", suite, "--shard", "2/3", "--list"], timeout: 30)
        #expect(listed.status == 0, "\(listed.stderr)")
        let shard = Set(listed.stdout.split(separator: "\n").dropLast().map { String($0.split(separator: " #").first ?? "") })
        #expect(!shard.isEmpty && shard.count < 4, "shard 2 of 3 is part of the plan: \(listed.stdout)")

        let out = folder + "/gate"
        let gate = try await StrainBinary.run(["gate", "--baseline-binary", StrainBinary.path, suite, "--repetitions", "1", "--shard", "2/3", "--out", out], timeout: 90)
        #expect(gate.status == 0, "\(gate.stdout)\(gate.stderr)")
        let keys = try Self.interleavedKeys(out)
        #expect(keys.a == shard, "\(keys.a) against \(shard)")
        #expect(keys.b == shard)
        #expect(keys.rows == shard)
        let plan = try #require(RunRecordFile.read(from: out + "/rounds/A1/run.json").plan)
        #expect(plan.shard?.index == 2 && plan.shard?.count == 3 && plan.trialCount == 4, "\(plan)")

        let bad = try await StrainBinary.run(["gate", "--baseline-binary", StrainBinary.path, suite, "--repetitions", "1", "--shard", "4/3", "--out", folder + "/bad"], timeout: 60)
        #expect(bad.status == 2, "\(bad.stdout)\(bad.stderr)")
        #expect(bad.stderr.contains("--shard '4/3' is not K/N with 1 ≤ K ≤ N ≤ 1000"), "the round's refusal is passed on: \(bad.stderr)")
    }
}
