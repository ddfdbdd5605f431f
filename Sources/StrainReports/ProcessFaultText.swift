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

    /// The processes that faulted as a tree under the program (a child under the
    /// faulted process that started it, else under the program), when more than one
    /// process faulted: the program itself and one other, or two others; nil otherwise.
    ///
    ///     process tree (2 processes faulted):
    ///       the program (/bin/bash script.sh): completed
    ///       ├─ pid 4242 (parent 4241, ./faults thread-overflow): stackOverflow(SIGSEGV)
    ///       └─ pid 4250 (parent 4241, ./faults double-free): crashed(SIGABRT)
    package static func tree(_ trial: TrialRecord) -> [String]? {
        let faults = trial.processFaults ?? []
        let programFaulted = trial.trace != nil
        let count = faults.count + (programFaulted ? 1 : 0)
        guard count >= 2 else { return nil }
        let values = Dictionary(trial.key.parameters.map { ($0.name, $0.value) }, uniquingKeysWith: { first, _ in first })
        var command = [values["program"], values["arguments"]].compactMap { $0 }.filter { !$0.isEmpty }.joined(separator: " ")
        if command.count > 80 { command = String(command.prefix(79)) + "…" }
        var lines = ["process tree (\(count) processes faulted):", "  the program\(command.isEmpty ? "" : " (\(command))"): \(trial.outcome)"]
        let pids = Set(faults.map(\.pid))
        func children(of parent: Int32?) -> [ProcessFault] {
            faults.filter { fault in
                guard let parent else { return fault.parentPid.map { !pids.contains($0) } ?? true }
                return fault.parentPid == parent
            }.sorted { $0.pid < $1.pid }
        }
        func add(_ parent: Int32?, indent: String) {
            let level = children(of: parent)
            for (index, fault) in level.enumerated() {
                let last = index == level.count - 1
                lines.append("  " + indent + (last ? "└─ " : "├─ ") + headline(fault))
                add(fault.pid, indent: indent + (last ? "   " : "│  "))
            }
        }
        add(nil, indent: "")
        return lines
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
            if let tree = tree(trial) { lines += tree.map { "  \(trial.key): " + $0 } }
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
            if let tree = tree(trial) {
                out += "\(MarkdownReport.escape(trial.key.description)):\n\n```\n" + tree.map(MarkdownReport.code).joined(separator: "\n") + "\n```\n\n"
            }
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
            if let tree = tree(trial) { page.raw("<pre class=\"process-tree\">\(e(trial.key.description + ": " + tree.joined(separator: "\n")))</pre>\n") }
            for fault in trial.processFaults ?? [] {
                page.raw("<details class=\"trace\" open><summary>\(e(trial.key.description)): \(e(headline(fault)))</summary>\n")
                for line in details(fault) { page.raw("<p>\(e(line))</p>\n") }
                page.raw("<pre>\(e(TraceText.lines(fault.trace).joined(separator: "\n")))</pre></details>\n")
            }
        }
        page.raw("</section>\n")
    }
}
