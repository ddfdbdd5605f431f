import StrainRecords

/// One metric of one trial key, baseline against candidate.
package struct MetricComparison: Codable, Hashable, Sendable {
    package var metric: String
    package var unit: MetricDescriptor.Unit
    package var noise: MetricDescriptor.Noise
    package var polarity: MetricDescriptor.Polarity?
    package var baselineMedian: Double?
    package var candidateMedian: Double?
    /// Candidate median over baseline median, minus one, in percent.
    package var changePercent: Double?
    /// Hodges-Lehmann estimate of candidate / baseline (timing metrics).
    package var ratio: Double?
    /// The 95 % interval of that ratio, by inverting the test: for reading, it does not decide.
    package var ratioLow: Double?
    package var ratioHigh: Double?
    /// One-sided p of "worse by more than δ", and its Benjamini-Hochberg q-value.
    package var pValue: Double?
    package var qValue: Double?
    /// Repetitions that counted on each side.
    package var baselineCount: Int
    package var candidateCount: Int
    /// The threshold applied, and where it came from (`default`, `suite`, `run`, `calibration`).
    package var delta: Double
    package var floor: Double
    package var thresholdSource: String
    package var verdict: GateVerdict
    /// Why, in a sentence.
    package var reason: String
    /// For a counted allocation regression: the call sites whose counts grew most,
    /// `OrderModel.swift:42 (Order.init(from:)) +1,000 allocs a trial`.
    package var grewAt: [String]?
    /// Every repetition's value on each side, in the order they ran: the gate's picture
    /// of the samples (a bimodal side shows as two clusters of dots).
    package var baselineSamples: [Double]?
    package var candidateSamples: [Double]?
}

/// One trial key: its outcomes on both sides and its metrics.
package struct RowComparison: Codable, Hashable, Sendable {
    package var key: TrialKey
    package var verdict: GateVerdict
    /// Outcome histograms across repetitions (`completed: 10`).
    package var baselineOutcomes: [String: Int]
    package var candidateOutcomes: [String: Int]
    /// Why the outcome verdict is what it is, when it is not `unchanged`; on an
    /// `unchanged` row, that its outcomes changed among those the suite expects.
    package var outcomeReason: String?
    package var metrics: [MetricComparison]
    /// The line of the suite file's `runs:` entry that made this trial, when known.
    package var suiteLine: Int?
    /// For a row whose outcome changed (or failed in the harness): the candidate trial
    /// that shows it, and where its evidence is.
    package var evidence: TrialEvidence?

    /// Unchanged in every metric and outcome: what the reports fold into one list.
    package var isUnchangedThroughout: Bool { verdict == .unchanged && outcomeReason == nil }
    /// Passed, its outcomes changed among those its suite expects (the reason says how).
    package var outcomesChangedAsExpected: Bool { verdict == .unchanged && outcomeReason != nil }
}

/// One candidate trial behind a failing outcome: where the gate's rendering of the
/// candidate's run shows it, and that evidence in a line for readers who cannot
/// follow the link (a pull-request comment).
package struct TrialEvidence: Codable, Hashable, Sendable {
    /// The trial: its key (the row's) and repetition.
    package var trial: TrialID
    /// The rendered run, relative to the gate's output folder: `candidate/report.html`.
    package var report: String
    /// The trial's id in it: `trial-…-r3`.
    package var anchor: String
    /// The outcome and its evidence in one capped line: the first frames of the
    /// trace, the stall's summary, the first sanitizer report.
    package var line: String
    /// Where the trial failed in the program's own code (a crash's frame with its file
    /// and line): the GitHub annotation is placed there.
    package var place: FailurePlace?
    /// What to do about the trial's outcome, as its run's report advises it ("Why, and
    /// what to do"): a changed outcome got a description and no advice (re-trial 35m).
    package var advice: String?

    /// `candidate/report.html#trial-…-r3`.
    package var link: String { "\(report)#\(anchor)" }

    /// The evidence of `trial` at `anchor` in `report`, in `line`.
    package init(trial: TrialID, report: String, anchor: String, line: String, place: FailurePlace? = nil, advice: String? = nil) {
        self.trial = trial
        self.report = report
        self.anchor = anchor
        self.line = line
        self.place = place
        self.advice = advice
    }
}

/// What the gate decided, and everything a person or a bot needs to see why.
/// Written as `gate.json`; its `exitCode` is the command's.
package struct GateReport: Codable, Sendable {
    /// How the two sides were run.
    package enum Mode: String, Codable, Sendable {
        /// Both builds in one job, repetitions alternating: the default.
        case interleaved
        /// Against a stored baseline from another run.
        case crossRun
    }

    package static let currentSchemaVersion = 1
    package var schemaVersion = GateReport.currentSchemaVersion
    package var mode: Mode
    package var suite: String
    package var suitePath: String
    /// The checkout each side's run started in (run.json's `gitCommit`): one
    /// directory's commit for both sides of an interleaved gate, so not what tells them apart.
    package var baselineCommit: String?
    package var candidateCommit: String?
    /// The executable each side ran: what names the two builds.
    package var baselineBuild: BuildIdentity?
    package var candidateBuild: BuildIdentity?
    /// What the reader should know that does not fail the gate (the two sides ran
    /// different suite text), one sentence each; every output shows them.
    package var warnings: [String]?
    /// The run files written beside the gate's outputs (`baseline-run.json`,
    /// `candidate-run.json` for an interleaved gate), which `strain report` renders.
    package var runFiles: [String]?
    /// Each side's run rendered as a report beside the gate's outputs
    /// (`baseline/report.html`, `candidate/report.html`), which rows' evidence links into.
    package var runReports: [String]?
    package var baselineName: String?
    /// How an interleaved gate ran its two builds: nil for a cross-run gate, or in a
    /// gate.json written before Strain kept it (its rounds then alternated).
    package var schedule: GateSchedule?
    /// The machine the candidate ran on (its run record's host name): JUnit's `hostname`.
    package var candidateHost: String?
    /// False-discovery level across every tested row-metric.
    package var q: Double
    /// Repetitions per side a timing row needs before it can fail at all.
    package var requiredRepetitions: Int
    package var fingerprint: [FingerprintDifference]
    package var rows: [RowComparison]
    /// Row counts by verdict.
    package var counts: [String: Int]
    /// 0 pass, 1 a regression or a worse outcome, 3 harness error or incomplete data.
    package var exitCode: Int32
    /// One sentence: what the gate concluded.
    package var conclusion: String

    /// Rows that fail, worst first (outcomes, then the largest effect).
    package var failing: [RowComparison] {
        rows.filter(\.verdict.fails).sorted { left, right in
            if left.verdict.severity != right.verdict.severity { return left.verdict.severity > right.verdict.severity }
            return left.worstRatio > right.worstRatio
        }
    }
}

/// How an interleaved gate ran its two builds: in rounds, alternating, or (a counted
/// gate) each build's repetitions in one run, with what could not be counted timed in rounds.
package struct GateSchedule: Codable, Hashable, Sendable {
    /// Each build ran all its repetitions in one counted run; false: rounds of one repetition a build, ABBA.
    package var counted: Bool
    /// The two counted runs ran at the same time (on two processors or more).
    package var together: Bool
    /// Repetitions each build ran.
    package var repetitions: Int
    /// Scenarios that could not be counted (their work depends on timing), timed again in alternating rounds.
    package var timedScenarios: [String]

    package init(counted: Bool, together: Bool, repetitions: Int, timedScenarios: [String] = []) {
        self.counted = counted
        self.together = together
        self.repetitions = repetitions
        self.timedScenarios = timedScenarios
    }
}

extension GateReport {
    /// What a cross-run gate did with its timings, for gate.md's and gate.html's header: it
    /// said "timings use a δ calibrated from A/A runs" over rows that each said theirs was not.
    package var crossRunSentence: String {
        let timings = rows.flatMap(\.metrics).filter { $0.noise == .timing }
        let uncalibrated = timings.filter { Self.isUncalibrated($0.reason) }.count
        let against = "Cross-run against \(baselineName ?? "a stored baseline")"
        // "Measurements", as the terminal and each row's reason say: rss is one, and "its
        // timings are not judged" read as if rss was (re-trial 35j); "peak RSS", not "memory",
        // which read as if the counted allocated-bytes were not judged either (35k).
        if timings.isEmpty || uncalibrated == 0 { return against + "; its measurements (times, rates, peak RSS) are judged with a δ calibrated from A/A runs." }
        if uncalibrated == timings.count {
            return against + "; its measurements (times, rates, peak RSS) are not judged: the baseline has no δ calibrated from an A/A run (strain gate --calibrate)."
        }
        return against + "; its measurements (times, rates, peak RSS) are judged with a δ calibrated from A/A runs, but for \(uncalibrated) of \(timings.count) the baseline has none (strain gate --calibrate)."
    }

    /// What a cross-run timing without a calibrated δ is told, after `a cross-run timing`.
    package static let uncalibratedWords = "needs a δ calibrated from an A/A run of the baseline (strain gate --calibrate), or an interleaved gate"

    /// Whether `reason` is that of a cross-run metric left inconclusive for want of a calibrated δ.
    package static func isUncalibrated(_ reason: String) -> Bool {
        reason.hasPrefix("a cross-run ") && reason.hasSuffix(uncalibratedWords)
    }

    /// What a measured (not counted) metric is, by its unit, for a reason: rss is not a
    /// "timing" (35i read `rss: a cross-run timing needs …`).
    package static func measuredNoun(_ unit: MetricDescriptor.Unit) -> String {
        switch unit {
        case .seconds, .nanoseconds: "timing"
        case .perSecond: "rate"
        case .bytes: "memory figure"
        default: "measurement"
        }
    }

    /// The floor a timing must clear to fail, for gate.md's and gate.html's header; nil
    /// where no timing was judged (every one a cross-run timing without a calibrated δ,
    /// or a gate of counts), where it read as a rule for rows the header had just said
    /// were not judged.
    package var repetitionsSentence: String? {
        let timings = rows.flatMap(\.metrics).filter { $0.noise == .timing }
        guard timings.contains(where: { !Self.isUncalibrated($0.reason) }) else { return nil }
        return "A timing row can fail only with ≥ \(requiredRepetitions) repetitions per side."
    }

    /// What an interleaved gate ran, in a sentence, for every output's header: a counted
    /// gate's builds each ran once, so it does not say "alternating" of them.
    package var interleavedSentence: String {
        guard let schedule, schedule.counted else { return "Interleaved A/B: both builds ran in one job, repetitions alternating." }
        let repetitions = schedule.repetitions == 1 ? "its repetition" : "its \(schedule.repetitions) repetitions"
        var text = "Counted A/B: both builds ran in one job, each \(repetitions) in one run, "
            + (schedule.together ? "the two at once" : "one after the other")
            + " (a count does not drift with the machine's load, so it needs no alternating)."
        if !schedule.timedScenarios.isEmpty {
            text += " Not countable, so timed in alternating rounds: \(schedule.timedScenarios.joined(separator: ", "))."
        }
        return text
    }

    /// Which builds were compared, in a sentence: each side's build ID (or binary
    /// hash) and path, then the checkout, said once when both ran from the same one.
    /// `code` formats a literal (backticks in Markdown, `<code>` in HTML), `path` a
    /// build's path (the comment shows it without the runner's folders).
    package func sidesSentence(code: (String) -> String, path: (String) -> String = { $0 }) -> String? {
        func side(_ build: BuildIdentity?, _ commit: String?) -> String? {
            if let build {
                let name = build.buildID.map { "build \(code(String($0.prefix(12))))" }
                    ?? build.contentHash.map { "binary hash \(code(String($0.prefix(12))))" } ?? "binary"
                return "\(name) (\(code(path(build.executablePath))))"
            }
            return commit.map { "commit \(code(String($0.prefix(12))))" }
        }
        guard baselineBuild != nil || candidateBuild != nil else {
            guard let baselineCommit, let candidateCommit else { return nil }
            return "Baseline \(code(String(baselineCommit.prefix(12)))), candidate \(code(String(candidateCommit.prefix(12))))."
        }
        var text = "Baseline \(side(baselineBuild, baselineCommit) ?? "unknown"), candidate \(side(candidateBuild, candidateCommit) ?? "unknown")"
        if let baselineBuild, let candidateBuild, baselineBuild.buildID ?? baselineBuild.contentHash == candidateBuild.buildID ?? candidateBuild.contentHash {
            text += " (the same build on both sides)"
        }
        switch (baselineCommit, candidateCommit) {
        case let (old?, new?) where old == new: text += "; both ran from checkout \(code(String(old.prefix(12))))"
        case let (old?, new?): text += "; run from checkouts \(code(String(old.prefix(12)))) and \(code(String(new.prefix(12))))"
        default: break
        }
        return text + "."
    }
}

extension RowComparison {
    /// The largest failing effect among the row's metrics, for ordering.
    var worstRatio: Double {
        metrics.filter(\.verdict.fails).compactMap { $0.ratio ?? $0.changePercent.map { 1 + abs($0) / 100 } }.max() ?? 0
    }
}

extension GateReport {
    /// The first number of a comparison that is not finite, as `KEY METRIC FIELD is VALUE`
    /// with the two sides' values: a side's values too small to divide by (a denormal
    /// wall time of 5e-324 s makes a change infinite), which no run measures and JSON cannot hold.
    package var firstNonFinite: String? {
        for row in rows {
            for metric in row.metrics {
                let fields: [(String, Double?)] = [
                    ("baselineMedian", metric.baselineMedian), ("candidateMedian", metric.candidateMedian), ("changePercent", metric.changePercent),
                    ("ratio", metric.ratio), ("ratioLow", metric.ratioLow), ("ratioHigh", metric.ratioHigh), ("pValue", metric.pValue),
                    ("qValue", metric.qValue), ("delta", metric.delta), ("floor", metric.floor),
                ] + (metric.baselineSamples ?? []).map { ("a baseline sample", $0) } + (metric.candidateSamples ?? []).map { ("a candidate sample", $0) }
                if let (field, value) = fields.first(where: { $0.1.map { !$0.isFinite } ?? false }) {
                    let sides = "baseline \(metric.baselineSamples.map { "\($0)" } ?? "–"), candidate \(metric.candidateSamples.map { "\($0)" } ?? "–")"
                    return "\(OneLine.text(row.key.description)) \(metric.metric): its \(field) is \(value!) (\(sides))"
                }
            }
        }
        return nil
    }
}
