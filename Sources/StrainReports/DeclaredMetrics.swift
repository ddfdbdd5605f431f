import StrainRecords
import StrainText

/// The metrics a run's scenarios declared for themselves, per comparison group:
/// the median of each per strategy, in its unit, its column marked with the
/// direction that is better.
package struct DeclaredMetrics: Sendable {
    /// One group's metrics.
    package struct Table: Sendable {
        /// `decode-orders[depth=600, width=0, coding=keyed-archive] on linux`.
        package var title: String
        package var scenario: String
        /// `strategy`, then `name (unit, ↑ better)` per metric.
        package var header: [String]
        /// A row per strategy: its name, then the medians.
        package var rows: [[String]]
    }

    package let tables: [Table]

    package init(_ run: RunRecord) {
        let declared = run.customMetrics ?? []
        var tables: [Table] = []
        func medians(_ trials: [TrialRecord], _ metrics: [MetricDescriptor]) -> [String] {
            metrics.map { metric in
                let median = Statistics.median(trials.compactMap { $0.metrics.custom[metric.name] })
                // A time as every other time is written (`201.9 ms`, `92 µs`; it read `0.0000917 s`).
                return Format.value(median, unit: metric.unit)
            }
        }
        // Groups a ranking table shows instead of their own: one table beside it, a row per ranked value and strategy.
        let measuringOperations = Set(run.trials.filter { $0.metrics.throughputPerSecond != nil }.map(\.scenario))
        for ranked in GuardComparison(run).tables where measuringOperations.contains(ranked.scenario) {
            let trials = ranked.rows.flatMap(\.trials)
            let metrics = declared.filter { metric in metric.name != ranked.ranking.metric && trials.contains { $0.metrics.custom[metric.name] != nil } }
            guard !metrics.isEmpty else { continue }
            tables.append(Table(title: ranked.key.title, scenario: ranked.scenario,
                                header: ["\(ranked.ranking.parameter), strategy"] + metrics.map(Self.label),
                                rows: ranked.rows.map { ["\($0.value) \($0.strategy)"] + medians($0.trials, metrics) }))
        }
        for group in RunSummary(run).groups where !GuardComparison.covers(group, in: run) {
            let trials = group.rows.flatMap(\.trials)
            let metrics = declared.filter { metric in trials.contains { $0.metrics.custom[metric.name] != nil } }
            guard !metrics.isEmpty else { continue }
            let rows = group.rows.map { [$0.strategy.description] + medians($0.trials, metrics) }
            tables.append(Table(title: group.title, scenario: group.scenario, header: ["strategy"] + metrics.map(Self.label), rows: rows))
        }
        self.tables = tables
    }

    /// `hit ratio (ratio, ↑ better)`, `lines (count)`; a column whose cells write their
    /// unit does not say it again (`archive bytes (↓ better)` for `archiveBytes`, whose
    /// cells read `137 KiB`; `probe latency`, `92 µs`) (``MetricDescriptor/displayName(of:)``).
    static func label(_ metric: MetricDescriptor) -> String {
        let said = [[.count, .ratio].contains(metric.unit) ? metric.unit.symbol : nil,
                    metric.polarity.map { $0 == .lowerIsBetter ? "↓ better" : "↑ better" }].compactMap { $0 }
        let name = MetricDescriptor.displayName(of: metric.name)
        return said.isEmpty ? name : "\(name) (\(said.joined(separator: ", ")))"
    }
}
