import StrainRecords
import StrainText

/// Time and memory against a swept parameter, with the fitted exponents.
package struct GrowthSection: TextSection {
    /// One sweep per scenario and fixed parameters.
    package var sweeps: [GrowthSweep]

    package func terminalLines(_ style: TerminalStyle) -> [String] {
        sweeps.isEmpty ? [] : style.heading("Growth") + sweeps.flatMap { ["  \($0.title)"] + $0.fitLines.map { "    \($0)" } }
    }

    package func markdown() -> String {
        guard !sweeps.isEmpty else { return "" }
        return "## Growth\n\n" + sweeps.map { "- **\(Markdown.escape($0.title))**: " + $0.fitLines.map(Markdown.escape).joined(separator: "; ") + "\n" }.joined() + "\n"
    }
}
