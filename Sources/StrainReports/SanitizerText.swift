import StrainRecords
import StrainText

extension EvidenceSection {
    /// The first trial of each scenario, parameters, strategy and profile with sanitizer reports.
    static func sanitizer(_ run: RunRecord) -> EvidenceSection {
        let stack = { (stack: SanitizerReport.Stack) in
            Stack(title: stack.title, line: SanitizerText.stack(stack.frames), frames: stack.frames.prefix(pageFrames).map(SanitizerReport.place))
        }
        let trials = run.firstTrials(byProfile: true) { $0.sanitizerReports?.isEmpty == false || $0.leftOut?.isEmpty == false }
        return EvidenceSection(id: "sanitizer", heading: "Sanitizer reports", entries: trials.map { trial in
            entry(trial, findings: (trial.sanitizerReports ?? []).map { report in
                Finding(headline: report.headline, compared: report.accesses.map(stack), context: (report.location + report.threads).map(stack))
            } + (trial.leftOut ?? []).map { Finding(headline: "left out: " + $0, compared: [], context: []) })
        }, byProfile: true)
    }
}
