import Foundation
import StrainRunner
import Testing
#if StrainTestingReports
import StrainReports
#endif

/// A failing expectation's evidence, attached to its test: the trial's run.json
/// (schema-checked like any run's), which `strain report` renders as report.html; and,
/// with the package's `StrainTestingReports` trait, report.html itself.
enum StrainAttachments {
    static func attach(_ verdict: StrainVerdict, sourceLocation: Testing.SourceLocation) {
        guard let record = verdict.record else { return }
        let trials = [record] + (verdict.onLargeStack.map { [$0] } ?? [])
        let suite = ResolvedSuite(name: "swift-test", description: "expectations of \(record.key)", path: "(swift test)", repetitions: 1,
                                  timeoutSeconds: 0, stallSeconds: nil, profiles: [record.profile.rawValue], runs: [])
        let now = Date().formatted(.iso8601)
        let run = RunRecord(suite: suite, environment: EnvironmentProbe.current(), startedAt: record.startedAt, finishedAt: now,
                            runnerPeakRSSBytes: 0, trials: trials)
        if let data = try? RunRecordFile.encode(run) {
            Attachment.record([UInt8](data), named: "run.json", sourceLocation: sourceLocation)
        }
        #if StrainTestingReports
        if let html = try? ReportFormat.html.render(run) {
            Attachment.record([UInt8](html), named: "report.html", sourceLocation: sourceLocation)
        }
        #endif
    }
}
