import StrainRecords

/// Why the run failed and what to do, and its stalls a line each: what summary.md
/// says right after What failed, before any table, as report.html's answer box does.
/// A bisect's per-probe stack verdicts are left to their own section: the bisect's
/// answer replaces them.
package struct AnswerBlock: TextSection {
    /// `(title, explanation)` per stack verdict, then `(key, message)` per thread cap.
    package var advice: [(bold: String, text: String)]
    /// `(key, outcome — wait cycle)` per distinct stall.
    package var stalls: [(key: String, text: String)]

    /// Whether there is nothing to say.
    package var isEmpty: Bool { advice.isEmpty && stalls.isEmpty }

    init(stack: StackVerdictSection, caps: CapSection, stalls: StallSection, isBisect: Bool) {
        advice = (isBisect ? [] : stack.verdicts.map { ($0.title, $0.explanation) })
            + caps.caps.map { ($0.trial.description, $0.verdict.message) }
        self.stalls = stalls.entries.map { entry in
            (entry.trial.key.description, entry.trial.outcome.description + (entry.dump.waitCycle.map { " — \($0.description)" } ?? ""))
        }
    }

    /// None: the terminal ends with its failing keys, and shows verdicts, caps and stalls in their sections.
    package func terminalLines(_ style: TerminalStyle) -> [String] { [] }

    package func markdown() -> String {
        guard !isEmpty else { return "" }
        var out = "## Why, and what to do\n\n"
        out += advice.map { "- **\(Markdown.escape($0.bold))**: \(Markdown.escape($0.text))\n" }.joined()
        if !stalls.isEmpty {
            out += (advice.isEmpty ? "" : "\n") + "**Stalls** (each dump is under Stalls below):\n\n"
            out += stalls.map { "- **\(Markdown.escape($0.key))**: \(Markdown.escape($0.text))\n" }.joined()
        }
        return out + "\n"
    }
}
