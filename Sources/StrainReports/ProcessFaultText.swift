import Foundation
import StrainRecords
import StrainText

/// The faults of a program's other processes (a forked child under `strain exec`),
/// each under its pid, parent and command line.
package enum ProcessFaultText {
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
}

/// The faults of a program's other processes, by trial: the process tree where more
/// than one process faulted, then each fault with its headline, details and trace lines.
package struct ProcessFaultSection: TextSection, PageSection {
    package struct Entry: Sendable {
        /// `pid 4242 (parent 4241, ./faults fork-child-fault): crashed(SIGSEGV)`.
        package var headline: String
        /// The trace's headline, the last words, the frame to point at.
        package var details: [String]
        package var traceLines: [String]
    }

    /// One trial's faults in other processes.
    package struct Group: Sendable {
        package var key: TrialKey
        /// ``ProcessFaultText/tree(_:)``'s lines, when more than one process faulted.
        package var tree: [String]?
        package var entries: [Entry]
    }

    package var groups: [Group]

    init(_ run: RunRecord) {
        groups = run.trials.filter { !($0.processFaults ?? []).isEmpty }.map { trial in
            Group(key: trial.key, tree: ProcessFaultText.tree(trial), entries: (trial.processFaults ?? []).map { fault in
                Entry(headline: ProcessFaultText.headline(fault), details: ProcessFaultText.details(fault), traceLines: TraceText.lines(fault.trace))
            })
        }
    }

    package func terminalLines(_ style: TerminalStyle) -> [String] {
        guard !groups.isEmpty else { return [] }
        return style.heading("Faults in other processes") + groups.flatMap { group in
            (group.tree ?? []).map { "  \(group.key): " + $0 }
                + group.entries.flatMap { ["  \(group.key): \($0.headline)"] + $0.details.map { "    " + $0 } }
        }
    }

    package func markdown() -> String {
        guard !groups.isEmpty else { return "" }
        var out = "## Faults in other processes\n\n"
        for group in groups {
            if let tree = group.tree {
                out += "\(Markdown.escape(group.key.description)):\n\n```\n" + tree.map(Markdown.code).joined(separator: "\n") + "\n```\n\n"
            }
            for entry in group.entries {
                out += "<details><summary>\(Markdown.escapeHTML(group.key.description)): \(Markdown.escapeHTML(entry.headline))</summary>\n\n"
                for line in entry.details { out += "- \(Markdown.escape(line))\n" }
                out += "\n```\n" + entry.traceLines.map(Markdown.code).joined(separator: "\n") + "\n```\n\n</details>\n\n"
            }
        }
        return out
    }

    package func html(into page: inout HTMLReport.Page) {
        guard !groups.isEmpty else { return }
        let e = HTMLText.escape
        page.raw("<section id=\"process-faults\">\n<h2>Faults in other processes</h2>\n")
        for group in groups {
            if let tree = group.tree { page.raw("<pre class=\"process-tree\">\(e(group.key.description + ": " + tree.joined(separator: "\n")))</pre>\n") }
            for entry in group.entries {
                page.raw("<details class=\"trace\" open><summary>\(e(group.key.description)): \(e(entry.headline))</summary>\n")
                for line in entry.details { page.raw("<p>\(e(line))</p>\n") }
                page.raw("<pre>\(e(entry.traceLines.joined(separator: "\n")))</pre></details>\n")
            }
        }
        page.raw("</section>\n")
    }
}
