import Foundation
import StrainRecords
import StrainReports
import StrainText

/// `strain run --github`: what GitHub Actions shows of a run. An `::error` per trial
/// key that ended unexpectedly, at its `runs:` entry's line in the suite file, then
/// one `::notice` with the run's summary; the Markdown summary goes to the step summary.
package enum RunAnnotations {
    /// The workflow commands, at most ``WorkflowCommand/annotationLimit`` errors, the
    /// worst first (harness errors, then keys with the most unexpected trials).
    package static func renderGitHub(_ run: RunRecord, workspace: String? = ProcessInfo.processInfo.environment["GITHUB_WORKSPACE"]) -> String {
        var order: [TrialKey] = []
        var unexpected: [TrialKey: [TrialRecord]] = [:]
        for trial in run.trials where !trial.expected {
            if unexpected[trial.id.key] == nil { order.append(trial.id.key) }
            unexpected[trial.id.key, default: []].append(trial)
        }
        let harnessFailed: (TrialKey) -> Bool = { key in unexpected[key]?.contains { $0.outcome.kind == .harnessError } ?? false }
        let worst = order.enumerated().sorted { left, right in
            if harnessFailed(left.element) != harnessFailed(right.element) { return harnessFailed(left.element) }
            let counts = (unexpected[left.element]?.count ?? 0, unexpected[right.element]?.count ?? 0)
            return counts.0 != counts.1 ? counts.0 > counts.1 : left.offset < right.offset
        }.map(\.element)
        var lines: [String] = []
        for key in worst.prefix(WorkflowCommand.annotationLimit) {
            let trials = unexpected[key] ?? []
            let all = run.trials.filter { $0.id.key == key }.count
            let outcomes = Dictionary(grouping: trials, by: \.outcome.description).map { "\($0.key) ×\($0.value.count)" }.sorted()
            var message = "\(trials.count) of \(counted(all, "repetition")) ended unexpectedly: \(outcomes.joined(separator: ", ")); the suite expects \(trials[0].expectedOutcomes.joined(separator: " or "))"
            if let reason = trials.compactMap(\.outcome.message).first { message += "\n" + reason }
            // At the failure's own file and line when a trial's trace has one (a crash's frame), the suite's entry named then.
            lines.append(WorkflowCommand.error(at: TraceText.failurePlace(trials), suiteFile: run.suite.path, line: run.suiteEntry(planning: key)?.line, workspace: workspace,
                                               title: "Strain: \(trials[0].outcome.description) \(key)", message: message))
        }
        if worst.count > WorkflowCommand.annotationLimit {
            lines.append(WorkflowCommand.notice(title: "Strain", message: "\(worst.count - WorkflowCommand.annotationLimit) more trial keys ended unexpectedly: see the step summary or run.json"))
        }
        let unexpectedCount = run.trials.filter { !$0.expected }.count
        let summary = unexpectedCount == 0 ? "\(counted(run.trials.count, "trial")): every outcome expected" : "\(counted(run.trials.count, "trial")): \(unexpectedCount) unexpected"
        lines.append(WorkflowCommand.notice(title: "Strain run \(run.suite.name)", message: summary))
        return lines.joined(separator: "\n") + "\n"
    }
}
