import StrainRecords
import StrainText

/// Why the run failed and what to do, and its stalls a line each: report.html's
/// answer box, what summary.md says right after What failed, before any table, and
/// what the terminal says just before its closing count. Every failing key gets its
/// advice (`OutcomeAdvice`), an overflow's being its stack verdict, and so does every
/// outcome but completed that the suite expects. A bisect's
/// per-probe stack verdicts are left out: the bisect's answer replaces them.
package struct AnswerBlock: TextSection {
    /// A stack verdict, a failing key's advice or a thread cap, with what backs it.
    package struct Advice: Sendable {
        /// The configuration: a verdict's title, a failing or capped trial key.
        package var bold: String
        /// What happened and what to do.
        package var text: String
        /// The trial whose trace, dump or evidence backs it, when there is one.
        package var evidence: TrialRecord?
        /// Where the page shows the dump of the capped configuration, when it stalled.
        package var dumpAnchor: String?
    }

    /// One distinct stall.
    package struct Stall: Sendable {
        /// Its trial key.
        package var key: String
        /// `deadlocked`.
        package var outcome: String
        /// What it waits on (`thread 1 holds a and waits for b; …`), when the dump named its wait cycle.
        package var detail: String?
        /// What to do about it (`OutcomeAdvice`), expected or not.
        package var advice: String
        /// Where the page shows its dump.
        package var anchor: String

        /// `KEY: OUTCOME`, the heading every item of the block has.
        package var heading: String { "\(key): \(outcome)" }
        /// The line after the heading: what it waits on, then what to do.
        package var body: String { (detail.map { $0 + ". " } ?? "") + advice }
    }

    /// The stack verdicts, then each failing key's advice (a stall's is on its stall), each expected outcome's, then the thread caps.
    package var advice: [Advice]
    /// The stalls, in run order.
    package var stalls: [Stall]

    /// Whether there is nothing to say.
    package var isEmpty: Bool { advice.isEmpty && stalls.isEmpty }

    init(stack: StackVerdictSection, failed: FailedSection, trials: [TrialRecord], caps: CapSection, stalls: StallSection, isBisect: Bool) {
        let verdicts = isBisect ? [] : Array(zip(stack.verdicts, stack.overflows))
        // An overflow's advice is its configuration's verdict (in a bisect, the bisect's answer).
        let covered = Set(stack.verdicts.map { StackVerdict.Configuration($0.key) })
        // A stall's advice is said on its line under Stalls, expected or not.
        let stalled = Set(stalls.entries.map { "\($0.trial.key) \($0.trial.outcome.kind)" })
        // Each of a key's outcomes gets its own advice, from its first trial: a SIGABRT beside
        // nine SIGSEGVs got only the SIGABRT's (re-trial 35n, F5).
        let advised = { (group: [TrialRecord]) in
            !stalled.contains("\(group[0].id.key) \(group[0].outcome.kind)")
                && (group[0].outcome.kind != .stackOverflow || !(isBisect || covered.contains(StackVerdict.Configuration(group[0].id.key))))
        }
        let failing = failed.entries.flatMap { $0.key.byOutcome.filter(advised) }
        // An outcome the suite expects says what to do too, as an expected overflow's verdict and an expected
        // stall do: a passing run's expected crash and throw had none (re-trial 35o, F5). A bisect's probes have its answer.
        let foreseen = isBisect ? [] : Dictionary(grouping: trials.filter { $0.expected && $0.outcome.kind != .completed }, by: { "\($0.id.key) \($0.outcome)" })
            .values.sorted { $0[0].index < $1[0].index }.filter(advised)
        // Every heading reads `KEY: OUTCOME`, as a stall's does: a verdict's key spans strategies and
        // profiles, so it names those that ran out; a count is said only when it is not 1.
        advice = verdicts.map { Advice(bold: "\($0.0.title) \($0.0.ranOutOn.joined(separator: ", ")): " + TrialOutcome.Kind.stackOverflow.rawValue, text: $0.0.explanation, evidence: $0.1) }
            + failing.map { group in
                Advice(bold: Self.heading(group), text: OutcomeAdvice.text(for: group[0]), evidence: group[0])
            }
            + foreseen.map { group in
                Advice(bold: Self.heading(group) + ", expected", text: OutcomeAdvice.text(for: group[0]), evidence: group[0])
            }
            + caps.caps.map { cap in
                Advice(bold: cap.trial.description, text: cap.verdict.message, dumpAnchor: stalls.entries.first { $0.trial.key == cap.trial }?.anchor)
            }
        self.stalls = stalls.entries.map { entry in
            Stall(key: entry.trial.key.description, outcome: entry.trial.outcome.description, detail: entry.dump.waitCycle?.description,
                  advice: OutcomeAdvice.text(for: entry.trial), anchor: entry.anchor)
        }
    }

    /// `KEY: OUTCOME` of a group of one key's trials that ended alike, `×N` after it when not 1.
    static func heading(_ group: [TrialRecord]) -> String {
        "\(group[0].id.key): \(group[0].outcome)" + (group.count == 1 ? "" : " ×\(group.count)")
    }

    /// The advice, under its heading, then each stall's (their dumps have their own
    /// section above), each item's lines fitted to the window.
    package func terminalLines(_ style: TerminalStyle) -> [String] {
        guard !isEmpty else { return [] }
        return style.heading("Why, and what to do") + advice.flatMap { style.fit("  \($0.bold): \($0.text)") }
            + stalls.flatMap { style.fit("  \($0.heading): \($0.body)") }
    }

    package func markdown() -> String {
        guard !isEmpty else { return "" }
        var out = "## Why, and what to do\n\n"
        out += advice.map { "- **\(Markdown.escape($0.bold))**: \(Markdown.escape($0.text))\n" }.joined()
        if !stalls.isEmpty {
            out += (advice.isEmpty ? "" : "\n") + "**What stalled** (each dump is under Stalls below):\n\n"
            out += stalls.map { "- **\(Markdown.escape($0.heading))**: \(Markdown.escape($0.body))\n" }.joined()
        }
        return out + "\n"
    }
}
