import ArgumentParser
import Foundation
import StrainGate
import StrainKit
import StrainReports
import StrainText

struct CompareCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "compare",
        abstract: "Compare a run with a baseline: per trial and metric, medians, change, interval and verdict. Never fails on a regression (use `strain gate`).",
        discussion: "BASELINE is a stored baseline's name or a run.json. Exit 0, or 2 for bad input."
    )

    @Argument(help: "The baseline: a name in --baselines, or a run.json.")
    var baseline: String

    @Argument(help: "The current run.json, or its directory.")
    var current: String

    @OptionGroup var location: BaselineCommand.Location

    func run() throws {
        do {
            let file = try location.store.resolve(baseline)
            let run = try readRun(current)
            let report = try Gate.compare(baseline: file.run, candidate: run, options: GateOptions(
                mode: .crossRun, allowFingerprintMismatch: true, allowExecutionMismatch: true, calibration: file.calibration ?? [:], baselineName: file.name))
            // Every name, value and reason in the table comes from a record: each on its line, none a workflow command.
            let named = baseline.contains("/") || baseline.hasSuffix(".json") ? "the run \(baseline)" : "baseline \(file.name)"
            let table = TerminalStyle.safe(Self.table(OneLine.copy(report), current: OneLine.text(current), baseline: OneLine.text(named)))
            // Fitted as the run's terminal view is: to the terminal, or to COLUMNS; a pipe without it gets whole lines.
            print(TerminalStyle(color: false, width: RunCommand.outputColumns()).fitLines(table))
        } catch { throw error.exit() }
    }

    /// Every row-metric with values on both sides, under a line naming both sides and
    /// what `strain gate` would conclude (compare itself never fails).
    static func table(_ report: GateReport, current: String, baseline: String) -> String {
        // The conclusion is `passed: 28 inconclusive, 7 unchanged`.
        let parts = report.conclusion.split(separator: ": ", maxSplits: 1)
        let (verdict, counts) = parts.count == 2 ? (parts[0], parts[1]) : ("", Substring(report.conclusion))
        var lines = ["Compared \(current) (suite \(report.suite)) against \(baseline): \(counts); strain gate would say \(verdict) (exit \(report.exitCode))"]
        for difference in report.fingerprint {
            lines.append("  \(difference.hard ? "machine differs" : "note"): \(difference.field) \(difference.baseline) → \(difference.candidate)")
        }
        for row in report.rows {
            lines.append("\(row.key)  [\(row.verdict.label)]")
            if row.verdict == .new || row.verdict == .missing || row.outcomeReason != nil {
                lines.append("    outcome: \(GateReport.histogramText(row.baselineOutcomes)) → \(GateReport.histogramText(row.candidateOutcomes))\(row.outcomeReason.map { " — \($0)" } ?? "")")
            }
            for metric in row.metrics {
                let old = metric.baselineMedian.map { Gate.format($0, metric.unit) } ?? "–"
                let new = metric.candidateMedian.map { Gate.format($0, metric.unit) } ?? "–"
                let change = metric.changePercent.map { String(format: "%+.1f%%", $0) } ?? "–"
                let interval = metric.ratioLow.map { low in String(format: " (95%% ×%.3f–×%.3f)", low, metric.ratioHigh ?? low) } ?? ""
                lines.append("    \(metric.metric): \(old) → \(new), \(change)\(interval)  \(metric.verdict.label): \(metric.reason)")
            }
        }
        return lines.joined(separator: "\n")
    }
}
