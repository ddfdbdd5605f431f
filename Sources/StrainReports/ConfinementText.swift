import StrainRecords

/// Confinement violations as evidence: per distinct violation, the access and the
/// few innermost frames of both stacks.
package enum ConfinementText {
    /// Frames shown of each stack on one line.
    static let frameCount = 4

    /// `logTitle(of:) ← closure #1 in … ← …`.
    package static func stack(_ frames: [Frame]) -> String {
        frames.prefix(frameCount).map(name).joined(separator: " ← ") + (frames.count > frameCount ? " ← …" : "")
    }

    static func name(_ frame: Frame) -> String { frame.symbol ?? frame.displayName }
}

extension EvidenceSection {
    /// The first trial of each scenario, parameters and strategy that caught violations.
    static func confinement(_ run: RunRecord) -> EvidenceSection {
        let stack = { (title: String, frames: [Frame]) in
            Stack(title: title, line: ConfinementText.stack(frames), frames: frames.prefix(pageFrames).map(ConfinementText.name))
        }
        let trials = run.firstTrials(byProfile: false) { $0.confinementViolations?.isEmpty == false }
        return EvidenceSection(id: "confinement", heading: "Confinement violations", entries: trials.map { trial in
            entry(trial, findings: (trial.confinementViolations ?? []).map { violation in
                Finding(headline: violation.summary, compared: [stack("access", violation.accessStack), stack("owner", violation.ownerStack)], context: [])
            })
        })
    }
}
