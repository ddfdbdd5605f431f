import StrainRecords
import StrainText

/// What failed, first: a line per trial key with unexpected trials, its
/// outcomes counted, with the reason and where it happened.
package struct FailedSection: TextSection {
    /// One failing key, with what every view says of it.
    package struct Entry: Sendable {
        /// The key and its unexpected trials.
        package var key: FailedKeys.Key
        /// `timedOut ×9 of 10; expects completed`.
        package var line: String
        /// `completed, crashed`.
        package var expected: String
        /// What the child said on standard error, or the runtime's trap name.
        package var reason: String?
        /// The outcome's own message.
        package var message: String?
        /// `at` or `entered the recursion at`, and the frame's name.
        package var point: (label: String, name: String)?
    }

    /// The failing keys, in plan order.
    package var entries: [Entry]

    init(_ run: RunRecord) {
        entries = FailedKeys(run).keys.map { key in
            let trial = key.first
            let point = trial.trace.flatMap(TraceText.failurePoint).map { ($0.label, $0.frame.displayName) }
            return Entry(key: key, line: FailedKeys.line(key), expected: trial.expectedOutcomes.joined(separator: ", "),
                         reason: CrashReason.message(for: trial), message: trial.outcome.message, point: point)
        }
    }

    /// The terminal shows what failed at its end instead: see ``recap(limit:)``.
    package func terminalLines(_ style: TerminalStyle) -> [String] { [] }

    /// What a failing run ends with: its failing keys, each once with its outcomes
    /// counted (`noop main ios: completed ×2 of 3; expects crashed`); at most `limit`, then how many more.
    package func recap(limit: Int = 10) -> [String] {
        var lines = entries.prefix(limit).map { "\($0.key.key): \($0.line)" }
        if entries.count > limit { lines.append("… and \(entries.count - limit) more keys: run.json and the reports list them all") }
        return lines
    }

    package func markdown() -> String {
        guard !entries.isEmpty else { return "" }
        var out = "## What failed\n\n"
        for entry in entries {
            out += "- **\(Markdown.escape(entry.key.key.description))**: \(Markdown.escape(entry.line))"
            if let reason = entry.reason ?? entry.message { out += " — \(Markdown.escape(String(reason.prefix(300))))" }
            out += "\n"
        }
        return out + "\n"
    }
}
