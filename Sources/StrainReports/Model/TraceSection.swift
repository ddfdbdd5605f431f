import StrainRecords
import StrainText

/// One trace per distinct fault (scenario, parameters, strategy, profile,
/// signal), each with the anchor the page gives it and its reason.
package struct TraceSection: TextSection, PageSection {
    /// One distinct fault.
    package struct Entry: Sendable {
        /// Its first trial.
        package var trial: TrialRecord
        /// That trial's trace.
        package var trace: FaultTrace
        /// `trace-3`: where the page shows it.
        package var anchor: String
        /// What the child said, or the runtime's trap name.
        package var reason: String?
    }

    /// The faults, in run order.
    package var entries: [Entry]

    init(_ run: RunRecord) {
        struct Seen: Hashable {
            var key: TrialKey
            var signal: Int32
        }
        var seen = Set<Seen>()
        let distinct = run.trials.filter { trial in
            guard let trace = trial.trace else { return false }
            return seen.insert(Seen(key: trial.key, signal: trace.signal)).inserted
        }
        entries = distinct.enumerated().map { index, trial in
            Entry(trial: trial, trace: trial.trace!, anchor: "trace-\(index + 1)", reason: CrashReason.message(for: trial))
        }
    }

    package func terminalLines(_ style: TerminalStyle) -> [String] {
        guard !entries.isEmpty else { return [] }
        var lines = style.heading("Traces")
        // A frame's name, its template arguments left out where the line would not hold it whole.
        var elided = false
        func frame(_ lead: String, _ name: String) {
            let fitted = style.frameName(name, after: lead.count)
            elided = elided || fitted.elided
            lines.append(lead + fitted.name)
        }
        for entry in entries {
            let trace = entry.trace
            lines.append("  \(entry.trial.key): \(TraceText.headline(trace))")
            if let reason = entry.reason { lines.append("    reason: \(reason)") }
            if let cycle = trace.cycle {
                if let fault = trace.firstFrames.first { frame("    fault: #0  ", fault.displayName) }
                lines.append("    cycle: \(TraceText.cycle(cycle))")
                let layout = TraceLayout(trace)
                if let entry = layout.entry {
                    frame("    entered the recursion at: \(TraceText.frameNumber(entry.index))  ", entry.frame.displayName)
                    // When the entry is still the runtime's, the first frame with a source location after it is the caller's code.
                    if entry.frame.location == nil, let user = layout.firstLocated(after: entry.index) {
                        frame("    called from: \(TraceText.frameNumber(user.index))  ", user.frame.displayName)
                    }
                }
            } else if let first = trace.firstFrames.first {
                // `at:` names the frame summary.md's and What failed's `at` name (it named
                // the faulting frame here, `__pthread_kill_implementation`, and `in:` the
                // scenario's); the faulting frame, where it is another, is the `fault:`, as
                // over a cycle.
                if let point = TraceText.pointOfFailure(trace), point != first, let index = trace.firstFrames.firstIndex(of: point) {
                    frame("    fault: #0  ", first.displayName)
                    frame("    at: \(TraceText.frameNumber(index))  ", point.displayName)
                } else {
                    frame("    at: #0  ", first.displayName)
                }
            }
            if let note = trace.sourceLocations?.note { lines.append("    (\(note))") }
        }
        if elided { lines.append("  (<…>: template arguments left out to fit; report.html and run.json have every name whole)") }
        return lines
    }

    /// summary.md's traces: a line per distinct fault with its place (where it failed,
    /// or the cycle and the frame that entered it); the frames themselves are in
    /// report.html and run.json. Whole traces made the default suite's summary.md
    /// 61,000 of the 65,536 characters a pull-request comment takes.
    package func markdown() -> String {
        guard !entries.isEmpty else { return "" }
        var out = "## Traces\n\n"
        let quoted = { (text: String) in "`" + OneLine.text(text).replacingOccurrences(of: "`", with: "'") + "`" }
        for entry in entries {
            let trace = entry.trace
            out += "- **\(Markdown.escape(entry.trial.key.description))**: \(Markdown.escape(TraceText.headline(trace)))"
            if let reason = entry.reason { out += " — \(quoted(Self.capped(reason)))" }
            out += "\n"
            if let cycle = trace.cycle { out += "  - cycle: \(quoted(Self.capped(TraceText.cycle(cycle))))\n" }
            if let point = TraceText.failurePoint(trace) { out += "  - \(point.label): \(quoted(point.frame.displayName))\n" }
        }
        out += "\nEvery frame of each trace is in report.html (Traces) and run.json (each trial's `trace`).\n\n"
        return out
    }

    /// Characters of a reason or a cycle summary.md quotes on its one line.
    static let quotedLength = 160

    /// `text` within ``quotedLength`` characters, an ellipsis where it was cut.
    static func capped(_ text: String) -> String {
        text.count <= quotedLength ? text : String(text.prefix(quotedLength - 1)) + "…"
    }

    package func html(into page: inout HTMLReport.Page) {
        guard !entries.isEmpty else { return }
        let e = HTMLText.escape
        page.raw("<section id=\"traces\">\n<h2>Traces</h2>\n")
        // The first trace nobody expected is open; the rest are one click away.
        let firstUnexpected = entries.first { !$0.trial.expected }?.anchor
        for entry in entries {
            let trace = entry.trace
            page.raw("<details class=\"trace\" id=\"\(entry.anchor)\"\(entry.anchor == firstUnexpected ? " open" : "")><summary>\(page.trialAnchors.markers(at: entry.anchor))\(e(entry.trial.key.description)): \(e(TraceText.headline(trace)))\(entry.reason.map { " — <span class=\"reason\">\(e($0))</span>" } ?? "")</summary>\n")
            if let note = trace.sourceLocations?.note { page.raw("<p class=\"note\">\(e(note))</p>\n") }
            page.raw("<ol class=\"frames\">")
            for part in TraceLayout(trace).parts {
                switch part {
                case .frame(let index, let frame, let isEntry):
                    HTMLReport.frameItem(frame, index: index, entry: isEntry, into: &page)
                case .skipped(_, let count):
                    page.raw("<li class=\"gap\">\(e(TraceText.skippedMarker(count)))</li>")
                case .cycle(let cycle, let from, let count):
                    page.raw("<li class=\"cycle\"><details><summary>\(e(TraceText.cycleMarker(cycle, from: from, count: count)))</summary><ol class=\"frames period\">")
                    for frame in cycle.frames { HTMLReport.frameItem(frame, index: nil, into: &page) }
                    page.raw("</ol></details></li>")
                }
            }
            page.raw("</ol></details>\n")
        }
        page.raw("</section>\n")
    }
}
