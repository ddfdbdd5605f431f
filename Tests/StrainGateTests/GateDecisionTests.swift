import Foundation
import StrainGate
import StrainRecords
import Testing

/// Records built by hand, so each rule of the gate is checked on exactly the data it needs.
enum Fake {
    static let environment = EnvironmentRecord(host: "h", cores: 2, memoryBytes: 1 << 34, kernel: "Linux 6", architecture: "x86_64", swiftVersion: "6.3", rlimits: [:], gitCommit: "abc")

    static func key(_ scenario: String = "spin", _ parameters: [(String, String)] = [("work", "1")], strategy: StrategySpec = .main) -> TrialKey {
        TrialKey(scenario: scenario, parameters: parameters.map { .init(name: $0.0, value: $0.1) }, strategy: strategy, profile: .linux)
    }

    static func trial(_ key: TrialKey, repetition: Int, wall: Double? = nil, stack: Int? = nil,
                      outcome: TrialOutcome = .completed, expected: Bool = true) -> TrialRecord {
        var metrics = TrialMetrics()
        metrics.wallSeconds = wall
        metrics.stackHighWaterBytes = stack
        return TrialRecord(id: TrialID(key: key, repetition: repetition), index: repetition, seed: 1, outcome: outcome,
                           expected: expected, expectedOutcomes: ["completed"], metrics: metrics, startedAt: "")
    }

    static func run(_ trials: [TrialRecord], environment: EnvironmentRecord = Fake.environment) -> RunRecord {
        RunRecord(
            suite: ResolvedSuite(name: "s", description: nil, path: "s.yaml", repetitions: 1, timeoutSeconds: 10, stallSeconds: 2, profiles: ["linux"], runs: []),
            environment: environment, startedAt: "", finishedAt: "", runnerPeakRSSBytes: 0, trials: trials
        )
    }

    /// n wall times around `center`, spread ±2 %, deterministic.
    static func walls(_ n: Int, center: Double, salt: Int = 0) -> [Double] {
        (0..<n).map { center * (1 + 0.02 * sin(Double($0 * 7 + salt))) }
    }
}

struct GateDecisionTests {
    @Test func aJobsRunAgainstASerialBaselineIsRefusedUnlessAskedAndThenItsTimingsAreJudged() throws {
        let key = Fake.key()
        let old = Fake.walls(10, center: 0.05).enumerated().map { Fake.trial(key, repetition: $0.offset + 1, wall: $0.element) }
        let new = Fake.walls(10, center: 0.08, salt: 3).enumerated().map { Fake.trial(key, repetition: $0.offset + 1, wall: $0.element) }
        let serial = Fake.run(old)
        var parallel = Fake.run(new)
        parallel.execution = ExecutionRecord(isolation: .server, serverTrials: 10, jobs: 4)
        for mode in [GateReport.Mode.crossRun, .interleaved] {
            #expect(throws: GateError.self, "a --jobs 4 run against a serial one (\(mode))") {
                try Gate.compare(baseline: serial, candidate: parallel, options: GateOptions(mode: mode, allowFingerprintMismatch: true))
            }
        }
        do {
            _ = try Gate.compare(baseline: serial, candidate: parallel, options: GateOptions(mode: .interleaved))
        } catch {
            #expect(error.kind == .input)
            #expect(error.description.contains("ran 1 trial at once and the candidate 4 (--jobs)"), "\(error)")
            #expect(error.description.contains("--allow-execution-mismatch"))
        }
        let asked = try Gate.compare(baseline: serial, candidate: parallel, options: GateOptions(mode: .interleaved, allowExecutionMismatch: true))
        #expect(asked.rows.first?.metrics.first { $0.metric == "wall" }?.verdict == .regressed, "asked, the timings are compared")
    }

    @Test func spawnedTrialsAgainstServerCopiesJudgeOutcomesAndStacksButNotTimingsUnlessAsked() throws {
        let key = Fake.key()
        let old = Fake.walls(10, center: 0.05).enumerated().map { Fake.trial(key, repetition: $0.offset + 1, wall: $0.element, stack: 65536) }
        let new = Fake.walls(10, center: 0.08, salt: 3).enumerated().map { Fake.trial(key, repetition: $0.offset + 1, wall: $0.element, stack: 65536) }
        let spawned = Fake.run(old)
        var copied = Fake.run(new)
        copied.execution = ExecutionRecord(isolation: .server, serverTrials: 10)
        let report = try Gate.compare(baseline: spawned, candidate: copied, options: GateOptions(mode: .interleaved))
        let wall = try #require(report.rows.first?.metrics.first { $0.metric == "wall" })
        #expect(wall.verdict == .inconclusive)
        #expect(wall.reason.contains("--isolation"), "\(wall.reason)")
        #expect(report.rows.first?.metrics.first { $0.metric == "stack-high-water" }?.verdict == .unchanged, "deterministic metrics are still judged")
        #expect(report.exitCode == 0)

        let crashed = Fake.run(new.map { var trial = $0; trial.outcome = TrialOutcome(kind: .crashed, signal: 11); trial.expected = false; return trial })
        var crashedCopies = crashed
        crashedCopies.execution = copied.execution
        let worse = try Gate.compare(baseline: spawned, candidate: crashedCopies, options: GateOptions(mode: .interleaved))
        #expect(worse.exitCode == 1, "an outcome that got worse fails whatever the isolation")
        let asked = try Gate.compare(baseline: spawned, candidate: copied, options: GateOptions(mode: .interleaved, allowExecutionMismatch: true))
        #expect(asked.rows.first?.metrics.first { $0.metric == "wall" }?.verdict == .regressed)
    }

    @Test func anAABetweenIdenticalDistributionsPasses() throws {
        let key = Fake.key()
        let old = Fake.walls(10, center: 0.05).enumerated().map { Fake.trial(key, repetition: $0.offset + 1, wall: $0.element, stack: 65536) }
        let new = Fake.walls(10, center: 0.05, salt: 3).enumerated().map { Fake.trial(key, repetition: $0.offset + 1, wall: $0.element, stack: 65536) }
        let report = try Gate.compare(baseline: Fake.run(old), candidate: Fake.run(new), options: GateOptions(mode: .interleaved))
        #expect(report.exitCode == 0, "\(report.renderText())")
        #expect(report.rows.first?.metrics.first { $0.metric == "wall" }?.verdict == .unchanged)
    }

    @Test func aThirtyPercentSlowerRowRegressesWithItsEffectIntervalAndQValue() throws {
        let slow = Fake.key()
        let steady = Fake.key("noop", [])
        let old = Fake.walls(10, center: 0.05).enumerated().flatMap { [Fake.trial(slow, repetition: $0.offset + 1, wall: $0.element), Fake.trial(steady, repetition: $0.offset + 1, wall: $0.element / 10)] }
        let new = Fake.walls(10, center: 0.065, salt: 5).enumerated().flatMap { [Fake.trial(slow, repetition: $0.offset + 1, wall: $0.element), Fake.trial(steady, repetition: $0.offset + 1, wall: $0.element / 20)] }
        let report = try Gate.compare(baseline: Fake.run(old), candidate: Fake.run(new), options: GateOptions(mode: .interleaved))
        #expect(report.exitCode == 1)
        let row = try #require(report.rows.first { $0.key == slow })
        #expect(row.verdict == .regressed)
        let wall = try #require(row.metrics.first { $0.metric == "wall" })
        #expect(abs((wall.ratio ?? 0) - 1.3) < 0.03)
        #expect((wall.ratioLow ?? 0) <= (wall.ratio ?? 0) && (wall.ratio ?? 0) <= (wall.ratioHigh ?? 0))
        #expect((wall.qValue ?? 1) < 0.05)
        #expect(report.rows.first { $0.key == steady }?.verdict == .improved, "getting faster never fails")
    }

    @Test func aSlowdownEstimatedBeyondDeltaThatTheNoiseLeavesUnprovenIsInconclusiveNotUnchanged() throws {
        let key = Fake.key()
        // Every other repetition of each side hit by a 1.6–2.4× hiccup: the medians
        // say 30 % slower, the ranks cannot prove more than 10 %.
        let hiccups = [1.0, 2.4, 1.0, 1.6, 1.0, 2.0, 1.0, 1.8, 1.0, 2.2]
        let old = Fake.walls(10, center: 0.05).enumerated().map { Fake.trial(key, repetition: $0.offset + 1, wall: $0.element * hiccups[$0.offset]) }
        let new = Fake.walls(10, center: 0.065, salt: 5).enumerated().map { Fake.trial(key, repetition: $0.offset + 1, wall: $0.element * hiccups[($0.offset + 1) % 10]) }
        let report = try Gate.compare(baseline: Fake.run(old), candidate: Fake.run(new), options: GateOptions(mode: .interleaved))
        let wall = try #require(report.rows[0].metrics.first { $0.metric == "wall" })
        #expect((wall.ratio ?? 0) > 1.1, "\(wall.ratio ?? 0)")
        #expect((wall.qValue ?? 0) > 0.05, "\(wall.qValue ?? 0)")
        #expect(wall.verdict == .inconclusive, "\(wall.reason)")
        #expect(wall.reason.contains("more repetitions"))
        #expect(report.exitCode == 0, "an unproven slowdown does not fail")
        // The summary counts such rows under one reason, and does not give them the
        // advice for rows below the repetitions floor (they are above it).
        let text = report.renderText()
        // Worded as gate.md and gate.html word its reason ("estimated worse by …"; the terminal said "slower").
        #expect(text.contains("1 row inconclusive (1 estimated worse beyond δ but not beyond the noise: more repetitions would decide)"), "\(text)")
        #expect(!text.contains("can fail only with"), "\(text)")
        #expect(wall.reason.hasPrefix("estimated worse by "), "\(wall.reason)")
        // One name for the δ column and the other rows' group in gate.md and gate.html, and `(q 0.2)` kept whole on a phone.
        let markdown = report.renderMarkdown()
        let html = report.renderHTML()
        #expect(markdown.contains("| δ, floor (from) |") && !markdown.contains("| δ (from) |"), "\(markdown)")
        #expect(GateReport.columns.contains("δ, floor (from)"))
        #expect(markdown.contains("(inconclusive)") && html.contains("<h2>Inconclusive</h2>"), "the kinds that occurred: \(html)")
        #expect(html.contains("(q&nbsp;") && !html.contains("(q "), "\(html)")
    }

    @Test func aStackHighWaterThatGrewBeyondAPageFailsWithOneRepetition() throws {
        let key = Fake.key("frames", [("depth", "2000")], strategy: .thread(stackBytes: 8 << 20))
        let report = try Gate.compare(
            baseline: Fake.run([Fake.trial(key, repetition: 1, wall: 0.01, stack: 1_200_000)]),
            candidate: Fake.run([Fake.trial(key, repetition: 1, wall: 0.01, stack: 1_440_000)]),
            options: GateOptions(mode: .interleaved))
        #expect(report.exitCode == 1)
        let stack = try #require(report.rows[0].metrics.first { $0.metric == "stack-high-water" })
        #expect(stack.verdict == .regressed)
        #expect(report.rows[0].metrics.first { $0.metric == "wall" }?.verdict == .inconclusive, "one repetition cannot judge a timing")
    }

    @Test func aStackWithinOnePageIsUnchanged() throws {
        let key = Fake.key()
        let report = try Gate.compare(
            baseline: Fake.run([Fake.trial(key, repetition: 1, stack: 100_000)]),
            candidate: Fake.run([Fake.trial(key, repetition: 1, stack: 104_000)]), options: GateOptions(mode: .interleaved))
        #expect(report.exitCode == 0)
    }

    @Test func anOutcomeThatGotWorseFailsWhateverTheStatistics() throws {
        let key = Fake.key()
        let report = try Gate.compare(
            baseline: Fake.run([Fake.trial(key, repetition: 1, wall: 0.01)]),
            candidate: Fake.run([Fake.trial(key, repetition: 1, outcome: TrialOutcome(kind: .stackOverflow, signal: 11), expected: false)]),
            options: GateOptions(mode: .interleaved))
        #expect(report.exitCode == 1)
        #expect(report.rows[0].verdict == .outcomeChanged)
    }

    @Test func aNewOutcomeInTheHistogramFailsEvenWhenMostRepetitionsComplete() throws {
        let key = Fake.key()
        let old = (1...5).map { Fake.trial(key, repetition: $0, wall: 0.01) }
        var new = (1...5).map { Fake.trial(key, repetition: $0, wall: 0.01) }
        new[4] = Fake.trial(key, repetition: 5, outcome: TrialOutcome(kind: .crashed, signal: 6))
        let report = try Gate.compare(baseline: Fake.run(old), candidate: Fake.run(new), options: GateOptions(mode: .interleaved))
        #expect(report.rows[0].verdict == .outcomeChanged)
    }

    @Test func aRowThatNowCompletesIsFixedAndPasses() throws {
        let key = Fake.key()
        let report = try Gate.compare(
            baseline: Fake.run([Fake.trial(key, repetition: 1, outcome: TrialOutcome(kind: .stackOverflow, signal: 11))]),
            candidate: Fake.run([Fake.trial(key, repetition: 1, wall: 0.01)]), options: GateOptions(mode: .interleaved))
        #expect(report.rows[0].verdict == .fixed)
        #expect(report.exitCode == 0)
    }

    @Test func aMissingRowIsIncompleteDataNeverAPass() throws {
        let report = try Gate.compare(
            baseline: Fake.run([Fake.trial(Fake.key(), repetition: 1), Fake.trial(Fake.key("noop", []), repetition: 1)]),
            candidate: Fake.run([Fake.trial(Fake.key(), repetition: 1)]), options: GateOptions(mode: .interleaved))
        #expect(report.exitCode == 3)
        #expect(report.rows.contains { $0.verdict == .missing })
    }

    @Test func tooFewRepetitionsAreInconclusiveAndSayHowManyAreNeeded() throws {
        let key = Fake.key()
        let report = try Gate.compare(
            baseline: Fake.run((1...2).map { Fake.trial(key, repetition: $0, wall: 0.05 + Double($0) * 0.001) }),
            candidate: Fake.run((1...2).map { Fake.trial(key, repetition: $0, wall: 0.09 + Double($0) * 0.001) }), options: GateOptions(mode: .interleaved))
        let wall = try #require(report.rows[0].metrics.first { $0.metric == "wall" })
        #expect(wall.verdict == .inconclusive)
        #expect(wall.reason.contains("needs ≥ \(report.requiredRepetitions) per side"))
        #expect(report.exitCode == 0)
    }

    @Test func keysJoinWhateverOrderTheParametersWereListedIn() throws {
        let report = try Gate.compare(
            baseline: Fake.run([Fake.trial(Fake.key("graph", [("size", "2"), ("shape", "chain")]), repetition: 1)]),
            candidate: Fake.run([Fake.trial(Fake.key("graph", [("shape", "chain"), ("size", "2")]), repetition: 1)]),
            options: GateOptions(mode: .interleaved))
        #expect(report.rows.count == 1)
        #expect(report.exitCode == 0)
    }

    @Test func aCrossRunAgainstAMachineThatDiffersIsRefusedUnlessAllowed() throws {
        var other = Fake.environment
        other.cores = 16
        let key = Fake.key()
        let baseline = Fake.run([Fake.trial(key, repetition: 1, stack: 1000)], environment: other)
        let candidate = Fake.run([Fake.trial(key, repetition: 1, stack: 1000)])
        #expect(throws: GateError.self) { try Gate.compare(baseline: baseline, candidate: candidate, options: GateOptions(mode: .crossRun)) }
        let allowed = try Gate.compare(baseline: baseline, candidate: candidate, options: GateOptions(mode: .crossRun, allowFingerprintMismatch: true))
        #expect(allowed.fingerprint.contains { $0.field == "cores" && $0.hard })
    }

    @Test func aCrossRunTimingIsInconclusiveUntilCalibratedAndUsesTheCalibratedDelta() throws {
        let key = Fake.key()
        let old = Fake.walls(10, center: 0.05).enumerated().map { Fake.trial(key, repetition: $0.offset + 1, wall: $0.element) }
        let rerun = Fake.walls(10, center: 0.06, salt: 2).enumerated().map { Fake.trial(key, repetition: $0.offset + 1, wall: $0.element) }
        let uncalibrated = try Gate.compare(baseline: Fake.run(old), candidate: Fake.run(rerun), options: GateOptions(mode: .crossRun))
        #expect(uncalibrated.rows[0].metrics.first { $0.metric == "wall" }?.verdict == .inconclusive)
        // The A/A rerun drifted 20 %: calibrated, the same drift no longer fails.
        let (calibrated, rows) = Gate.calibrate(BaselineFile(name: "b", savedAt: "", source: "", run: Fake.run(old)), with: Fake.run(rerun))
        #expect(rows >= 1)
        let report = try Gate.compare(baseline: Fake.run(old), candidate: Fake.run(rerun), options: GateOptions(mode: .crossRun, calibration: calibrated.calibration ?? [:]))
        let wall = try #require(report.rows[0].metrics.first { $0.metric == "wall" })
        #expect(wall.thresholdSource == "calibration")
        #expect(wall.verdict == .unchanged, "\(wall.reason)")
        // The header says what was done with the timings: it said "timings use a δ calibrated
        // from A/A runs" over rows that each said theirs was not.
        #expect(uncalibrated.crossRunSentence.hasSuffix("; its measurements (times, rates, peak RSS) are not judged: the baseline has no δ calibrated from an A/A run (strain gate --calibrate)."), "\(uncalibrated.crossRunSentence)")
        #expect(uncalibrated.renderMarkdown().contains(uncalibrated.crossRunSentence) && GateReportReadingTests.readable(uncalibrated.renderHTML()).contains("its measurements (times, rates, peak RSS) are not judged"))
        #expect(report.crossRunSentence.hasSuffix("; its measurements (times, rates, peak RSS) are judged with a δ calibrated from A/A runs."), "\(report.crossRunSentence)")
        // Not judged, the timings get no rule for failing beside that sentence (35i read "its
        // timings are not judged" then "A timing row can fail only with ≥ 3 repetitions per side").
        #expect(uncalibrated.repetitionsSentence == nil)
        #expect(!uncalibrated.renderMarkdown().contains("can fail only with") && !GateReportReadingTests.readable(uncalibrated.renderHTML()).contains("can fail only with"))
        #expect(report.renderMarkdown().contains("A timing row can fail only with ≥ \(report.requiredRepetitions) repetitions per side."))
    }

    @Test func anUncalibratedCrossRunGateNamesEachMetricByWhatItMeasuresAndCountsMetricsAsTheTablesDo() throws {
        let keys = [Fake.key("a", []), Fake.key("b", [])]
        func side(_ center: Double, salt: Int) -> RunRecord {
            Fake.run(keys.flatMap { key in
                Fake.walls(5, center: center, salt: salt).enumerated().map { index, wall in
                    var trial = Fake.trial(key, repetition: index + 1, wall: wall)
                    trial.metrics.peakRSSBytes = 15 << 20 + index * 4096
                    return trial
                }
            })
        }
        let report = try Gate.compare(baseline: side(0.05, salt: 0), candidate: side(0.05, salt: 3), options: GateOptions(mode: .crossRun))
        let metrics = report.rows.flatMap(\.metrics)
        // rss is not a timing: 35i read "rss: a cross-run timing needs a δ calibrated …".
        #expect(metrics.first { $0.metric == "rss" }?.reason.hasPrefix("a cross-run memory figure needs a δ calibrated") == true, "\(metrics.map(\.reason))")
        #expect(metrics.first { $0.metric == "wall" }?.reason.hasPrefix("a cross-run timing needs a δ calibrated") == true)
        // The terminal counted rows ("2 rows inconclusive (2 cross-run timings …)") beside
        // gate.md's four inconclusive metrics: it counts the metrics, and says so.
        let inconclusive = metrics.filter { $0.verdict == .inconclusive }.count
        #expect(inconclusive == 4)
        #expect(report.renderText().contains("  2 rows inconclusive in 4 metrics (4 cross-run measurements not calibrated)"), "\(report.renderText())")
    }

    @Test func githubAnnotationsEscapeTheirDataAndProperties() {
        #expect(WorkflowCommand.data("50% a\r\nb") == "50%25 a%0D%0Ab")
        #expect(WorkflowCommand.property("a:b,c%") == "a%3Ab%2Cc%25")
    }

    @Test func githubShowsTheWorstTenErrorsThenANoticeWithTheRest() throws {
        let old = (1...12).map { Fake.trial(Fake.key("s\($0)", []), repetition: 1, wall: 0.01) }
        let new = (1...12).map { Fake.trial(Fake.key("s\($0)", []), repetition: 1, outcome: TrialOutcome(kind: .crashed, signal: 11), expected: false) }
        let report = try Gate.compare(baseline: Fake.run(old), candidate: Fake.run(new), options: GateOptions(mode: .interleaved))
        let lines = report.renderGitHub().split(separator: "\n")
        #expect(lines.filter { $0.hasPrefix("::error ") }.count == 10)
        #expect(lines.contains { $0.hasPrefix("::notice") && $0.contains("2 more failing rows") })
        #expect(lines.first?.contains("file=s.yaml") == true)
    }

    @Test func theMarkdownCommentCarriesItsMarkerAndStaysUnderTheLimit() throws {
        let old = (1...400).map { Fake.trial(Fake.key("scenario-with-a-long-name-\($0)", [("parameter", String(repeating: "x", count: 80))]), repetition: 1, wall: 0.01) }
        let new = old.map { Fake.trial($0.key, repetition: 1, outcome: TrialOutcome(kind: .crashed, signal: 11), expected: false) }
        let report = try Gate.compare(baseline: Fake.run(old), candidate: Fake.run(new), options: GateOptions(mode: .interleaved))
        let markdown = report.renderMarkdown(limit: 65_536)
        #expect(markdown.hasPrefix(GateReport.commentMarker))
        #expect(markdown.count <= 65_536)
        #expect(markdown.contains("Cut to fit"))
    }
}

/// Findings of a review, each reproduced before it was fixed.
struct GateReviewFindingTests {
    static func gate(_ old: [TrialRecord], _ new: [TrialRecord]) throws -> GateReport {
        try Gate.compare(baseline: Fake.run(old), candidate: Fake.run(new), options: GateOptions(mode: .interleaved))
    }

    @Test func aRowThatMostlyCompletedAndNowNeverDoesIsAnOutcomeChange() throws {
        let key = Fake.key()
        let timedOut = TrialOutcome(kind: .timedOut)
        let old = (1...5).map { Fake.trial(key, repetition: $0, wall: 0.01) } + [Fake.trial(key, repetition: 6, outcome: timedOut, expected: false)]
        let new = (1...6).map { Fake.trial(key, repetition: $0, outcome: timedOut, expected: false) }
        let report = try Self.gate(old, new)
        #expect(report.rows[0].verdict == .outcomeChanged, "\(report.rows[0])")
        #expect(report.exitCode == 1)
    }

    @Test func anUnexpectedNewOutcomeIsNotHiddenBehindAnExpectedOne() throws {
        let key = Fake.key()
        func trial(_ repetition: Int, _ outcome: TrialOutcome, _ expected: Bool) -> TrialRecord {
            var trial = Fake.trial(key, repetition: repetition, wall: 0.01, outcome: outcome, expected: expected)
            trial.expectedOutcomes = ["completed", "crashed"]
            return trial
        }
        let old = (1...5).map { trial($0, .completed, true) } + [trial(6, TrialOutcome(kind: .deadlocked), false)]
        let new = (1...2).map { trial($0, TrialOutcome(kind: .crashed, signal: 6), true) } + (3...6).map { trial($0, TrialOutcome(kind: .timedOut), false) }
        #expect(try Self.gate(old, new).rows[0].verdict == .outcomeChanged)
    }

    /// A row that overflowed every time and now times out every time, both outcomes
    /// its suite expects, passes, but every output says its outcomes changed: it was
    /// listed "unchanged in every metric and outcome", and gate.md left it out.
    @Test func outcomesThatChangeAmongExpectedOnesPassButAreNeverCalledUnchanged() throws {
        let key = Fake.key()
        func trial(_ repetition: Int, _ outcome: TrialOutcome) -> TrialRecord {
            var trial = Fake.trial(key, repetition: repetition, outcome: outcome, expected: true)
            trial.expectedOutcomes = ["stackOverflow", "timedOut"]
            return trial
        }
        let report = try Self.gate((1...2).map { trial($0, TrialOutcome(kind: .stackOverflow)) }, (1...2).map { trial($0, TrialOutcome(kind: .timedOut)) })
        let row = try #require(report.rows.first)
        #expect(report.exitCode == 0, "both outcomes are expected: \(row)")
        #expect(row.outcomeReason == "the outcomes changed, each one the suite expects: stackOverflow ×2 → timedOut ×2", "\(row)")
        #expect(!row.isUnchangedThroughout)
        #expect(report.tally.hasPrefix("1 trial key compared, 0 unchanged in every metric and outcome"), "\(report.tally)")
        let text = report.renderText()
        #expect(text.contains("      outcome: the outcomes changed, each one the suite expects: stackOverflow ×2 → timedOut ×2"), "\(text)")
        let markdown = report.renderMarkdown()
        #expect(markdown.contains("the outcomes changed, each one the suite expects") && markdown.contains("outcomes changed as the suite expects"), "\(markdown)")
        let html = report.renderHTML()
        #expect(html.contains("the outcomes changed, each one the suite expects"), "\(html)")
        #expect(!html.contains("unchanged in every metric and outcome</summary>"), "no list of unchanged rows holds it: \(html)")
    }

    @Test func aThroughputThatDropsToZeroRegresses() throws {
        let key = Fake.key()
        func trial(_ repetition: Int, _ throughput: Double) -> TrialRecord {
            var trial = Fake.trial(key, repetition: repetition, wall: 0.01)
            trial.metrics.throughputPerSecond = throughput
            return trial
        }
        let report = try Self.gate((1...8).map { trial($0, 1000 + Double($0)) }, (1...8).map { trial($0, 0) })
        let throughput = try #require(report.rows[0].metrics.first { $0.metric == "throughput" })
        #expect(throughput.verdict == .regressed, "\(throughput.reason)")
        #expect(throughput.reason.hasPrefix("worse by 100.0%"), "the change reads as a magnitude: \(throughput.reason)")
    }

    @Test func aHarnessErrorInTheBaselineIsIncompleteDataNotAFix() throws {
        let key = Fake.key()
        let report = try Self.gate([Fake.trial(key, repetition: 1, outcome: TrialOutcome(kind: .harnessError, message: "spawn failed"), expected: false)],
                                   [Fake.trial(key, repetition: 1, wall: 0.01)])
        #expect(report.rows[0].verdict == .harnessError)
        #expect(report.exitCode == 3)
    }

    @Test func aThreadExplosionFailsOnceTheBaselineShowsItsCountIsStableAndJitterOfOneThreadDoesNot() throws {
        let key = Fake.key(strategy: .gcdGlobal(.default))
        func trials(_ threads: [Int]) -> [TrialRecord] {
            threads.enumerated().map { index, count in
                var trial = Fake.trial(key, repetition: index + 1, wall: 0.01)
                trial.metrics.peakThreads = count
                return trial
            }
        }
        func verdict(_ old: [Int], _ new: [Int]) throws -> GateVerdict? {
            try Self.gate(trials(old), trials(new)).rows[0].metrics.first { $0.metric == "peak-threads" }?.verdict
        }
        #expect(try verdict([4, 4, 5], [64, 64, 64]) == .regressed)
        #expect(try verdict([4, 5, 4], [5, 5, 4]) == .unchanged)
        #expect(try verdict([4], [64]) == .inconclusive, "one sampled repetition cannot show the count is stable")
        #expect(try verdict([1, 1, 1], [4]) == .inconclusive, "nor can one candidate repetition")
        #expect(try verdict([35, 102], [100, 100]) == .inconclusive, "a count that varies in the baseline is not deterministic")
    }

    @Test func aCalibrationFromARunThatSharesNoRowCalibratesNothing() {
        let baseline = BaselineFile(name: "b", savedAt: "", source: "", run: Fake.run((1...3).map { Fake.trial(Fake.key(), repetition: $0, wall: 0.01) }))
        let (_, rows) = Gate.calibrate(baseline, with: Fake.run((1...3).map { Fake.trial(Fake.key("other", []), repetition: $0, wall: 0.01) }))
        #expect(rows == 0)
    }

    @Test func theCommentLimitCountsBytesNotCharacters() throws {
        let old = (1...3000).map { Fake.trial(Fake.key("s\($0)", [("name", "→×δ–→×δ–→×δ–")]), repetition: 1, wall: 0.01) }
        let report = try Self.gate(old, [])
        let markdown = report.renderMarkdown(limit: GateReport.commentLimit)
        #expect(markdown.utf8.count <= GateReport.commentLimit)
        #expect(markdown.hasSuffix("so it can differ from the median change.\n") && markdown.contains("Benjamini-Hochberg q = 0.05."), "the tail survives the cut (named as gate.html names it)")
    }
}

struct ShardMergeTests {
    static func shard(_ index: Int, of count: Int, trials: [TrialRecord], plan: String = "p", total: Int) -> RunRecord {
        var run = Fake.run(trials)
        run.plan = PlanRecord(hash: plan, trialCount: total, shard: ShardRecord(index: index, count: count, trialCount: trials.count))
        return run
    }

    @Test func completeShardsMergeIntoTheWholePlan() throws {
        let trials = (1...6).map { Fake.trial(Fake.key("s\($0)", []), repetition: 1) }
        let merged = try RunMerger.mergeShards([
            ("a", Self.shard(1, of: 2, trials: Array(trials[0..<2]), total: 6)),
            ("b", Self.shard(2, of: 2, trials: Array(trials[2...]), total: 6)),
        ])
        #expect(Set(merged.trials.map(\.id)) == Set(trials.map(\.id)))
        #expect(merged.shards?.count == 2)
        #expect(merged.plan?.shard == nil)
    }

    @Test func aMissingShardIsIncomplete() {
        let trials = (1...6).map { Fake.trial(Fake.key("s\($0)", []), repetition: 1) }
        #expect {
            try RunMerger.mergeShards([("a", Self.shard(1, of: 3, trials: Array(trials[0..<2]), total: 6))])
        } throws: { ($0 as? GateError)?.kind == .incomplete && "\($0)".contains("2/3, 3/3") }
    }

    @Test func shardsOfDifferentPlansAreRefused() {
        #expect {
            try RunMerger.mergeShards([
                ("a", Self.shard(1, of: 2, trials: [], plan: "p", total: 0)),
                ("b", Self.shard(2, of: 2, trials: [], plan: "q", total: 0)),
            ])
        } throws: { ($0 as? GateError)?.kind == .input && "\($0)".contains("another plan") }
    }
}

@Test func theGateWritesThroughputAsTheRunsReportsDo() {
    // It wrote 1.28e+07/s beside runs that said 12.8 M/s.
    #expect(Gate.format(12_800_000, .perSecond) == "12.8 M/s")
    #expect(Gate.format(358_400, .perSecond) == "358 k/s")
    #expect(Gate.format(42, .perSecond) == "42 /s")
    // Times and sizes as the run's reports write them (`23.84 ms`, a floor of `256.0 KiB`).
    #expect(Gate.format(0.02384, .seconds) == "23.8 ms" && Gate.format(0.0012, .seconds) == "1.20 ms" && Gate.format(262_144, .bytes) == "256 KiB")
    #expect(Gate.format(66_200, .nanoseconds) == "66.2 µs")
}
