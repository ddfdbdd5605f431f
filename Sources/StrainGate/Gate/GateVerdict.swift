/// What the gate concluded for one trial key or one metric of it.
package enum GateVerdict: String, Codable, Hashable, Sendable, CaseIterable {
    /// The harness failed on that trial: the data is not there (exit 3).
    case harnessError
    /// In the baseline, absent from the candidate: incomplete data (exit 3).
    case missing
    /// An outcome got worse: a new failing outcome, or an expected one became unexpected (exit 1).
    case outcomeChanged
    /// A metric got worse beyond its threshold (exit 1).
    case regressed
    /// Cannot be judged honestly: too few repetitions, machines that differ, a
    /// cross-run timing without calibration. Counted, never a silent pass.
    case inconclusive
    /// A metric got better beyond its threshold.
    case improved
    /// An outcome got better (a failing trial now completes).
    case fixed
    /// In the candidate only.
    case new
    /// Within its threshold.
    case unchanged
    /// Shown, not judged (a metric with no direction, one that varies in the baseline).
    case notGated

    /// How much a verdict weighs when a row sums up its metrics: the worst wins.
    package var severity: Int {
        switch self {
        case .harnessError: 9
        case .missing: 8
        case .outcomeChanged: 7
        case .regressed: 6
        case .inconclusive: 5
        case .improved: 4
        case .fixed: 3
        case .new: 2
        case .unchanged: 1
        case .notGated: 0
        }
    }

    /// Whether this verdict fails the gate.
    package var fails: Bool { [.harnessError, .missing, .outcomeChanged, .regressed].contains(self) }

    /// `outcome changed`, `too few to judge`: for people.
    package var label: String {
        switch self {
        case .harnessError: "harness error"
        case .missing: "missing"
        case .outcomeChanged: "outcome changed"
        case .regressed: "regressed"
        case .inconclusive: "inconclusive"
        case .improved: "improved"
        case .fixed: "fixed"
        case .new: "new"
        case .unchanged: "unchanged"
        case .notGated: "not gated"
        }
    }
}
