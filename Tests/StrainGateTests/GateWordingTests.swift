import Foundation
import StrainGate
import StrainRecords
import Testing

/// What a gate's views say when parts of a comparison are empty, and how they write
/// counts and machines: each case re-trial 35m saw in a real gate's pages.
struct GateWordingTests {
    /// Two rows whose outcomes changed and that measured nothing.
    static func outcomesOnly() throws -> GateReport {
        let keys = [Fake.key("spin"), Fake.key("nodes")]
        let crash = TrialOutcome(kind: .crashed, signal: 11)
        return try Gate.compare(
            baseline: Fake.run(keys.map { Fake.trial($0, repetition: 1) }),
            candidate: Fake.run(keys.map { Fake.trial($0, repetition: 1, outcome: crash, expected: false) }),
            options: GateOptions(mode: .interleaved))
    }

    @Test func aGateOfChangedOutcomesAloneHasNoEmptyListNoSamplesKeyAndNoZeroMetrics() throws {
        let report = try Self.outcomesOnly()
        #expect(report.exitCode == 1)
        #expect(report.tally == "2 trial keys compared, 0 unchanged in every metric and outcome; no metric compared (only outcomes).", "\(report.tally)")
        let html = report.renderHTML()
        #expect(!html.contains("<details><summary>0 trials"), "no disclosure of an empty list: \(html)")
        #expect(!html.contains("unchanged in every metric and outcome</summary>"), "\(html)")
        #expect(html.contains("<h2>What failed</h2>"))
        #expect(!html.contains("Samples: a dot per repetition"), "no key to strips the page does not draw: \(html)")
        #expect(!report.renderText().contains("the 0 metrics"))
        #expect(!report.renderMarkdown().contains("the 0 metrics"))
    }

    @Test func aHeadingOfTheOtherRowsNamesOnlyTheKindsThatOccurred() throws {
        // One repetition a side: the wall time is inconclusive, and nothing improved, is new or fixed.
        let key = Fake.key()
        let report = try Gate.compare(baseline: Fake.run([Fake.trial(key, repetition: 1, wall: 0.01)]),
                                      candidate: Fake.run([Fake.trial(key, repetition: 1, wall: 0.02)]),
                                      options: GateOptions(mode: .interleaved))
        let html = report.renderHTML()
        let markdown = report.renderMarkdown()
        #expect(html.contains("<h2>Inconclusive</h2>"), "\(html)")
        #expect(markdown.contains("1 other line of 1 trial (inconclusive)</summary>"), "\(markdown)")
        #expect(!html.contains("Improved, inconclusive, new, fixed") && !markdown.contains("improved, inconclusive, new, fixed"))
        #expect(html.contains("Samples: a dot per repetition"), "a table with strips keeps their key")
        // A new row beside it: both kinds, in the order a reader meets them.
        let fresh = Fake.key("fresh")
        let both = try Gate.compare(baseline: Fake.run([Fake.trial(key, repetition: 1, wall: 0.01)]),
                                    candidate: Fake.run([Fake.trial(key, repetition: 1, wall: 0.02), Fake.trial(fresh, repetition: 1, wall: 0.01)]),
                                    options: GateOptions(mode: .interleaved))
        #expect(both.renderHTML().contains("<h2>Inconclusive, new</h2>"), "\(both.renderHTML())")
    }

    @Test func anOverflowAFrameShallowerIsUnchangedAndCountsAreWrittenInGroups() throws {
        let key = Fake.key("cyclic-graph", [("size", "20000")], strategy: .thread(stackBytes: 512 << 10))
        func overflow(_ depth: Int, _ repetition: Int) -> TrialRecord {
            var trial = Fake.trial(key, repetition: repetition, outcome: TrialOutcome(kind: .stackOverflow, signal: 11))
            trial.metrics.depth = depth
            trial.metrics.frames = depth * 2
            return trial
        }
        func judged(_ before: Int, _ after: Int) throws -> [String: MetricComparison] {
            let report = try Gate.compare(baseline: Fake.run([overflow(before, 1), overflow(before, 2)]),
                                          candidate: Fake.run([overflow(after, 1), overflow(after, 2)]),
                                          options: GateOptions(mode: .interleaved))
            return Dictionary(uniqueKeysWithValues: report.rows[0].metrics.map { ($0.metric, $0) })
        }
        // The harness's own frames moved by one between two builds.
        let shallower = try judged(3956, 3955)
        #expect(shallower["depth"]?.verdict == .unchanged, "\(shallower["depth"]?.reason ?? "none")")
        #expect(shallower["frames"]?.verdict == .unchanged)
        #expect(shallower["depth"]?.reason.hasPrefix("3,956 → 3,955") == true, "\(shallower["depth"]?.reason ?? "none")")
        // A frame that grew by a twentieth: fewer levels fit, and the gate says so.
        let grown = try judged(3956, 3768)
        #expect(grown["depth"]?.verdict == .regressed, "\(grown["depth"]?.reason ?? "none")")
        #expect(grown["depth"]?.reason.hasPrefix("3,956 → 3,768, beyond the tolerance") == true, "\(grown["depth"]?.reason ?? "none")")
    }

    @Test func evidenceQuotedInAPullRequestCommentIsCutAfterAWholeWord() {
        // gate.md cut `sleeping` to `sle…` (re-trial 35m).
        let line = String(repeating: "a thread sleeping in nanosleep ← ", count: 20)
        let cut = GateReport.capped(line)
        #expect(cut.count <= GateReport.evidenceLength && cut.hasSuffix("…"), "\(cut)")
        let last = cut.dropLast().split(separator: " ").last.map(String.init) ?? ""
        #expect(["a", "thread", "sleeping", "in", "nanosleep", "←"].contains(last), "the last word is whole: \(last)")
        // A cut that would fall inside `sleeping` goes back to the space before it.
        let run = String(repeating: "x", count: GateReport.evidenceLength - 7)
        #expect(GateReport.capped(run + " sleeping in nanosleep") == run + "…", "\(GateReport.capped(run + " sleeping in nanosleep").suffix(20))")
        #expect(GateReport.capped("short") == "short")
    }

    @Test func machinesThatDifferInMemorySayItInMebibytes() throws {
        var other = Fake.environment
        other.memoryBytes = Fake.environment.memoryBytes + (1 << 30)
        let key = Fake.key()
        let report = try Gate.compare(baseline: Fake.run([Fake.trial(key, repetition: 1)]),
                                      candidate: Fake.run([Fake.trial(key, repetition: 1)], environment: other),
                                      options: GateOptions(mode: .crossRun))
        let memory = try #require(report.fingerprint.first { $0.field == "memory" })
        #expect(memory.baseline == "16,384 MiB" && memory.candidate == "17,408 MiB", "\(memory)")
    }
}
