import StrainRecords

/// Confinement violations as text: per distinct violation, the access and the
/// few innermost frames of both stacks. Shared by the terminal, Markdown and HTML.
package enum ConfinementText {
    /// Frames shown of each stack.
    static let frameCount = 4

    /// The first trial of each scenario, parameters and strategy that caught violations.
    static func distinct(_ run: RunRecord) -> [TrialRecord] {
        run.firstTrials(byProfile: false) { $0.confinementViolations?.isEmpty == false }
    }

    /// `logTitle(of:) ← closure #1 in … ← …`.
    package static func stack(_ frames: [Frame]) -> String {
        let names = frames.prefix(frameCount).map { $0.symbol ?? $0.displayName }
        return names.joined(separator: " ← ") + (frames.count > frameCount ? " ← …" : "")
    }

    /// The lines the terminal prints, without the heading.
    static func lines(_ run: RunRecord) -> [String] {
        distinct(run).flatMap { trial -> [String] in
            ["  \(trial.key.configuration) \(trial.strategy) \(trial.profile.rawValue): \(trial.outcome.message ?? trial.outcome.description)"]
                + (trial.confinementViolations ?? []).prefix(3).flatMap { violation in
                    ["    \(violation.summary)", "      access: \(stack(violation.accessStack))", "      owner:  \(stack(violation.ownerStack))"]
                }
        }
    }

    static func markdown(_ run: RunRecord) -> String {
        let trials = distinct(run)
        guard !trials.isEmpty else { return "" }
        var out = "## Confinement violations\n\n"
        for trial in trials {
            out += "- **\(MarkdownReport.escape("\(trial.key.configuration) \(trial.strategy) \(trial.profile.rawValue)"))**: \(MarkdownReport.escape(trial.outcome.message ?? ""))\n"
            for violation in trial.confinementViolations ?? [] {
                out += "  - \(MarkdownReport.escape(violation.summary))<br>access: `\(MarkdownReport.escapeHTML(stack(violation.accessStack)))`<br>owner: `\(MarkdownReport.escapeHTML(stack(violation.ownerStack)))`\n"
            }
        }
        return out + "\n"
    }
}

extension TerminalReport {
    /// The violations section, or nothing when none were caught.
    func confinementLines(_ run: RunRecord) -> [String] {
        let lines = ConfinementText.lines(run)
        return lines.isEmpty ? [] : ["", paint("Confinement violations", 1)] + lines
    }
}

extension HTMLReport {
    static func confinement(_ run: RunRecord, into page: inout Page) {
        let trials = ConfinementText.distinct(run)
        guard !trials.isEmpty else { return }
        page.raw("<section id=\"confinement\">\n<h2>Confinement violations</h2>\n<ul>")
        for trial in trials {
            page.raw("<li><b>\(e("\(trial.key.configuration) \(trial.strategy) \(trial.profile.rawValue)"))</b>: \(e(trial.outcome.message ?? ""))<ul>")
            for violation in trial.confinementViolations ?? [] {
                page.raw("<li>\(e(violation.summary))<br>access: <code>\(e(ConfinementText.stack(violation.accessStack)))</code><br>owner: <code>\(e(ConfinementText.stack(violation.ownerStack)))</code></li>")
            }
            page.raw("</ul></li>")
        }
        page.raw("</ul>\n</section>\n")
    }
}

extension RunRecord {
    /// The first trial of each configuration and strategy (and profile, with
    /// `byProfile`) for which `has` holds: one entry per place in an evidence section.
    func firstTrials(byProfile: Bool, where has: (TrialRecord) -> Bool) -> [TrialRecord] {
        var seen = Set<String>()
        return trials.filter { trial in
            guard has(trial) else { return false }
            return seen.insert("\(trial.key.configuration) \(trial.strategy)" + (byProfile ? " \(trial.profile.rawValue)" : "")).inserted
        }
    }
}
