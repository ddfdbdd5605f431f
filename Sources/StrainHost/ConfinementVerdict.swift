import StrainKit
import StrainWire

/// Turns the violations a trial's confinement checkers caught into its outcome.
enum ConfinementVerdict {
    /// A trial that otherwise completed, with violations, ends `confinementViolated`;
    /// its report carries them (and the memory map to name their frames). Other
    /// endings keep their outcome: the violations are attached all the same.
    static func apply(_ log: ConfinementLog, to report: inout HostReport) {
        let violations = log.violations
        guard !violations.isEmpty else { return }
        report.confinementViolations = violations
        report.maps = ProcFile.contents(of: "/proc/self/maps")
        report.metrics.custom["confinementViolations"] = Double(log.total)
        guard report.outcome.kind == .completed else { return }
        let first = violations[0]
        let total = log.total
        report.outcome = TrialOutcome(
            kind: .confinementViolated,
            message: "\(total) access\(total == 1 ? "" : "es") from the wrong queue or thread; first: \(first.object).\(first.access) on thread \(first.threadID) (\(first.threadName)), owned by \(first.owner)"
        )
    }
}
