import Foundation
import StrainRecords
import StrainText

/// A chart of report.html as the model holds it: what it draws (bars, series,
/// ticks, scales) and what it says it left out, computed once from the run, so
/// the page only lays it out (``SVGChart`` draws it).
package enum Chart: Sendable {
    /// Horizontal bars, one per category.
    case bars(BarChart)
    /// Stacked counts per category: an outcome histogram.
    case stacked(StackedChart)
    /// A line per series.
    case lines(LineChart)

    /// The sentence under the chart, when it has one.
    package var caption: String? {
        switch self {
        case .bars, .stacked: nil
        case .lines(let chart): chart.caption
        }
    }
}

/// How a chart writes one of its numbers; each case is one of the reports' formats.
package enum ChartFormat: Sendable, Equatable {
    /// `12.1 ms`, `2.31 s`.
    case duration
    /// `38.2 MiB`.
    case bytes
    /// `8 MiB` for a stack of exactly 8 MiB, as the tables write it.
    case stackBytes
    /// `26.4 M/s`.
    case rate
    /// `1.4 µs`.
    case nanoseconds
    /// `1,532`.
    case count
    /// In a declared metric's unit.
    case value(MetricDescriptor.Unit)
    /// A position on a "nines" axis (90 → 1, 99 → 2) written as its percentile: `p99.5`.
    case nines
    /// Seconds with this many decimals: `0.25 s`.
    case seconds(decimals: Int)
    /// A whole number: `12`.
    case whole

    /// `value` written in this format.
    package func callAsFunction(_ value: Double) -> String {
        switch self {
        case .duration: Format.duration(value)
        case .bytes: Format.bytes(value)
        case .stackBytes: Format.bytes(value, exact: true)
        case .rate: Format.rate(value)
        case .nanoseconds: Format.nanoseconds(value)
        case .count: Format.count(value)
        case .value(let unit): Format.value(value, unit: unit)
        case .nines: LatencyCurve.label(value)
        case .seconds(let decimals): String(format: "%.\(decimals)f s", value)
        case .whole: String(format: "%.0f", value)
        }
    }
}

/// One bar of a ``BarChart``, with an optional low–high whisker (the spread
/// across repetitions), a limit line, and a note for a bar that has no value.
package struct ChartBar: Sendable {
    /// The category: a strategy, a guard.
    package var label: String
    /// The bar's length; nil draws the note instead.
    package var value: Double?
    /// The whisker's ends.
    package var low: Double?
    package var high: Double?
    /// A dashed line across the bar (the stack the thread had).
    package var limit: Double?
    /// Drawn red with a ✕ (it overflowed).
    package var marked: Bool = false
    /// Written after the value, or in place of a missing one.
    package var note: String?
}

/// Horizontal bars on one axis.
package struct BarChart: Sendable {
    /// The chart's title.
    package var title: String
    /// The bars, top to bottom.
    package var bars: [ChartBar]
    /// How values and ticks are written.
    package var format: ChartFormat
    /// What the limit line is (`stack size`).
    package var limitLabel: String?
    /// The axis reaches at least this far, so charts that share it share a scale.
    package var scaleMaximum: Double?
    /// Ticks that are powers of two (bytes).
    package var binary: Bool = false
    /// The axis reaches down to at least this (a positive value), with `scaleMaximum` the shared scale's ends.
    package var scaleMinimum: Double?
    /// The title when the chart is drawn on a log axis; nil: the title with "(log scale)" after it.
    package var logTitle: String?
    /// Whether the axis is logarithmic: chosen by ``choosingAxis()``.
    package var logScale = false

    /// Values that span more than this factor are drawn on a log axis: on one linear
    /// axis a 512 KiB stack beside a 64 MiB one is 3 px, 85 k/s beside 46 M/s under 1 px.
    static let logSpan = 10.0

    /// The chart on a log axis, its title saying so, when its positive values and the
    /// shared scale's ends span more than ``logSpan``; else the chart as it is.
    func choosingAxis() -> BarChart {
        let values = bars.flatMap { [$0.value, $0.low, $0.high, $0.limit].compactMap { $0 } } + [scaleMinimum, scaleMaximum].compactMap { $0 }
        let positive = values.filter { $0 > 0 && $0.isFinite }
        guard let low = positive.min(), let high = positive.max(), high / low > Self.logSpan,
              ChartAxis.powerTicks(positive, binary: binary) != nil else { return self }
        var chart = self
        chart.logScale = true
        chart.title = logTitle ?? title + " (log scale)"
        return chart
    }
}

/// Counts per category, stacked: an outcome histogram.
package struct StackedChart: Sendable {
    /// The chart's title.
    package var title: String
    /// A row per category with its counts, in order.
    package var rows: [(label: String, counts: [(name: String, count: Int)])]
}

/// A series of a ``LineChart``.
package struct ChartSeries: Sendable {
    /// Its legend.
    package var name: String
    /// Its points, left to right.
    package var points: [(x: Double, y: Double)]
}

/// Lines on linear or logarithmic axes.
package struct LineChart: Sendable {
    /// The chart's title.
    package var title: String
    /// The lines.
    package var series: [ChartSeries]
    /// The axes' names.
    package var xLabel: String
    package var yLabel: String
    /// Logarithmic axes.
    package var logX = false
    package var logY = false
    /// How the axes' values are written.
    package var formatX: ChartFormat
    package var formatY: ChartFormat
    /// Steps instead of straight lines (a count over time).
    package var step = false
    /// The ticks, when the chart chooses them rather than the axis.
    package var xTicks: [Double]?
    package var yTicks: [Double]?
    /// Each point labelled with its value (a single series).
    package var labelPoints = false
    /// The sentence under the chart: what it shows or what it left out.
    package var caption: String?
}

/// The charts of a comparison group: wall time, peak RSS and stack per strategy, each on
/// an axis fitted to its own bars (and the stack sizes drawn dashed), then the outcome
/// histogram. (Axes shared by a scenario's groups let one 64 MiB thread stretch them all.)
extension OutcomeSection {
    /// Wall times of the trials that ran their work to an end: a starved,
    /// deadlocked or timed-out trial's time is the watchdog's, not the work's.
    static func finishedWalls(_ row: RunSummary.Row) -> [Double] {
        row.trials.filter { [.completed, .threw, .invariantViolated].contains($0.outcome.kind) }.compactMap(\.metrics.wallSeconds)
    }

    /// The group's charts: one strategy's bar is always full width and says nothing
    /// the table does not, so bars only when the group compares strategies.
    static func charts(_ group: RunSummary.Group) -> [Chart] {
        var charts: [Chart] = []
        let compared = group.rows.count > 1
        if compared, group.rows.contains(where: { !finishedWalls($0).isEmpty }) {
            let bars = group.rows.map { row -> ChartBar in
                let walls = finishedWalls(row)
                return ChartBar(label: row.strategy.description, value: Statistics.median(walls), low: walls.min(), high: walls.max(),
                                note: walls.isEmpty ? "\(row.outcomes): no time to compare" : nil)
            }
            charts.append(.bars(BarChart(title: "median wall time of finished trials (line: min–max)", bars: bars, format: .duration,
                                         logTitle: "median wall time of finished trials (line: min–max; log scale)").choosingAxis()))
        }
        if compared, group.rows.contains(where: { $0.medianPeakRSSBytes != nil }) {
            let bars = group.rows.map { ChartBar(label: $0.strategy.description, value: $0.medianPeakRSSBytes) }
            charts.append(.bars(BarChart(title: "peak RSS (median)", bars: bars, format: .bytes, binary: true,
                                         logTitle: "peak RSS (median, log scale)").choosingAxis()))
        }
        if compared, group.rows.contains(where: { $0.stackHighWaterBytes != nil }) {
            let bars = group.rows.map { row -> ChartBar in
                let overflowed = row.trials.contains { $0.outcome.kind == .stackOverflow }
                return ChartBar(label: row.strategy.description, value: row.stackHighWaterBytes.map(Double.init), limit: row.stackSizeBytes.map(Double.init),
                                marked: overflowed, note: overflowed ? "overflowed" : nil)
            }
            charts.append(.bars(BarChart(title: "stack used against the thread's stack (dashed); red ✕: overflowed", bars: bars, format: .stackBytes,
                                         limitLabel: "stack size", binary: true,
                                         logTitle: "stack used against the thread's stack (dashed), log scale; red ✕: overflowed").choosingAxis()))
        }
        // An outcome histogram only when it compares strategies or shows repetitions that differ.
        if compared || group.rows.contains(where: { Set($0.trials.map(\.outcome.description)).count > 1 }) {
            charts.append(.stacked(StackedChart(title: "outcomes across repetitions", rows: group.rows.map { ($0.strategy.description, outcomeCounts($0.trials)) })))
        }
        return charts
    }
}

/// Outcomes counted by name, in the order first met.
func outcomeCounts(_ trials: [TrialRecord]) -> [(name: String, count: Int)] {
    var counts: [(name: String, count: Int)] = []
    for trial in trials {
        let name = trial.outcome.description
        if let index = counts.firstIndex(where: { $0.name == name }) { counts[index].count += 1 } else { counts.append((name, 1)) }
    }
    return counts
}

/// Latency against percentile on a "nines" axis: 90 → 1, 99 → 2, 99.9 → 3.
enum LatencyCurve {
    /// The ticks of the nines axis: p0, p50, p90, p99, p99.9, p99.99.
    static let ticks: [Double] = [0, 0.301, 1, 2, 3, 4]

    static func nines(_ percentile: Double) -> Double { percentile >= 100 ? 6 : -log10(1 - percentile / 100) }

    /// The percentile at `value` on the nines axis, exactly: the share beyond it is kept to
    /// two significant digits, so p99.5 reads `p99.5` (it read `p100`) and p99.9 `p99.9`.
    static func label(_ value: Double) -> String {
        guard value >= 0.05, value.isFinite else { return "p0" }
        let beyond = 100 * pow(10, -value)
        guard beyond >= .leastNormalMagnitude else { return "p100" }
        let digits = max(0, 1 - Int(floor(log10(beyond))))
        let scale = pow(10, Double(digits))
        let percentile = 100 - (beyond * scale).rounded() / scale
        return "p" + String(format: "%.\(ChartAxis.decimals(for: percentile))f", percentile)
    }

    /// Samples that must lie beyond a percentile past p99 for the curve to draw it: as the
    /// tables, which print p99.9 from 2,000 samples (2 beyond it) and "–" from fewer.
    static let samplesBeyond = 2.0

    /// The sentence under a chart whose curves stop early.
    static let cutNote = "Past p99 a curve stops where fewer than 2 of its samples lie beyond the percentile, as the table's p99.9 needs 2,000 samples."

    /// The curve of `latency` as points: every percentile below the maximum with a latency
    /// that its samples support (`all`: whether they do or not).
    static func points(_ latency: LatencySummary, all: Bool = false) -> [(x: Double, y: Double)] {
        latency.curve.filter { point in
            point.percentile < 100 && point.nanoseconds > 0
                && (all || point.percentile <= 99 || Double(latency.count) * (1 - point.percentile / 100) >= samplesBeyond - 1e-9)
        }.map { (x: nines($0.percentile), y: Double($0.nanoseconds)) }
    }
}

extension RankingSection {
    /// The ranking's charts: the metric per row, the latency curves of the first
    /// repetitions, and the outcome histogram.
    static func charts(_ table: GuardComparison.Table) -> [Chart] {
        var charts: [Chart] = []
        let measured = table.rows.filter { $0.medianMetric != nil }
        // Name rows by guard alone when they share one strategy.
        let oneStrategy = Set(table.rows.map(\.strategy)).count == 1
        let label = { (row: GuardComparison.Row) in oneStrategy ? row.value : "\(row.value) \(row.strategy)" }
        let latencyTitle = "latency by percentile (first repetition)"
        if measured.count > 1 {
            let bars = table.rows.map { ChartBar(label: label($0), value: $0.medianMetric, note: $0.medianMetric == nil ? $0.outcomes : nil) }
            let metric = table.ranking.metric
            let title = metric == "throughput" ? "throughput (median, operations per second)" : "\(MetricDescriptor.displayName(of: metric)) (median)"
            let unit = measured.first?.metric.unit ?? .ratio
            let logTitle = metric == "throughput" ? "throughput (median, operations per second, log scale)" : nil
            charts.append(.bars(BarChart(title: title, bars: bars, format: metric == "throughput" ? .rate : .value(unit), logTitle: logTitle).choosingAxis()))
        }
        // Percentile curves of the first repetitions, as many as the palette has colours, best first.
        let curves = measured.compactMap { row in row.trials.compactMap(\.metrics.latency).first.map { (name: label(row), latency: $0) } }
        if !curves.isEmpty {
            let drawn = curves.prefix(SVGChart.palette.count)
            // Coloured by name, not rank: a guard keeps its colour from run to run (NSLock was
            // orange in one run and teal in the next, as their ranks swapped).
            let series = drawn.sorted { $0.name < $1.name }.map { ChartSeries(name: $0.name, points: LatencyCurve.points($0.latency)) }
            var notes: [String] = []
            if drawn.contains(where: { LatencyCurve.points($0.latency).count < LatencyCurve.points($0.latency, all: true).count }) {
                notes.append(LatencyCurve.cutNote)
            }
            if curves.count > drawn.count {
                let rest = curves.dropFirst(drawn.count).map(\.name)
                notes.append("The first \(drawn.count) by rank are drawn; \(rest.count) more \(table.ranking.parameter)s are in the table: \(rest.joined(separator: ", ")).")
            }
            charts.append(.lines(LineChart(title: latencyTitle, series: series, xLabel: "percentile", yLabel: "latency", logY: true, formatX: .nines,
                                           formatY: .nanoseconds, xTicks: LatencyCurve.ticks, caption: notes.isEmpty ? nil : notes.joined(separator: " "))))
        }
        if table.rows.count > 1 || table.rows.contains(where: { Set($0.trials.map(\.outcome.description)).count > 1 }) {
            charts.append(.stacked(StackedChart(title: "outcomes across repetitions", rows: table.rows.map { (label($0), outcomeCounts($0.trials)) })))
        }
        return charts
    }
}

extension GrowthSweep {
    /// Time and memory against the swept parameter on log–log axes; memory above
    /// the process's own baseline when the run measured one.
    package var charts: [Chart] {
        var charts: [Chart] = []
        let xs = time.flatMap(\.points).map(\.x) + memory.flatMap(\.points).map(\.x)
        let xTicks = xs.isEmpty ? nil : Array(Set(xs)).sorted()
        if !time.isEmpty {
            charts.append(.lines(LineChart(title: "median wall time against \(parameter) (log–log)", series: time.map { ChartSeries(name: $0.name, points: $0.points) },
                                           xLabel: parameter, yLabel: "wall time", logX: true, logY: true, formatX: .count, formatY: .duration,
                                           xTicks: xTicks, labelPoints: true)))
        }
        if !memory.isEmpty {
            let baseline = memoryBaselineBytes
            let series = memory.map { line in
                ChartSeries(name: line.name, points: line.points.map { (x: $0.x, y: $0.y - (baseline ?? 0)) })
            }
            let ys = series.flatMap(\.points).map(\.y).filter { $0 > 0 }
            let title = baseline.map { "peak RSS above the \(Format.bytes($0)) baseline against \(parameter) (log–log)" } ?? "peak RSS against \(parameter) (log–log)"
            charts.append(.lines(LineChart(title: title, series: series, xLabel: parameter, yLabel: "peak RSS", logX: true, logY: true,
                                           formatX: .count, formatY: .bytes, xTicks: xTicks,
                                           yTicks: ys.isEmpty ? nil : ChartAxis.byteTicks(from: ys.min()!, to: ys.max()!), labelPoints: true)))
        }
        return charts
    }
}

/// Thread count over time, per scenario, for stalled trials and trials that
/// started many threads: at most ``limit`` charts a scenario, and a note naming
/// how many more there were.
package struct TimelineSection: Sendable {
    /// One scenario's timelines.
    package struct Scenario: Sendable {
        /// The scenario.
        package var name: String
        /// `cyclic-graph: threads over time`.
        package var title: String
        /// A step chart per trial key, captioned with its parameters.
        package var charts: [LineChart]
        /// What was left out, when more trials qualified than are drawn (backticks around code).
        package var note: String?
    }

    /// The most timelines drawn for one scenario.
    static let limit = 12

    /// The scenarios that have timelines, in run order.
    package var scenarios: [Scenario]

    init(_ cases: TrialCases) {
        scenarios = cases.scenarios.compactMap { Self.scenario($0.name, trials: $0.trials) }
    }

    /// The timelines of `scenario`, or nil when none qualifies.
    package func timelines(of scenario: String) -> Scenario? { scenarios.first { $0.name == scenario } }

    static func scenario(_ name: String, trials: [TrialRecord]) -> Scenario? {
        var seen = Set<TrialKey>()
        let chosen = trials.filter { trial in
            guard let timeline = trial.threadTimeline, timeline.count > 1 else { return false }
            guard trial.stall != nil || (timeline.map(\.threads).max() ?? 0) >= 16 else { return false }
            return seen.insert(trial.key).inserted
        }
        guard !chosen.isEmpty else { return nil }
        let charts = chosen.prefix(limit).map { trial -> LineChart in
            let points = trial.threadTimeline!.map { (x: $0.seconds, y: Double($0.threads)) }
            let label = "\(trial.strategy) \(trial.profile.rawValue): \(trial.outcome.description)"
            // Whole threads on the count axis; times as every other axis writes them (`5 ms`, `1.5 s`; it read `0.005 s`).
            let yTicks = ChartAxis.niceTicks(upTo: max(1, points.map(\.y).max() ?? 1)).filter { $0 == $0.rounded() }
            let xTicks = ChartAxis.niceTicks(upTo: points.map(\.x).max() ?? 1)
            return LineChart(title: label, series: [ChartSeries(name: trial.strategy.description, points: points)],
                             xLabel: "time since the child started", yLabel: "threads",
                             formatX: .duration, formatY: .whole, step: true,
                             xTicks: xTicks, yTicks: yTicks.count >= 2 ? yTicks : [0, 1], caption: trial.key.parameterSummary)
        }
        let note = chosen.count > limit ? "\(chosen.count - limit) more timelines are in run.json (`threadTimeline`); the first \(limit) are drawn." : nil
        return Scenario(name: name, title: "\(chosen[0].scenario): threads over time", charts: charts, note: note)
    }
}
