import StrainRecords

/// One metric of one trial key, baseline against candidate.
public struct MetricComparison: Codable, Hashable, Sendable {
    public var metric: String
    public var unit: MetricDescriptor.Unit
    public var noise: MetricDescriptor.Noise
    public var polarity: MetricDescriptor.Polarity?
    public var baselineMedian: Double?
    public var candidateMedian: Double?
    /// Candidate median over baseline median, minus one, in percent.
    public var changePercent: Double?
    /// Hodges-Lehmann estimate of candidate / baseline (timing metrics).
    public var ratio: Double?
    /// The 95 % interval of that ratio, by inverting the test: for reading, it does not decide.
    public var ratioLow: Double?
    public var ratioHigh: Double?
    /// One-sided p of "worse by more than δ", and its Benjamini-Hochberg q-value.
    public var pValue: Double?
    public var qValue: Double?
    /// Repetitions that counted on each side.
    public var baselineCount: Int
    public var candidateCount: Int
    /// The threshold applied, and where it came from (`default`, `suite`, `run`, `calibration`).
    public var delta: Double
    public var floor: Double
    public var thresholdSource: String
    public var verdict: GateVerdict
    /// Why, in a sentence.
    public var reason: String
    /// For a counted allocation regression: the call sites whose counts grew most,
    /// `OrderModel.swift:42 (Order.init(from:)) +1,000 allocs a trial`.
    public var grewAt: [String]?
}

/// One trial key: its outcomes on both sides and its metrics.
public struct RowComparison: Codable, Hashable, Sendable {
    public var key: TrialKey
    public var verdict: GateVerdict
    /// Outcome histograms across repetitions (`completed: 10`).
    public var baselineOutcomes: [String: Int]
    public var candidateOutcomes: [String: Int]
    /// Why the outcome verdict is what it is, when it is not `unchanged`.
    public var outcomeReason: String?
    public var metrics: [MetricComparison]
    /// The line of the suite file's `runs:` entry that made this trial, when known.
    public var suiteLine: Int?
}

/// What the gate decided, and everything a person or a bot needs to see why.
/// Written as `gate.json`; its `exitCode` is the command's.
public struct GateReport: Codable, Sendable {
    /// How the two sides were run.
    public enum Mode: String, Codable, Sendable {
        /// Both builds in one job, repetitions alternating: the default.
        case interleaved
        /// Against a stored baseline from another run.
        case crossRun
    }

    public static let currentSchemaVersion = 1
    public var schemaVersion = GateReport.currentSchemaVersion
    public var mode: Mode
    public var suite: String
    public var suitePath: String
    public var baselineCommit: String?
    public var candidateCommit: String?
    public var baselineName: String?
    /// The machine the candidate ran on (its run record's host name): JUnit's `hostname`.
    public var candidateHost: String?
    /// False-discovery level across every tested row-metric.
    public var q: Double
    /// Repetitions per side a timing row needs before it can fail at all.
    public var requiredRepetitions: Int
    public var fingerprint: [FingerprintDifference]
    public var rows: [RowComparison]
    /// Row counts by verdict.
    public var counts: [String: Int]
    /// 0 pass, 1 a regression or a worse outcome, 3 harness error or incomplete data.
    public var exitCode: Int32
    /// One sentence: what the gate concluded.
    public var conclusion: String

    /// Rows that fail, worst first (outcomes, then the largest effect).
    public var failing: [RowComparison] {
        rows.filter(\.verdict.fails).sorted { left, right in
            if left.verdict.severity != right.verdict.severity { return left.verdict.severity > right.verdict.severity }
            return left.worstRatio > right.worstRatio
        }
    }
}

extension RowComparison {
    /// The largest failing effect among the row's metrics, for ordering.
    var worstRatio: Double {
        metrics.filter(\.verdict.fails).compactMap { $0.ratio ?? $0.changePercent.map { 1 + abs($0) / 100 } }.max() ?? 0
    }
}
