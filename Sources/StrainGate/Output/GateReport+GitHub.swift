import Foundation
import StrainRecords
import StrainText

extension GateReport {
    /// GitHub shows at most this many error annotations per step.
    package static let annotationLimit = WorkflowCommand.annotationLimit
    /// GitHub uploads a step summary up to 1 MiB.
    package static let stepSummaryLimit = 1 << 20

    /// Workflow commands: `::error` for the worst ten failing rows, each at its suite
    /// file's line (relative to `workspace`, the repository's root, when the suite is
    /// inside it), or at the file and line where its candidate trial crashed; then one
    /// `::notice` with the count of the rest and the conclusion.
    package func renderGitHub(workspace: String? = ProcessInfo.processInfo.environment["GITHUB_WORKSPACE"]) -> String {
        var lines: [String] = []
        let failing = self.failing
        for row in failing.prefix(Self.annotationLimit) {
            var message = row.outcomeReason.map { "outcome: \($0)" } ?? ""
            for metric in row.metrics where metric.verdict.fails {
                message += (message.isEmpty ? "" : "\n") + "\(MetricDescriptor.displayName(of: metric.metric)): \(metric.reason)\(Self.statistics(metric))"
            }
            // At the candidate's failure (a crash's file and line) when its evidence has one, the suite's entry named then.
            lines.append(WorkflowCommand.error(at: row.evidence?.place, suiteFile: suitePath, line: row.suiteLine, workspace: workspace,
                                               title: "Strain gate: \(row.verdict.label) \(row.key)", message: message))
        }
        if failing.count > Self.annotationLimit {
            lines.append(WorkflowCommand.notice(title: "Strain gate", message: "\(failing.count - Self.annotationLimit) more failing rows: see gate.json or the step summary"))
        }
        lines.append(WorkflowCommand.notice(title: "Strain gate", message: conclusion))
        return lines.joined(separator: "\n") + "\n"
    }

    /// Appends the Markdown comparison to `$GITHUB_STEP_SUMMARY`, cut under its 1 MiB limit.
    /// Only to a regular file, never waiting on a FIFO (`StepSummary`).
    package func appendStepSummary(to path: String) throws(StepSummary.Refusal) {
        let held = StepSummary.heldBytes(path)
        try StepSummary.append(renderMarkdown(limit: max(4096, Self.stepSummaryLimit - 1024 - held)), to: path)
    }
}
