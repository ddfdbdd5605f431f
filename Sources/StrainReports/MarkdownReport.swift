import Foundation
import StrainRecords
import StrainText

/// `summary.md`: the comparison tables, the stack verdicts and the traces,
/// fit for a pull-request comment.
package enum MarkdownReport {
    /// The most characters summary.md holds: a GitHub pull-request comment takes
    /// 65,536, and the gate's Markdown may sit beside it in a step summary.
    package static let characterLimit = 65_000

    /// summary.md, cut to ``characterLimit`` where it is longer: the head and "What
    /// failed" always stay; whole sections that do not fit are left out and named.
    package static func render(_ run: RunRecord) -> String { render(RunReport(run)) }

    /// summary.md of the model, cut to ``characterLimit``.
    package static func render(_ report: RunReport) -> String { render(fromText: full(report)) }

    /// `text` within `limit` characters: its sections (`## ` headings) kept in order
    /// while they fit; a section of folded entries (a stall's dump, a trace) that does
    /// not fit keeps the entries that do; the rest is left out. A closing note lists
    /// both and points to report.html.
    static func capped(_ text: String, limit: Int) -> String {
        guard text.count > limit else { return text }
        var sections = text.components(separatedBy: "\n## ")
        var out = sections.removeFirst()
        if sections.first?.hasPrefix("What failed\n") == true { out += "\n## " + sections.removeFirst() }
        let reserve = 1_500
        var leftOut: [String] = []
        var cutShort: [String] = []
        for section in sections {
            let piece = "\n## " + section
            let name = "“\(section.prefix { $0 != "\n" }.prefix(80))”"
            if out.count + piece.count <= limit - reserve {
                out += piece
            } else if let folded = foldedEntries(piece, room: limit - reserve - out.count) {
                out += folded.text
                cutShort.append("\(name): \(folded.kept) of \(folded.total) kept")
            } else {
                leftOut.append(name)
            }
        }
        if out.count > limit - reserve { out = String(out.prefix(limit - reserve)) + "\n" }
        var said: [String] = []
        if !leftOut.isEmpty {
            var names = leftOut.prefix(8).joined(separator: ", ")
            if leftOut.count > 8 { names += " and \(leftOut.count - 8) more" }
            said.append("\(leftOut.count) section\(leftOut.count == 1 ? "" : "s") left out (\(names))")
        }
        if !cutShort.isEmpty { said.append("\(cutShort.count) cut short (\(cutShort.joined(separator: ", ")))") }
        return out + "\n---\n\n_Cut to fit a pull-request comment (\(Format.count(Double(limit))) characters): \(said.joined(separator: "; ")). The whole report is report.html, and every number is in run.json._\n"
    }

    /// A section of folded entries (`<details>` blocks, none inside another) cut to
    /// `room` characters: its head and the entries that fit whole, then a line saying
    /// how many more report.html has. Nil when it has no such entries or none fits.
    static func foldedEntries(_ section: String, room: Int) -> (kept: Int, total: Int, text: String)? {
        let parts = section.components(separatedBy: "<details>")
        let entries = parts.dropFirst().map { "<details>" + $0 }
        guard !entries.isEmpty, entries.allSatisfy({ $0.components(separatedBy: "</details>").count == 2 }) else { return nil }
        var text = parts[0]
        var kept = 0
        for entry in entries {
            guard text.count + entry.count + 100 <= room else { break }
            text += entry
            kept += 1
        }
        guard kept > 0 else { return nil }
        return (kept, entries.count, text + "_… and \(entries.count - kept) more in report.html._\n\n")
    }

    /// Markdown text laid out as summary.md is, cut to ``characterLimit`` by the same rule.
    package static func render(fromText text: String) -> String { capped(text, limit: characterLimit) }

    /// summary.md uncut.
    package static func full(_ run: RunRecord) -> String { full(RunReport(run)) }

    /// The model laid out as Markdown: the head, then every section in order.
    package static func full(_ report: RunReport) -> String {
        let head = report.head
        var out = "# Strain run: \(escape(head.suiteName))\n\n"
        if let description = head.description {
            // Code spans stay code; the rest is escaped as prose.
            out += description.map { span in
                span.code ? "`" + span.text.map { $0.isNewline || $0.asciiValue.map { $0 < 32 } == true ? " " : String($0) }.joined() + "`" : escape(span.text)
            }.joined() + "\n\n"
        }
        out += "\(counted(head.trialCount, "trial")), \(head.unexpectedCount == 0 ? "every outcome expected" : "**\(head.unexpectedCount) unexpected\(head.harnessErrorNote)**")\(head.interruption.map { " **\(escape($0.trimmingCharacters(in: .whitespaces)))**" } ?? "")."
        out += " Suite \(escape(head.suitePath)), started \(escape(head.startedAt)).\n\n"
        // The answer first: what failed, a line per key, then why and what to do, before any table.
        return out + report.markdownSections.map { $0.markdown() }.joined()
    }

    /// A line inside a fenced code block: its text is literal there, but a run
    /// of backticks would close the fence early.
    static func code(_ line: String) -> String {
        line.replacingOccurrences(of: "```", with: "`\u{200B}``")
    }

    /// Escapes what would break a GitHub-flavoured table cell or start markup:
    /// `|`, and `_` and `*`, which would turn `perform(_:) … (_:)` italic.
    static func escape(_ text: String) -> String {
        escapeHTML(text).replacingOccurrences(of: "|", with: "\\|").replacingOccurrences(of: "_", with: "\\_").replacingOccurrences(of: "*", with: "\\*")
    }

    /// HTML's special characters escaped, and line breaks and other control
    /// characters flattened: a line ending inside a table row or a `<summary>`
    /// would end it early.
    static func escapeHTML(_ text: String) -> String {
        MarkupText.escape(text, extra: ["`": "&#96;"], lineBreaks: " ", control: " ")
    }
}
