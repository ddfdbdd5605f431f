import Foundation
import StrainRecords

/// The faults of a program's other processes (a forked child under `strain exec`),
/// each under its pid, parent and command line.
package enum ProcessFaultText {
    /// `pid 4242 (parent 4241, ./faults fork-child-fault): crashed(SIGSEGV)`.
    package static func headline(_ fault: ProcessFault) -> String {
        let parent = fault.parentPid.map { "parent \($0), " } ?? ""
        return "pid \(fault.pid) (\(parent)\(fault.commandLine.joined(separator: " "))): \(fault.outcome)"
    }

    /// The frame to point at and the last words, one line each.
    static func details(_ fault: ProcessFault) -> [String] {
        var lines = ["\(TraceText.headline(fault.trace))"]
        if let words = fault.lastWords { lines.append("reason: \(words)") }
        if let point = TraceText.pointOfFailure(fault.trace) { lines.append("at: \(point.displayName)") }
        return lines
    }
}

/// The faults of a program's other processes, each with its trial, headline,
/// details and trace lines.
package struct ProcessFaultSection: TextSection, PageSection {
    package struct Entry: Sendable {
        package var key: TrialKey
        /// `pid 4242 (parent 4241, ./faults fork-child-fault): crashed(SIGSEGV)`.
        package var headline: String
        /// The trace's headline, the last words, the frame to point at.
        package var details: [String]
        package var traceLines: [String]
    }

    package var entries: [Entry]

    init(_ run: RunRecord) {
        entries = run.trials.flatMap { trial in
            (trial.processFaults ?? []).map { fault in
                Entry(key: trial.key, headline: ProcessFaultText.headline(fault), details: ProcessFaultText.details(fault), traceLines: TraceText.lines(fault.trace))
            }
        }
    }

    package func terminalLines(_ style: TerminalStyle) -> [String] {
        guard !entries.isEmpty else { return [] }
        return style.heading("Faults in other processes") + entries.flatMap { ["  \($0.key): \($0.headline)"] + $0.details.map { "    " + $0 } }
    }

    package func markdown() -> String {
        guard !entries.isEmpty else { return "" }
        var out = "## Faults in other processes\n\n"
        for entry in entries {
            out += "<details><summary>\(Markdown.escapeHTML(entry.key.description)): \(Markdown.escapeHTML(entry.headline))</summary>\n\n"
            for line in entry.details { out += "- \(Markdown.escape(line))\n" }
            out += "\n```\n" + entry.traceLines.map(Markdown.code).joined(separator: "\n") + "\n```\n\n</details>\n\n"
        }
        return out
    }

    package func html(into page: inout HTMLReport.Page) {
        guard !entries.isEmpty else { return }
        let e = HTMLText.escape
        page.raw("<section id=\"process-faults\">\n<h2>Faults in other processes</h2>\n")
        for entry in entries {
            page.raw("<details class=\"trace\" open><summary>\(e(entry.key.description)): \(e(entry.headline))</summary>\n")
            for line in entry.details { page.raw("<p>\(e(line))</p>\n") }
            page.raw("<pre>\(e(entry.traceLines.joined(separator: "\n")))</pre></details>\n")
        }
        page.raw("</section>\n")
    }
}
