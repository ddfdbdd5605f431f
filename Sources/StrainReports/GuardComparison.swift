import Foundation
import StrainRecords
import StrainText

/// "Which guard should I use", and any other question of the same shape: a
/// scenario's trials ranked by one metric across the values of one parameter
/// (its `MetricRanking`s in run.json), per combination of the other parameters,
/// with latency, fairness and the outcome histogram across repetitions. A record
/// that names no rankings (written before they existed) ranks the trials of
/// scenarios with a `guard` parameter and measured operations by throughput.
package struct GuardComparison: Sendable {
    package struct Row: Sendable {
        /// The ranked parameter's value (`NSLock`).
        package var value: String
        package var strategy: StrategySpec
        package var trials: [TrialRecord]
        /// The metric the table ranks by.
        package var metric: MetricDescriptor

        package var outcomes: String { RunSummary.Row(strategy: strategy, trials: trials).outcomes }
        package var allExpected: Bool { trials.allSatisfy(\.expected) }
        /// Whether every repetition completed: only such a row is ranked.
        package var allCompleted: Bool { trials.allSatisfy { $0.outcome.kind == .completed } }
        /// Only completed trials are measured: a run that lost elements or
        /// crashed did not do the work its numbers would claim.
        package var measured: [TrialRecord] { trials.filter { $0.outcome.kind == .completed } }
        /// The median of the ranking's metric over the measured trials.
        package var medianMetric: Double? { Statistics.median(measured.compactMap { $0.metrics.value(of: metric.name) }) }
        package var medianThroughput: Double? { Statistics.median(measured.compactMap(\.metrics.throughputPerSecond)) }
        package var medianP50: Double? { Statistics.median(measured.compactMap { $0.metrics.latency.map { Double($0.p50Nanoseconds) } }) }
        package var medianP99: Double? { Statistics.median(measured.compactMap { $0.metrics.latency.map { Double($0.p99Nanoseconds) } }) }
        /// The 99.9th percentile, from trials that sampled at least 2,000
        /// operations (fewer, and it is little more than the slowest one).
        package var medianP999: Double? {
            Statistics.median(measured.compactMap { $0.metrics.latency.flatMap { $0.count >= 2_000 ? Double($0.p999Nanoseconds) : nil } })
        }
        package var medianFairness: Double? { Statistics.median(measured.compactMap { $0.metrics.fairness?.jainIndex }) }
        /// `8/8`: the workers there when the work began, of those asked for (median).
        package var workersTogether: String {
            guard let together = Statistics.median(measured.compactMap { $0.metrics.custom["workers at the start"] }) else { return "–" }
            // A record read from disk may hold any number here (1e300): never trap converting it.
            let count = Int(exactly: together.rounded(.towardZero)).map(String.init) ?? String(format: "%g", together)
            return "\(count)/\(trials.first?.parameters["workers"] ?? "?")"
        }
    }

    package struct Table: Sendable {
        /// What the rows share: the scenario, its parameters but the ranked one and the
        /// measurement knobs, and the profile.
        package var key: ComparisonKey
        /// What the table ranks.
        package var ranking: MetricRanking
        /// Best first; rows that never finished a trial last.
        package var rows: [Row]

        package var scenario: String { key.scenario }
        /// `contended-collection[workers=8] on linux: guards by throughput`.
        package var title: String { "\(key.title): \(ranking.parameter)s by \(MetricDescriptor.displayName(of: ranking.metric))" }
        /// The column names, as every report shows them.
        package var header: [String] { GuardComparison.header(for: ranking) }
    }

    package let tables: [Table]

    package init(_ run: RunRecord) {
        let descriptors = Dictionary(run.metricDescriptors.map { ($0.name, $0) }) { first, _ in first }
        var tables: [Table] = []
        for ranking in Self.rankings(in: run) {
            let metric = descriptors[ranking.metric] ?? .undeclared(ranking.metric)
            for trial in run.trials where trial.scenario == ranking.scenario {
                guard let value = trial.parameters[ranking.parameter] else { continue }
                var shared = trial.key.comparison
                // Measurement knobs, not conditions: rows that differ only in them compare.
                shared.parameters.removeAll { $0.name == ranking.parameter || ranking.ignoring.contains($0.name) }
                let tableIndex = tables.firstIndex { $0.key == shared && $0.ranking == ranking } ?? {
                    tables.append(Table(key: shared, ranking: ranking, rows: []))
                    return tables.count - 1
                }()
                if let row = tables[tableIndex].rows.firstIndex(where: { $0.value == value && $0.strategy == trial.strategy }) {
                    tables[tableIndex].rows[row].trials.append(trial)
                } else {
                    tables[tableIndex].rows.append(Row(value: value, strategy: trial.strategy, trials: [trial], metric: metric))
                }
            }
        }
        // Rows whose every trial completed first, best first by the metric's polarity; then the rest.
        for index in tables.indices {
            tables[index].rows.sort { left, right in
                if left.allCompleted != right.allCompleted { return left.allCompleted }
                switch (left.medianMetric, right.medianMetric) {
                case (nil, nil): return false
                case (nil, _): return false
                case (_, nil): return true
                case (let a?, let b?): return left.metric.polarity == .lowerIsBetter ? a < b : a > b
                }
            }
        }
        self.tables = tables
    }

    /// The rankings the run's scenarios asked for; for a record that names none,
    /// every scenario with a `guard` parameter and measured operations, by throughput.
    package static func rankings(in run: RunRecord) -> [MetricRanking] {
        if let rankings = run.rankings { return rankings }
        var seen = Set<String>()
        return run.trials.compactMap { trial in
            guard trial.parameters["guard"] != nil, seen.insert(trial.scenario).inserted,
                  run.trials.contains(where: { $0.scenario == trial.scenario && $0.metrics.throughputPerSecond != nil }) else { return nil }
            return MetricRanking(scenario: trial.scenario, parameter: "guard", metric: "throughput", ignoring: ["operations", "sample-every", "subscriptions"])
        }
    }

    /// Whether a summary group's trials are shown in a ranking table instead: a
    /// ranked scenario that measures operations (its table has their throughput,
    /// latency and fairness); any other keeps its group table beside the ranking.
    package static func covers(_ group: RunSummary.Group, in run: RunRecord) -> Bool {
        let rankings = Self.rankings(in: run)
        let measuringOperations = Set(run.trials.filter { $0.metrics.throughputPerSecond != nil }.map(\.scenario))
        return group.rows.contains { row in
            row.trials.contains { trial in
                measuringOperations.contains(trial.scenario)
                    && rankings.contains { $0.scenario == trial.scenario && trial.parameters[$0.parameter] != nil }
            }
        }
    }

    /// The cells of a row, as every report shows them.
    package static func cells(_ row: Row, rank: Int) -> [String] {
        let metric = row.metric.name == "throughput" ? Format.rate(row.medianMetric) : Format.value(row.medianMetric, unit: row.metric.unit)
        return [
            row.medianMetric == nil || !row.allCompleted ? "–" : "\(rank)", row.value, row.strategy.description,
            metric, Format.nanoseconds(row.medianP50), Format.nanoseconds(row.medianP99),
            Format.nanoseconds(row.medianP999), row.medianFairness.map { String(format: "%.2f", $0) } ?? "–", row.workersTogether, row.outcomes,
        ]
    }

    /// The column names for `ranking`: its parameter and its metric where the guards' table has `guard` and `throughput`.
    package static func header(for ranking: MetricRanking) -> [String] {
        ["#", ranking.parameter, "strategy", MetricDescriptor.displayName(of: ranking.metric), "p50", "p99", "p99.9", "fairness", "together", "outcomes"]
    }
}

/// The harness against its C reference: an uncontended pthread_mutex pair
/// measured by the worker loop and by a tight C loop in the same child.
package enum ReferenceComparison {
    /// `sample-every=16: harness 16.7 ns/op, C loop 12.5 ns/op: 1.33× (median of 11)`.
    package static func lines(_ run: RunRecord) -> [String] {
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
