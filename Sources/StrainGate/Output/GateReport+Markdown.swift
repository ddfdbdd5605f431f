import Foundation
import StrainRecords
import StrainText

extension GateReport {
    /// The marker a bot finds its own pull-request comment by.
    package static let commentMarker = "<!-- strain-gate -->"
    /// GitHub's limit for a comment body.
    package static let commentLimit = 65_536

    /// A Markdown comparison for a pull-request comment or a job summary, under
    /// `limit` UTF-8 bytes (GitHub's limits count bytes; every row has `→` and `×`).
    /// Paths are shown relative to `directory` (`commentPath`).
    package func renderMarkdown(limit: Int = GateReport.commentLimit, directory: String = FileManager.default.currentDirectoryPath) -> String {
        let path = { (file: String) in Self.commentPath(file, relativeTo: directory) }
        var head = "\(Self.commentMarker)\n### Strain gate: \(Self.escape(suite)) — \(Self.escape(conclusion))\n\n"
        head += mode == .interleaved
            ? Self.escape(interleavedSentence) + "\n"
            : Self.escape(crossRunSentence) + "\n"
        if let sides = sidesSentence(code: { "`\($0.replacingOccurrences(of: "`", with: "'"))`" }, path: path) { head += sides + "\n" }
        for warning in warnings ?? [] { head += "\n> [!WARNING]\n> \(Self.escape(warning))\n" }
        if !fingerprint.isEmpty {
            head += "\nMachines differ: " + fingerprint.map { "\($0.field) \(Self.escape($0.baseline)) → \(Self.escape($0.candidate))\($0.hard ? " (hard)" : "")" }.joined(separator: "; ") + "\n"
        }
        var body = ""
        let failing = self.failing
        if !failing.isEmpty {
            body += "\n| verdict | trial | what | median change | ratio, Hodges–Lehmann (95% interval), or why none | q | n | δ, floor (from) | outcomes baseline → candidate |\n|---|---|---|---:|---|---:|---|---|---|\n"
            for row in failing { body += Self.rows(row, failingOnly: true).joined() }
            body += Self.evidenceList(failing)
        }
        var rest = ""
        let others = shownRows.filter { !$0.verdict.fails }
        if !others.isEmpty {
            let lines = others.flatMap { Self.rows($0, failingOnly: false) }
            let trials = others.count == 1 ? "1 trial" : "\(others.count) trials"
            rest += "\n<details><summary>\(lines.count) other line\(lines.count == 1 ? "" : "s") of \(trials) (\(Self.kinds(of: others)))</summary>\n\n"
            rest += "| verdict | trial | what | median change | ratio, Hodges–Lehmann (95% interval), or why none | q | n | δ, floor (from) | outcomes baseline → candidate |\n|---|---|---|---:|---|---:|---|---|---|\n"
            rest += lines.joined()
            rest += "\n</details>\n"
        }
        var tail = "\n\(Self.escape(tally))" + (repetitionsSentence.map { " " + $0 } ?? "")
            + " Benjamini-Hochberg q = \(q). A change is worked from the unrounded medians (gate.json has them); "
            + "a ratio is the Hodges–Lehmann estimate, the median of every candidate-to-baseline pair's ratio, so it can differ from the median change.\n"
        if let runReports, !runReports.isEmpty {
            tail += "Each side's run as a report, beside this file: \(runReports.map { "`\($0)`" }.joined(separator: ", ")).\n"
        }
        if let runFiles, !runFiles.isEmpty {
            let one = runFiles.count == 1
            tail += "\(one ? "The candidate's run" : "Each side's run") (traces, dumps): \(runFiles.map { "`\(path($0))`" }.joined(separator: ", ")); `strain report <file>` renders \(one ? "it" : "either"); gate.html shows every repetition's value of each metric that did not stay unchanged.\n"
        }
        var text = head + body + rest + tail
        if text.utf8.count > limit {
            let note = "\n_Cut to fit: see gate.json or gate.html for every row._\n"
            let budget = max(0, limit - note.utf8.count - tail.utf8.count)
            // Whole lines only, so a table row or a character is never cut in half.
            var kept = ""
            for line in (head + body).split(separator: "\n", omittingEmptySubsequences: false) {
                guard kept.utf8.count + line.utf8.count + 1 <= budget else { break }
                kept += line + "\n"
            }
            text = kept + note + tail
        }
        return text
    }

    /// The verdicts `rows` (none failing) hold, their metrics' too, in the order a reader
    /// meets them: `improved, inconclusive`. A heading listed all four kinds whatever
    /// occurred (re-trial 35m).
    package static func kinds(of rows: [RowComparison]) -> String {
        let present = Set(rows.map(\.verdict) + rows.flatMap { $0.metrics.map(\.verdict) })
        let changedAsExpected = rows.contains(where: \.outcomesChangedAsExpected) ? ["outcomes changed as the suite expects"] : []
        return ([GateVerdict.improved, .inconclusive, .new, .fixed].filter(present.contains).map(\.label) + changedAsExpected).joined(separator: ", ")
    }

    /// `path` as a pull-request comment shows it: relative to `directory` (where the gate
    /// ran: the runner's workspace) when it lies inside, else its folder's name and its
    /// own (`strain-base-bin/order-strain`). A runner's absolute folders
    /// (`/__w/_temp/strain-base-bin/…`) tell a reviewer nothing and differ between runs.
    static func commentPath(_ path: String, relativeTo directory: String) -> String {
        guard path.hasPrefix("/") else { return path }
        let root = directory.hasSuffix("/") ? directory : directory + "/"
        if path.hasPrefix(root), path.count > root.count { return String(path.dropFirst(root.count)) }
        return path.split(separator: "/").suffix(2).joined(separator: "/")
    }

    /// Evidence lines the comment shows; gate.html links every one.
    static let evidenceShown = 10
    /// Characters of a row's evidence the comment quotes.
    package static let evidenceLength = 300

    /// Under the failing table, a line per row whose outcome changed: the candidate
    /// trial, its evidence (a comment cannot follow a relative link, so the line says
    /// it), and the link into the candidate's report for a reader of the files.
    static func evidenceList(_ failing: [RowComparison]) -> String {
        let rows = failing.filter { $0.evidence != nil }
        guard !rows.isEmpty else { return "" }
        var out = "\nEvidence, from the candidate's trials:\n\n"
        for row in rows.prefix(evidenceShown) {
            guard let evidence = row.evidence else { continue }
            // Advice ends with its fix: cut at 300 characters, a timeout's lost all of it (re-trial 35p, F2).
            let advice = evidence.advice.map { " What to do: \(escape(capped($0, limit: 2 * evidenceLength)))" } ?? ""
            out += "- \(escape(evidence.trial.description)): \(escape(capped(evidence.line))) ([report](\(evidence.link)))\(advice)\n"
        }
        if rows.count > evidenceShown { out += "- and \(rows.count - evidenceShown) more: gate.html links each\n" }
        return out
    }

    /// `text` in at most `limit` characters (``evidenceLength`` unless given), cut after a
    /// whole word (`sle…` was half of one), with `…` where it was cut.
    package static func capped(_ text: String, limit: Int = evidenceLength) -> String {
        guard text.count > limit else { return text }
        let head = text.prefix(limit - 1)
        let cut = head.lastIndex(of: " ").map { head[..<$0] } ?? head
        return String(cut.hasSuffix(",") || cut.hasSuffix(";") ? cut.dropLast() : cut) + "…"
    }

    static func rows(_ row: RowComparison, failingOnly: Bool) -> [String] {
        let outcomes = "\(escape(histogramText(row.baselineOutcomes))) → \(escape(histogramText(row.candidateOutcomes)))"
        var lines: [String] = []
        if [.outcomeChanged, .missing, .harnessError, .new, .fixed].contains(row.verdict) || row.outcomesChangedAsExpected {
            lines.append("| **\(row.verdict.label)** | \(escape(row.key.description)) | outcome | | \(escape(row.outcomeReason ?? "")) | | | | \(outcomes) |\n")
        }
        for metric in row.metrics where failingOnly ? metric.verdict.fails : (metric.verdict != .unchanged && metric.verdict != .notGated) {
            let effect: String
            if let ratio = metric.ratio {
                effect = String(format: "×%.3f", ratio) + ((metric.ratioLow).map { low in String(format: " (%.3f–%.3f)", low, metric.ratioHigh ?? low) } ?? "")
                    + (metric.verdict == .inconclusive ? "; " + escape(metric.reason) : "")
            } else {
                effect = escape(metric.reason)
            }
            let change = metric.changePercent.map { String(format: "%+.1f%%", $0) } ?? ""
            // An unjudged q is `–`, as gate.html writes it, not an empty cell.
            let q = metric.qValue.map { String(format: "%.3g", $0) } ?? "–"
            lines.append("| \(metric.verdict.fails ? "**\(metric.verdict.label)**" : metric.verdict.label) | \(escape(row.key.description)) | \(escape(MetricDescriptor.displayName(of: metric.metric))) | \(change) | \(effect) | \(q) | \(metric.baselineCount)/\(metric.candidateCount) | \(Gate.percent(metric.delta)), \(escape(Gate.format(metric.floor, metric.unit))) (\(escape(metric.thresholdSource))) | \(outcomes) |\n")
        }
        return lines
    }

    /// Markdown-safe text for a table cell: on one line, by scalars (`"\r\n"` is one
    /// Character, which a match on `"\n"` and `"\r"` let through, row and all).
    static func escape(_ text: String) -> String {
        var out = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "|": out += "\\|"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "&": out += "&amp;"
            case "_", "*", "`", "[", "]": out += "\\\(scalar)"
            case "\t": out.unicodeScalars.append(scalar)
            // Line breaks and the other controls: a row ends at a line break, and a CI log shows the rest.
            case _ where scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value): out += " "
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }
}
