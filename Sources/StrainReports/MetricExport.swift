import Foundation
import StrainRecords

/// A run's numbers for tools that chart trends: a CSV with a row per trial, and the
/// JSON that github-action-benchmark reads (`customSmallerIsBetter`,
/// `customBiggerIsBetter`).
package enum MetricExport {
    /// Strain's own metrics and the run's declared ones that at least one trial measured, in that order.
    static func measured(_ run: RunRecord) -> [MetricDescriptor] {
        (MetricDescriptor.builtIn + (run.customMetrics ?? [])).filter { metric in run.trials.contains { $0.metrics.value(of: metric.name) != nil } }
    }

    /// A row per trial in plan order: its ID's parts, its outcome, then one column per
    /// metric any trial measured, named with its unit (`wall (s)`); empty where a trial
    /// did not measure it. RFC 4180 quoting; numbers to 9 significant digits.
    package static func csv(_ run: RunRecord) -> String {
        let metrics = measured(run)
        var lines = [(["trial", "scenario", "parameters", "strategy", "profile", "repetition", "outcome"]
            + metrics.map { "\($0.name) (\($0.unit.symbol))" }).map(textField).joined(separator: ",")]
        for trial in run.trials {
            let key = trial.id.key
            let values = metrics.map { metric in trial.metrics.value(of: metric.name).map(number) ?? "" }
            let text = [trial.id.description, key.scenario, key.parameterSummary, key.strategy.description, key.profile.rawValue].map(textField)
            lines.append((text + [field(String(trial.id.repetition)), textField(trial.outcome.description)] + values.map(field)).joined(separator: ","))
        }
        return lines.joined(separator: "\r\n") + "\r\n"
    }

    /// One entry of github-action-benchmark's custom format.
    struct BenchmarkEntry: Encodable {
        var name: String
        var unit: String
        var value: Double
        var extra: String
    }

    /// For each trial key and each metric better in `polarity`'s direction: the median
    /// over the key's repetitions that measured it, named `KEY METRIC`
    /// (`nested-json[depth=100] thread(512KiB) linux wall`), in plan order.
    package static func benchmarkJSON(_ run: RunRecord, polarity: MetricDescriptor.Polarity) throws -> Data {
        let metrics = measured(run).filter { $0.polarity == polarity }
        var order: [TrialKey] = []
        var trials: [TrialKey: [TrialRecord]] = [:]
        for trial in run.trials {
            if trials[trial.id.key] == nil { order.append(trial.id.key) }
            trials[trial.id.key, default: []].append(trial)
        }
        var entries: [BenchmarkEntry] = []
        for key in order {
            let group = trials[key] ?? []
            for metric in metrics {
                let values = group.compactMap { $0.metrics.value(of: metric.name) }
                guard let median = Statistics.median(values), median.isFinite else { continue }
                let outcomes = Dictionary(grouping: group, by: \.outcome.description).map { "\($0.key) ×\($0.value.count)" }.sorted()
                // To 9 significant digits, as metrics.csv writes it: `0.0005470000000000002` was the float's sum error.
                entries.append(BenchmarkEntry(name: "\(key) \(metric.name)", unit: metric.unit.symbol, value: Double(number(median)) ?? median,
                                              extra: "median of \(values.count) of \(group.count) repetitions; \(outcomes.joined(separator: ", "))"))
            }
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return try encoder.encode(entries) + Data("\n".utf8)
    }

    /// A number as CSV writes it: integers without a fraction, others to 9 significant
    /// digits (a nanosecond of a second-long trial), so every column is written alike.
    /// Full precision wrote the float's sum errors: `0.0038680000000000003` for 3.868 ms.
    static func number(_ value: Double) -> String {
        guard value.isFinite else { return "\(value)" }
        return value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : String(format: "%.9g", value)
    }

    /// A CSV field of text (a name from the record), never a formula (`OneLine.spreadsheetCell`).
    static func textField(_ text: String) -> String { field(OneLine.spreadsheetCell(text)) }

    /// A CSV field, quoted when it holds a comma, a quote or a line break.
    static func field(_ text: String) -> String {
        text.contains { [",", "\"", "\n", "\r"].contains($0) } ? "\"" + text.replacingOccurrences(of: "\"", with: "\"\"") + "\"" : text
    }
}
