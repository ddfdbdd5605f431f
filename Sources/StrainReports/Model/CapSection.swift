import StrainRecords
import StrainText

/// Thread caps a pool hit, with the workers the work needed.
package struct CapSection: TextSection {
    /// Each capped configuration, with the workers it needed at most.
    package var caps: [(trial: TrialKey, verdict: CapVerdict)]

    init(_ run: RunRecord) { caps = DumpText.capVerdicts(run) }

    package func terminalLines(_ style: TerminalStyle) -> [String] {
        caps.isEmpty ? [] : style.heading("Thread caps") + caps.map { "  \($0.trial): \($0.verdict.message)" }
    }

    package func markdown() -> String {
        guard !caps.isEmpty else { return "" }
        return "## Thread caps\n\n" + caps.map { "- \(Markdown.escape($0.trial.description)): **\(Markdown.escape($0.verdict.message))**\n" }.joined() + "\n"
    }
}
