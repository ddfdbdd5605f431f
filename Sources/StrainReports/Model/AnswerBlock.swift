import StrainRecords

/// Why the run failed and what to do, and its stalls a line each: report.html's
/// answer box, and what summary.md says right after What failed, before any table.
/// A bisect's per-probe stack verdicts are left to their own section: the bisect's
/// answer replaces them.
package struct AnswerBlock: TextSection {
    /// A stack verdict or a thread cap, with what backs it.
    package struct Advice: Sendable {
        /// The configuration: a verdict's title, a cap's trial key.
        package var bold: String
        /// What happened and what to do.
        package var text: String
        /// The trial whose trace shows the overflow (a stack verdict's).
        package var overflow: TrialRecord?
        /// Where the page shows the dump of the capped configuration, when it stalled.
        package var dumpAnchor: String?
    }

    /// One distinct stall.
    package struct Stall: Sendable {
        /// Its trial key.
        package var key: String
        /// `deadlocked — thread 1 holds a and waits for b; …`: the outcome and its wait cycle.
        package var text: String
        /// Where the page shows its dump.
        package var anchor: String
    }

    /// The stack verdicts, then the thread caps.
    package var advice: [Advice]
    /// The stalls, in run order.
    package var stalls: [Stall]

    /// Whether there is nothing to say.
    package var isEmpty: Bool { advice.isEmpty && stalls.isEmpty }

    init(stack: StackVerdictSection, caps: CapSection, stalls: StallSection, isBisect: Bool) {
        let verdicts = isBisect ? [] : Array(zip(stack.verdicts, stack.overflows))
        advice = verdicts.map { Advice(bold: $0.0.title, text: $0.0.explanation, overflow: $0.1) }
            + caps.caps.map { cap in
                Advice(bold: cap.trial.description, text: cap.verdict.message, dumpAnchor: stalls.entries.first { $0.trial.key == cap.trial }?.anchor)
            }
        self.stalls = stalls.entries.map { entry in
            Stall(key: entry.trial.key.description, text: entry.trial.outcome.description + (entry.dump.waitCycle.map { " — \($0.description)" } ?? ""),
                  anchor: entry.anchor)
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
