import Foundation
import StrainRecords

/// The faults of a program's other processes (a forked child under `strain exec`),
/// each under its pid, parent and command line, for every format.
package enum ProcessFaultText {
    /// Trials with faults in other processes, in run order.
    static func trials(_ run: RunRecord) -> [TrialRecord] {
        run.trials.filter { !($0.processFaults ?? []).isEmpty }
    }

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

    static func terminalLines(_ run: RunRecord, paint: (String, Int) -> String) -> [String] {
        let trials = trials(run)
        guard !trials.isEmpty else { return [] }
        var lines = ["", paint("Faults in other processes", 1)]
        for trial in trials {
            for fault in trial.processFaults ?? [] {
                lines.append("  \(trial.key): \(headline(fault))")
                lines += details(fault).map { "    " + $0 }
            }
        }
        return lines
    }

    static func markdown(_ run: RunRecord) -> String {
        let trials = trials(run)
        guard !trials.isEmpty else { return "" }
        var out = "## Faults in other processes\n\n"
        for trial in trials {
            for fault in trial.processFaults ?? [] {
                out += "<details><summary>\(MarkdownReport.escapeHTML(trial.key.description)): \(MarkdownReport.escapeHTML(headline(fault)))</summary>\n\n"
                for line in details(fault) { out += "- \(MarkdownReport.escape(line))\n" }
                out += "\n```\n" + TraceText.lines(fault.trace).map(MarkdownReport.code).joined(separator: "\n") + "\n```\n\n</details>\n\n"
            }
        }
        return out
    }

    static func html(_ run: RunRecord, into page: inout HTMLReport.Page) {
        let trials = trials(run)
        guard !trials.isEmpty else { return }
        let e = HTMLText.escape
        page.raw("<section id=\"process-faults\">\n<h2>Faults in other processes</h2>\n")
        for trial in trials {
            for fault in trial.processFaults ?? [] {
                page.raw("<details class=\"trace\" open><summary>\(e(trial.key.description)): \(e(headline(fault)))</summary>\n")
                for line in details(fault) { page.raw("<p>\(e(line))</p>\n") }
                page.raw("<pre>\(e(TraceText.lines(fault.trace).joined(separator: "\n")))</pre></details>\n")
            }
        }
        page.raw("</section>\n")
    }
}
