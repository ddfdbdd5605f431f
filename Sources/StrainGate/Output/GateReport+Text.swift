import Foundation
import StrainRecords

extension GateReport {
    /// Every metric that decides or explains the verdict, worst rows first.
    var shownRows: [RowComparison] {
        rows.filter { $0.verdict != .unchanged || $0.metrics.contains { $0.verdict == .improved } }
            .sorted { $0.verdict.severity > $1.verdict.severity }
    }

    /// The terminal's summary: the conclusion, what failed and why, what was inconclusive.
    public func renderText() -> String {
        var lines: [String] = []
        let modeText = mode == .interleaved ? "interleaved A/B" : "cross-run against \(baselineName ?? "a stored baseline")"
        lines.append("Gate (\(modeText)) on \(suite): \(conclusion)")
        for difference in fingerprint {
            lines.append("  \(difference.hard ? "machine differs" : "note"): \(difference.field) \(difference.baseline) → \(difference.candidate)")
        }
        for row in shownRows {
            lines.append("  \(row.verdict.label.uppercased()) \(row.key)")
            if let reason = row.outcomeReason, row.verdict != .unchanged { lines.append("      outcome: \(reason)") }
            for metric in row.metrics where metric.verdict != .unchanged && metric.verdict != .notGated {
                lines.append("      \(metric.metric): \(metric.reason)\(Self.statistics(metric))")
            }
        }
        let inconclusive = rows.filter { $0.verdict == .inconclusive }.count
        if inconclusive > 0 {
            lines.append("  \(inconclusive) row\(inconclusive == 1 ? "" : "s") inconclusive: a timing row can fail only with ≥ \(requiredRepetitions) repetitions per side here")
        }
        return lines.joined(separator: "\n")
    }

    /// ` [n 10/10, ratio 1.31 (1.25–1.38), q 0.0004, δ 10% from suite]`.
    static func statistics(_ metric: MetricComparison) -> String {
        var parts = ["n \(metric.baselineCount)/\(metric.candidateCount)"]
        if let ratio = metric.ratio {
            var text = String(format: "ratio %.3f", ratio)
            if let low = metric.ratioLow, let high = metric.ratioHigh { text += String(format: " (95%% %.3f–%.3f)", low, high) }
            parts.append(text)
        }
        if let q = metric.qValue { parts.append(String(format: "q %.3g", q)) }
        parts.append("δ \(Gate.percent(metric.delta)), floor \(Gate.format(metric.floor, metric.unit)) from \(metric.thresholdSource)")
        return " [\(parts.joined(separator: ", "))]"
    }

    /// `completed ×9, crashed(SIGABRT) ×1`.
    static func histogramText(_ counts: [String: Int]) -> String {
        counts.isEmpty ? "–" : counts.sorted { $0.value == $1.value ? $0.key < $1.key : $0.value > $1.value }.map { "\($0.key) ×\($0.value)" }.joined(separator: ", ")
    }

    /// gate.json's bytes.
    public func encoded() throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return try encoder.encode(self)
    }
}
