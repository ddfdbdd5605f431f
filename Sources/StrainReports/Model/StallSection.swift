import StrainRecords
import StrainText

/// One thread dump per distinct stall (scenario, parameters, strategy, profile,
/// outcome), with the watchdog's summary.
package struct StallSection: TextSection, PageSection {
    /// One distinct stall.
    package struct Entry: Sendable {
        /// Its first trial.
        package var trial: TrialRecord
        /// That trial's thread dump.
        package var dump: ThreadDump
        /// `stall-2`: where the page shows it.
        package var anchor: String
        /// `deadlocked after 1.20 s: 3 threads in 2 groups`.
        package var headline: String
    }

    /// `12 caught by the heartbeat watchdog: last heartbeat to outcome recorded, median 412 ms …`.
    package var summary: String?
    /// The stalls, in run order.
    package var entries: [Entry]

    /// Thread groups the terminal and summary.md list per dump.
    static let terminalGroups = 4

    init(_ run: RunRecord) {
        summary = DumpText.watchdogSummary(run)
        entries = DumpText.distinctStalls(run).enumerated().map { index, trial in
            Entry(trial: trial, dump: trial.dump!, anchor: "stall-\(index + 1)", headline: DumpText.headline(trial))
        }
    }

    package func terminalLines(_ style: TerminalStyle) -> [String] {
        guard !entries.isEmpty else { return [] }
        var lines = style.heading("Stalls")
        if let summary { lines.append("  \(summary)") }
        for entry in entries {
            let dump = entry.dump
            lines.append("  \(entry.trial.key): \(entry.headline)")
            if let cycle = dump.waitCycle { lines.append("    wait cycle: \(cycle.description)") }
            for group in dump.groups.prefix(Self.terminalGroups) { lines.append("    \(DumpText.group(group))") }
            if dump.groups.count > Self.terminalGroups { lines.append("    … \(counted(dump.groups.count - Self.terminalGroups, "more thread group")) in run.json") }
        }
        return lines
    }

    /// summary.md's stalls: a line per distinct stall, its wait cycle, and a line per
    /// thread group (as many as the terminal shows); the dumps' frames are in
    /// report.html and run.json, not in a pull-request comment.
    package func markdown() -> String {
        guard !entries.isEmpty else { return "" }
        var out = "## Stalls\n\n"
        if let summary { out += "\(Markdown.escape(summary)).\n\n" }
        for entry in entries {
            let dump = entry.dump
            out += "- **\(Markdown.escape(entry.trial.key.description))**: \(Markdown.escape(entry.headline))\n"
            if let cycle = dump.waitCycle { out += "  - wait cycle: \(Markdown.escape(cycle.description))\n" }
            for group in dump.groups.prefix(Self.terminalGroups) { out += "  - \(Markdown.escape(DumpText.group(group)))\n" }
            if dump.groups.count > Self.terminalGroups { out += "  - … \(counted(dump.groups.count - Self.terminalGroups, "more thread group")) in run.json\n" }
        }
        out += "\nEvery thread's frames are in report.html (Stalls) and run.json (each trial's `dump`).\n\n"
        return out
    }

    package func html(into page: inout HTMLReport.Page) {
        guard !entries.isEmpty else { return }
        let e = HTMLText.escape
        page.raw("<section id=\"stalls\">\n<h2>Stalls</h2>\n")
        if let summary { page.raw("<p>\(e(summary)).</p>\n") }
        for entry in entries {
            let dump = entry.dump
            page.raw("<details class=\"dump\" id=\"\(entry.anchor)\" open><summary>\(page.trialAnchors.markers(at: entry.anchor))\(e(entry.trial.key.description)): \(e(entry.headline))</summary>\n")
            if let cycle = dump.waitCycle { page.raw("<p class=\"cycle\">Wait cycle: \(e(cycle.description))</p>\n") }
            if let note = dump.sourceLocations?.note { page.raw("<p class=\"note\">\(e(note))</p>\n") }
            for group in dump.groups {
                page.raw("<details class=\"thread-group\"><summary>\(e(DumpText.group(group)))</summary>\n")
                let threads = group.threads.map { "\($0.tid) \(ThreadNames.name($0.name)) (\(ThreadNames.state($0.state))\($0.wait.map { ", " + $0 } ?? "")\($0.viaPtrace ? ", ptrace" : ""))" }
                page.raw("<p class=\"threads\">\(e(threads.joined(separator: "; ")))</p><ol class=\"frames\">")
                for (index, frame) in group.frames.enumerated() { HTMLReport.frameItem(frame, index: index, into: &page) }
                page.raw("</ol></details>\n")
            }
            page.raw("</details>\n")
        }
        page.raw("</section>\n")
    }
}
