import Foundation
import StrainRecords

/// The report formats, by the names `--format` takes.
public enum ReportFormat: String, CaseIterable, Sendable {
    case html, md, junit, json

    /// The file a run directory gets for this format.
    public var fileName: String {
        switch self {
        case .html: "report.html"
        case .md: "summary.md"
        case .junit: "junit.xml"
        case .json: "run.json"
        }
    }

    public func render(_ run: RunRecord) throws -> Data {
        switch self {
        case .html: Data(HTMLReport.render(run).utf8)
        case .md: Data(MarkdownReport.render(run).utf8)
        case .junit: Data(JUnitReport.render(run).utf8)
        case .json: try RunRecordFile.encode(run)
        }
    }
}
