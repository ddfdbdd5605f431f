import StrainKit

/// Turns the violations a trial's confinement checkers caught into its outcome.
enum ConfinementVerdict {
    /// A trial that otherwise completed, with violations, ends `confinementViolated`;
    /// its report carries them (and the memory map to name their frames). Other
    /// endings keep their outcome: the violations are attached all the same.
    static func apply(_ log: ConfinementLog, to report: inout HostReport) {
        let violations = log.violations
        guard !violations.isEmpty else { return }
        report.confinementViolations = violations
        report.maps = Watchdog.contents(of: "/proc/self/maps")
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

extension ConfinementVerdict {
    /// The violation with its frames named, in the parent.
    static func named(_ raw: RawConfinementViolation, maps: String, symbolizer: Symbolizer) -> ConfinementViolation {
        ConfinementViolation(
            object: raw.object, access: raw.access, owner: raw.owner, threadID: raw.threadID, threadName: raw.threadName,
            count: raw.count,
            accessStack: outsideChecker(symbolizer.frames(for: raw.accessStack.map(UInt64.init), maps: maps, firstIsExact: false)),
            ownerStack: outsideChecker(symbolizer.frames(for: raw.ownerStack.map(UInt64.init), maps: maps, firstIsExact: false))
        )
    }

    /// The stack from the scenario's own frame out: the checker's frames on top dropped.
    /// (Unoptimised builds add frames of their own there: closures, `withUnsafeMutableBufferPointer`.)
    static func outsideChecker(_ frames: [Frame]) -> [Frame] {
        let checker = ["ConfinementLog.", "Confined.", "ConfinementChecker.", "strain_capture_stack", "withUnsafeMutableBufferPointer"]
        let window = frames.prefix(16)
        guard let last = window.lastIndex(where: { frame in checker.contains { frame.symbol?.contains($0) == true } }),
              last + 1 < frames.count else { return frames }
        return Array(frames.dropFirst(last + 1))
    }
}
