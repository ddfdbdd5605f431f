import Foundation
import StrainRecords

/// "Which guard should I use": per contention level, the guards ranked by
/// median throughput, with their latency, fairness and outcome histogram across
/// repetitions. Built from trials that have a `guard` parameter and measured
/// operations.
public struct GuardComparison: Sendable {
    public struct Row: Sendable {
        public var guardName: String
        public var strategy: StrategySpec
        public var trials: [TrialRecord]

        public var outcomes: String { RunSummary.Row(strategy: strategy, trials: trials).outcomes }
        public var allExpected: Bool { trials.allSatisfy(\.expected) }
        /// Whether every repetition completed: only such a guard is ranked.
        public var allCompleted: Bool { trials.allSatisfy { $0.outcome.kind == .completed } }
        /// Only completed trials are measured: a run that lost elements or
        /// crashed did not do the work its numbers would claim.
        public var measured: [TrialRecord] { trials.filter { $0.outcome.kind == .completed } }
        public var medianThroughput: Double? { Statistics.median(measured.compactMap(\.metrics.throughputPerSecond)) }
        public var medianP50: Double? { Statistics.median(measured.compactMap { $0.metrics.latency.map { Double($0.p50Nanoseconds) } }) }
        public var medianP99: Double? { Statistics.median(measured.compactMap { $0.metrics.latency.map { Double($0.p99Nanoseconds) } }) }
        /// The 99.9th percentile, from trials that sampled at least 2,000
        /// operations (fewer, and it is little more than the slowest one).
        public var medianP999: Double? {
            Statistics.median(measured.compactMap { $0.metrics.latency.flatMap { $0.count >= 2_000 ? Double($0.p999Nanoseconds) : nil } })
        }
        public var medianFairness: Double? { Statistics.median(measured.compactMap { $0.metrics.fairness?.jainIndex }) }
        /// `8/8`: the workers there when the work began, of those asked for (median).
        public var workersTogether: String {
            guard let together = Statistics.median(measured.compactMap { $0.metrics.custom["workers at the start"] }) else { return "–" }
            return "\(Int(together))/\(trials.first?.parameters["workers"] ?? "?")"
        }
        public var medianContextSwitches: Double? {
            Statistics.median(trials.compactMap { trial in
                guard let voluntary = trial.metrics.voluntaryContextSwitches else { return nil }
                return Double(voluntary + (trial.metrics.involuntaryContextSwitches ?? 0))
            })
        }
    }

    public struct Table: Sendable {
        /// What the rows share: the scenario, its parameters but the guard and the
        /// measurement knobs, and the profile.
        public var key: ComparisonKey
        /// Fastest first; guards that never finished a trial last.
        public var rows: [Row]

        public var scenario: String { key.scenario }
        public var title: String { "\(key.title): guards by throughput" }
    }

    public let tables: [Table]

    public init(_ run: RunRecord) {
        var tables: [Table] = []
        for trial in run.trials where Self.applies(to: trial, in: run) {
            guard let guardName = trial.parameters["guard"] else { continue }
            var shared = trial.key.comparison
            // Measurement knobs, not conditions: rows that differ only in them compare.
            shared.parameters.removeAll { ["guard", "operations", "sample-every", "subscriptions"].contains($0.name) }
            let tableIndex = tables.firstIndex { $0.key == shared } ?? {
                tables.append(Table(key: shared, rows: []))
                return tables.count - 1
            }()
            if let row = tables[tableIndex].rows.firstIndex(where: { $0.guardName == guardName && $0.strategy == trial.strategy }) {
                tables[tableIndex].rows[row].trials.append(trial)
            } else {
                tables[tableIndex].rows.append(Row(guardName: guardName, strategy: trial.strategy, trials: [trial]))
            }
        }
        // Guards whose every trial completed first, fastest first; then the rest.
        for index in tables.indices {
            tables[index].rows.sort { ($0.allCompleted ? 1 : 0, $0.medianThroughput ?? -1) > ($1.allCompleted ? 1 : 0, $1.medianThroughput ?? -1) }
        }
        self.tables = tables
    }

    /// Trials of scenarios that take a `guard` and count operations.
    static func applies(to trial: TrialRecord, in run: RunRecord) -> Bool {
        guard trial.parameters["guard"] != nil else { return false }
        return run.trials.contains { $0.scenario == trial.scenario && $0.metrics.throughputPerSecond != nil }
    }

    /// Whether a summary group's trials are shown in a comparison table instead.
    public static func covers(_ group: RunSummary.Group, in run: RunRecord) -> Bool {
        group.rows.contains { row in row.trials.contains { applies(to: $0, in: run) } }
    }

    /// The cells of a row, as both reports show them.
    public static func cells(_ row: Row, rank: Int) -> [String] {
        [
            row.medianThroughput == nil || !row.allCompleted ? "–" : "\(rank)", row.guardName, row.strategy.description,
            Format.rate(row.medianThroughput), Format.nanoseconds(row.medianP50), Format.nanoseconds(row.medianP99),
            Format.nanoseconds(row.medianP999), row.medianFairness.map { String(format: "%.2f", $0) } ?? "–", row.workersTogether, row.outcomes,
        ]
    }

    public static let header = ["#", "guard", "strategy", "throughput", "p50", "p99", "p99.9", "fairness", "together", "outcomes"]
}

/// The harness against its C reference: an uncontended pthread_mutex pair
/// measured by the worker loop and by a tight C loop in the same child.
public enum ReferenceComparison {
    /// `sample-every=16: harness 16.7 ns/op, C loop 12.5 ns/op: 1.33× (median of 11)`.
    public static func lines(_ run: RunRecord) -> [String] {
        let measured = run.trials.filter { $0.metrics.custom["ratio to C reference"] != nil }
        let bySampling = Dictionary(grouping: measured) { $0.parameters["sample-every"] ?? "default" }
        return bySampling.keys.sorted { (Int($0) ?? 0) < (Int($1) ?? 0) }.map { key in
            let trials = bySampling[key]!
            let harness = Statistics.median(trials.compactMap { $0.metrics.custom["ns per op"] })
            let reference = Statistics.median(trials.compactMap { $0.metrics.custom["C reference ns per op"] })
            let ratio = Statistics.median(trials.compactMap { $0.metrics.custom["ratio to C reference"] })
            return String(format: "sample-every=%@: harness %.1f ns/op, C loop %.1f ns/op: %.2f× (median of %d)",
                          key, harness ?? 0, reference ?? 0, ratio ?? 0, trials.count)
        }
    }
}

extension Format {
    /// `26.4 M/s`, `358 k/s`.
    public static func rate(_ perSecond: Double?) -> String {
        guard let perSecond else { return "–" }
        if perSecond >= 1e6 { return String(format: "%.1f M/s", perSecond / 1e6) }
        if perSecond >= 1e3 { return String(format: "%.0f k/s", perSecond / 1e3) }
        return String(format: "%.0f /s", perSecond)
    }

    /// `120 ns`, `1.4 µs`, `2.1 ms`.
    public static func nanoseconds(_ value: Double?) -> String {
        guard let value else { return "–" }
        if value >= 1e6 { return String(format: "%.1f ms", value / 1e6) }
        if value >= 1e3 { return String(format: "%.1f µs", value / 1e3) }
        return String(format: "%.0f ns", value)
    }
}
