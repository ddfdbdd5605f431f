import Foundation
import StrainRecords

/// The report formats, by the names `--format` takes.
package enum ReportFormat: String, CaseIterable, Sendable {
    case html, md, junit, json
    /// A row per trial, a column per metric with its unit: for spreadsheets and trend charts.
    case csv
    /// github-action-benchmark's `customSmallerIsBetter` input: each key's medians of the metrics where lower is better.
    case benchmarkSmaller = "benchmark-smaller"
    /// github-action-benchmark's `customBiggerIsBetter` input: the metrics where higher is better.
    case benchmarkBigger = "benchmark-bigger"

    /// The file a run directory gets for this format.
    package var fileName: String {
        switch self {
        case .html: "report.html"
        case .md: "summary.md"
        case .junit: "junit.xml"
        case .json: "run.json"
        case .csv: "metrics.csv"
        case .benchmarkSmaller: "benchmark-smaller.json"
        case .benchmarkBigger: "benchmark-bigger.json"
        }
    }

    /// The file's bytes for `run`.
    package func render(_ run: RunRecord) throws -> Data {
        try render(run, report: RunReport(run))
    }

    /// The file's bytes for `run`, whose report model the caller built once for every format it writes.
    /// A CI step may print any of these files (`cat summary.md`): in the formats of lines (all but
    /// JSON, whose strings escape their line breaks), no line starts a workflow command a record's
    /// name, message or symbol spelled (`OneLine.withoutWorkflowCommands`).
    package func render(_ run: RunRecord, report: RunReport) throws -> Data {
        let lines: String
        switch self {
        case .html: lines = HTMLReport.render(report)
        case .md: lines = MarkdownReport.render(report)
        case .junit: lines = JUnitReport.render(report)
        case .csv: lines = MetricExport.csv(run)
        case .json: return try RunRecordFile.encode(run)
        case .benchmarkSmaller: return try MetricExport.benchmarkJSON(run, polarity: .lowerIsBetter)
        case .benchmarkBigger: return try MetricExport.benchmarkJSON(run, polarity: .higherIsBetter)
        }
        return Data(OneLine.withoutWorkflowCommands(lines).utf8)
    }
}
