import StrainRecords
import StrainText

/// Evidence a trial caught in its own process, as one shape for every kind
/// (sanitizer reports, confinement violations): per distinct place (the first
/// trial of each configuration), each finding with the stacks it compares side
/// by side (a race's two accesses; the access and the owner) and the stacks
/// that give context (where the memory came from, where a thread was created).
package struct EvidenceSection: TextSection, PageSection {
    /// A stack, ready to show: its title, the innermost frames on one line, and the frames one per line.
    package struct Stack: Sendable {
        /// `Write of size 8 at 0x7208 by thread T3`, `access`.
        package var title: String
        /// The innermost frames on one line, ` ← ` between them.
        package var line: String
        /// The frames the page lists, innermost first.
        package var frames: [String]
    }

    /// One finding: a race, a memory error, a violation.
    package struct Finding: Sendable {
        /// `ThreadSanitizer: data race at …`, or the violation's summary.
        package var headline: String
        /// The stacks shown side by side.
        package var compared: [Stack]
        /// The stacks that explain them (allocation, thread creation).
        package var context: [Stack]
    }

    /// One place's findings.
    package struct Entry: Sendable {
        /// `exec program=./race gcd-global linux`.
        package var title: String
        /// The outcome's message, if it has one.
        package var message: String?
        /// The outcome, for a message-less line.
        package var outcome: String
        /// What the place caught.
        package var findings: [Finding]
        /// Its first trial's key: the place's (the profile counts only `byProfile`).
        package var key: TrialKey? = nil
    }

    /// The page's anchor: `sanitizer`.
    package var id: String
    /// `Sanitizer reports`.
    package var heading: String
    /// One entry per place, in run order; its anchor is `id-n`, n from 1.
    package var entries: [Entry]
    /// Whether a place is per profile too.
    package var byProfile = false

    /// The anchor of the entry for `trial`'s place, if the section has one.
    func anchor(of trial: TrialRecord) -> String? {
        let place = { (key: TrialKey) in [key.configuration, key.strategy.description] + (self.byProfile ? [key.profile.rawValue] : []) }
        return entries.firstIndex { $0.key.map(place) == place(trial.key) }.map { "\(id)-\($0 + 1)" }
    }

    /// Findings the terminal shows per place, and frames the page lists per stack.
    static let terminalFindings = 3
    static let pageFrames = 12

    /// The place's title, as every evidence section names it.
    static func title(_ trial: TrialRecord) -> String { "\(trial.key.configuration) \(trial.strategy) \(trial.profile.rawValue)" }

    static func entry(_ trial: TrialRecord, findings: [Finding]) -> Entry {
        Entry(title: title(trial), message: trial.outcome.message, outcome: trial.outcome.description, findings: findings, key: trial.key)
    }

    package func terminalLines(_ style: TerminalStyle) -> [String] {
        guard !entries.isEmpty else { return [] }
        return style.heading(heading) + entries.flatMap { entry -> [String] in
            ["  \(entry.title): \(entry.message ?? entry.outcome)"] + entry.findings.prefix(Self.terminalFindings).flatMap { finding in
                ["    \(finding.headline)"] + (finding.compared.prefix(2) + finding.context.prefix(1)).map { "      \($0.title): \($0.line)" }
            }
        }
    }

    package func markdown() -> String {
        guard !entries.isEmpty else { return "" }
        var out = "## \(heading)\n\n"
        for entry in entries {
            out += "- **\(Markdown.escape(entry.title))**: \(Markdown.escape(entry.message ?? ""))\n"
            for finding in entry.findings {
                out += "  - \(Markdown.escape(finding.headline))"
                for stack in finding.compared + finding.context.prefix(2) {
                    out += "<br>\(Markdown.escape(stack.title)): `\(Markdown.escapeHTML(stack.line))`"
                }
                out += "\n"
            }
        }
        return out + "\n"
    }

    /// The compared stacks side by side (they wrap under each other on a phone), the context below.
    package func html(into page: inout HTMLReport.Page) {
        guard !entries.isEmpty else { return }
        let e = HTMLText.escape
        page.raw("<section id=\"\(e(id))\">\n<h2>\(e(heading))</h2>\n")
        for (index, entry) in entries.enumerated() {
            page.raw("<p id=\"\(e(id))-\(index + 1)\">\(page.trialAnchors.markers(at: "\(id)-\(index + 1)"))<b>\(e(entry.title))</b>: \(e(entry.message ?? ""))</p>\n")
            for finding in entry.findings {
                page.raw("<h3>\(e(finding.headline))</h3>\n<div style=\"display:flex;flex-wrap:wrap;gap:1em\">")
                for stack in finding.compared {
                    page.raw("<div style=\"flex:1 1 18em;min-width:0;overflow-wrap:anywhere\"><b>\(e(stack.title))</b><ol start=\"0\">")
                    for frame in stack.frames { page.raw("<li><code>\(e(frame))</code></li>") }
                    page.raw("</ol></div>")
                }
                page.raw("</div>\n")
                for stack in finding.context {
                    page.raw("<p style=\"overflow-wrap:anywhere\">\(e(stack.title)): <code>\(e(stack.line))</code></p>\n")
                }
            }
        }
        page.raw("</section>\n")
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
