import StrainKit
import StrainWire

extension TrialRecord {
    /// The record of a finished trial, graded against what its suite expects and
    /// with the GCD cap verdicts its blocked workers call for: the runner's policy,
    /// decided here rather than in the record.
    init(graded spec: TrialSpec, outcome: TrialOutcome, metrics: TrialMetrics, trace: FaultTrace?,
         stdout: String?, stderr: String?, startedAt: String) {
        let verdicts = CapVerdict.verdicts(strategy: spec.strategy, needed: metrics.peakBlockedWorkers)
        self.init(
            id: spec.id, index: spec.index, seed: spec.seed, outcome: outcome,
            expected: outcome.kind != .harnessError && spec.expected.contains { $0.accepts(outcome) },
            expectedOutcomes: spec.expected.map(\.description), metrics: metrics, trace: trace,
            capVerdicts: verdicts.isEmpty ? nil : verdicts, stdout: stdout, stderr: stderr, startedAt: startedAt
        )
    }
}
