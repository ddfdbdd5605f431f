import Foundation
import StrainGate
import StrainRecords
import StrainReports
import StrainText

/// Each side's run rendered as a report into the gate's folder, and each row whose
/// outcome changed pointed at the candidate trial that shows it there: the trial's
/// anchor in `candidate/report.html` and its evidence in one line.
enum GateEvidence {
    /// The reports, relative to the gate's folder (gate.html and gate.md link them so).
    static let baselineReport = "baseline/report.html"
    static let candidateReport = "candidate/report.html"

    /// Writes both reports under `directory` and returns `report` naming them, with
    /// each changed (or harness-failed) outcome's evidence.
    static func attach(to report: GateReport, baseline: RunRecord, candidate: RunRecord, directory: String) throws(GateError) -> GateReport {
        var report = report
        for (path, run) in [(baselineReport, baseline), (candidateReport, candidate)] {
            let file = (directory as NSString).appendingPathComponent(path)
            let folder = (file as NSString).deletingLastPathComponent
            do { try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true) } catch {
                throw GateError(.input, "\(folder): cannot create the folder for a side's report: \(error.localizedDescription)")
            }
            try writeOutput(Data(HTMLReport.render(run).utf8), to: file)
        }
        report.runReports = [baselineReport, candidateReport]
        for index in report.rows.indices where report.rows[index].verdict == .outcomeChanged || report.rows[index].verdict == .harnessError {
            guard let trial = evidenceTrial(report.rows[index], in: candidate) else { continue }
            report.rows[index].evidence = TrialEvidence(trial: trial.id, report: candidateReport, anchor: trial.id.anchor, line: EvidenceLine.line(trial),
                                                          place: TraceText.failurePlace([trial]), advice: OutcomeAdvice.text(for: trial))
        }
        return report
    }

    /// The candidate trial that shows `row`'s change: the first whose outcome the
    /// baseline never had and the suite does not expect; else the first the suite
    /// does not expect; else the first whose outcome is new; else the first that did not complete.
    static func evidenceTrial(_ row: RowComparison, in run: RunRecord) -> TrialRecord? {
        let trials = run.trials.filter { $0.key == row.key }
        let before = Set(row.baselineOutcomes.keys)
        return trials.first { !before.contains($0.outcome.description) && !$0.expected }
            ?? trials.first { !$0.expected }
            ?? trials.first { !before.contains($0.outcome.description) }
            ?? trials.first { $0.outcome.kind != .completed }
    }
}
