import Foundation
import StrainRecords
import StrainText

/// `strain bisect`'s answers as text: one headline per search, its sentence, the
/// slope, the probes' count and wall time. Shared by the terminal, Markdown and HTML.
package enum BisectText {
    /// `cyclic-graph (operation=unarchive, shape=chain, size=2000): smallest stack 1.3MiB`.
    package static func headline(_ search: BisectSearch) -> String {
        let parameters = search.parameters.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: ", ")
        let subject = parameters.isEmpty ? search.scenario : "\(search.scenario) (\(parameters))"
        let answer: String
        switch (search.verdict, search.question) {
        case (.boundary, .stack), (.alwaysCompletes, .stack):
            answer = "needs \(ByteSize.exact(search.passing!)) of stack (\(Format.bytes(Double(search.passing!))))"
        case (.boundary, .parameter), (.alwaysCompletes, .parameter):
            answer = "\(search.parameter!) ≤ \(Format.count(Double(search.passing!))) completes on \(search.strategy), \(search.profile)"
        case (.nondeterministic, _):
            answer = "not deterministic"
        case (.unbounded, _):
            answer = "unbounded: no stack is enough"
        case (.neverCompletes, .stack):
            answer = "fails on every stack tried"
        case (.neverCompletes, .parameter):
            answer = "fails even at \(search.parameter!)=\(search.failing.map(String.init) ?? "?") on \(search.strategy), \(search.profile)"
        }
        return "\(subject): \(answer)"
    }

    /// `About 668 bytes of stack per unit of size (…). Predicted size that completes — …`.
    package static func slopeSentence(_ slope: StackSlope) -> String {
        let count = { (value: Int) in Format.count(Double(value)) }
        let fits = slope.capacities.map { capacity in
            "\(capacity.name): \(capacity.largestValue.map { "up to ~\(count($0))" } ?? "not even 1")"
        }.joined(separator: "; ")
        let points = slope.points.map { "\(slope.parameter)=\(count($0.value)) on \(ByteSize.exact($0.stackBytes))" }.joined(separator: " and ")
        return "About \(count(Int(slope.bytesPerUnit.rounded()))) bytes of stack per unit of \(slope.parameter) (from \(points); fixed cost \(ByteSize.format(max(0, Int(slope.interceptBytes))))). Predicted largest \(slope.parameter) that completes — \(fits)."
    }

    /// `14 probes in 0.61 s`.
    package static func cost(_ search: BisectSearch) -> String {
        "\(search.probes.count) probes in \(Format.duration(search.wallSeconds))"
    }

    /// Every line of the section, plain.
    package static func lines(_ section: BisectSection) -> [String] {
        var lines: [String] = []
        for search in section.searches {
            lines.append("\(headline(search))  (\(cost(search)))")
            lines.append("  \(search.explanation)")
        }
        if let slope = section.slope { lines.append(slopeSentence(slope)) }
        if let reason = section.noSlopeReason { lines.append(reason) }
        lines.append("Whole bisect: \(section.searches.map(\.probes.count).reduce(0, +)) probes in \(Format.duration(section.wallSeconds)).")
        return lines
    }

    /// The `## Bisect` section of summary.md.
    static func markdown(_ section: BisectSection) -> String {
        var out = "## Bisect\n\n"
        for search in section.searches {
            out += "- **\(MarkdownReport.escape(headline(search)))** (\(cost(search))): \(MarkdownReport.escape(search.explanation))\n"
        }
        if let slope = section.slope {
            let rows = slope.capacities.map { [MarkdownReport.escape($0.name), $0.largestValue.map { Format.count(Double($0)) } ?? "none"] }
            out += "\n" + TextTable(header: ["stack", "largest \(MarkdownReport.escape(slope.parameter)) predicted"], alignments: [.left, .right], rows: rows).markdown()
            out += "\n\(MarkdownReport.escape(slopeSentence(slope)))\n"
        }
        if let reason = section.noSlopeReason { out += "\n\(MarkdownReport.escape(reason))\n" }
        return out + "\nWhole bisect: \(section.searches.map(\.probes.count).reduce(0, +)) probes in \(Format.duration(section.wallSeconds)).\n\n"
    }
}

/// `strain bisect`'s answers, when the run is a bisect, with every probe's value
/// and how it ended: the page draws each search's probes on the parameter's axis.
package struct BisectReportSection: TextSection, PageSection {
    /// One probe of a search: the value it tried and whether it completed.
    package struct Probe: Sendable, Hashable {
        /// The parameter's value, or the stack's bytes for a stack search.
        package var value: Int
        /// How it ended (`completed`, `stackOverflow`, …).
        package var outcome: String
        package var completed: Bool
    }

    package var section: BisectSection?
    /// Each search's probes, in the order of ``BisectSection/searches``.
    package var probes: [[Probe]] = []

    /// The answers alone, without the probes' values (the terminal's closing lines).
    package init(section: BisectSection?) { self.section = section }

    /// The run's answers, each search with its probes read from the run's trials.
    package init(_ run: RunRecord) {
        section = run.bisect
        let byIndex = Dictionary(run.trials.map { ($0.index, $0) }, uniquingKeysWith: { first, _ in first })
        probes = (run.bisect?.searches ?? []).map { search in
            search.probes.compactMap { byIndex[$0] }.compactMap { trial -> Probe? in
                let value: Int? = switch search.question {
                case .parameter: search.parameter.flatMap { trial.key[parameter: $0] }.flatMap { Int($0) }
                case .stack: trial.key.strategy.chosenStackBytes
                }
                return value.map { Probe(value: $0, outcome: trial.outcome.kind.rawValue, completed: trial.outcome.kind == .completed) }
            }
        }
    }

    package func terminalLines(_ style: TerminalStyle) -> [String] {
        guard let section else { return [] }
        var lines = style.heading("Bisect")
        for search in section.searches {
            lines.append("  " + style.paint(BisectText.headline(search), search.verdict == .boundary || search.verdict == .alwaysCompletes ? 32 : 33) + "  (\(BisectText.cost(search)))")
            lines.append("    \(search.explanation)")
        }
        if let slope = section.slope {
            lines.append("  " + BisectText.slopeSentence(slope))
        }
        lines.append("  Whole bisect: \(section.searches.map(\.probes.count).reduce(0, +)) probes in \(Format.duration(section.wallSeconds)).")
        return lines
    }

    package func markdown() -> String { section.map(BisectText.markdown) ?? "" }

    package func html(into page: inout HTMLReport.Page) {
        guard let section else { return }
        let e = HTMLText.escape
        page.raw("<section id=\"bisect\">\n<h2>Bisect</h2>\n<ul>")
        for (index, search) in section.searches.enumerated() {
            page.raw("<li><b>\(e(BisectText.headline(search)))</b> (\(e(BisectText.cost(search)))): \(e(search.explanation))")
            if index < probes.count { page.raw(Self.picture(probes[index], search: search)) }
            page.raw("</li>")
        }
        page.raw("</ul>\n")
        if let slope = section.slope {
            page.raw("<table><thead><tr><th>stack</th><th>largest \(e(slope.parameter)) predicted</th></tr></thead><tbody>")
            for capacity in slope.capacities {
                page.raw("<tr><td>\(e(capacity.name))</td><td class=\"num\">\(e(capacity.largestValue.map { Format.count(Double($0)) } ?? "none"))</td></tr>")
            }
            page.raw("</tbody></table>\n<p>\(e(BisectText.slopeSentence(slope)))</p>\n")
        }
        if let reason = section.noSlopeReason { page.raw("<p>\(e(reason))</p>\n") }
        page.raw("<p>Whole bisect: \(section.searches.map(\.probes.count).reduce(0, +)) probes in \(e(Format.duration(section.wallSeconds))).</p>\n</section>\n")
    }

    /// A search's probes on one axis, logarithmic (a bisect halves its range, so the
    /// probes crowd at the boundary): a dot per probed value, green where every
    /// repetition completed, red where any failed, the answer's value marked.
    static func picture(_ probes: [Probe], search: BisectSearch) -> String {
        guard let low = probes.map(\.value).min(), let high = probes.map(\.value).max(), low > 0 else { return "" }
        let width = 560.0, margin = 8.0
        let (lo, hi) = (log(Double(low)), log(Double(high)))
        func x(_ value: Int) -> Double { hi > lo ? margin + (log(Double(value)) - lo) / (hi - lo) * (width - 2 * margin) : width / 2 }
        let label: (Int) -> String = { search.question == .stack ? ByteSize.exact($0) : Format.count(Double($0)) }
        var byValue: [Int: [Probe]] = [:]
        for probe in probes { byValue[probe.value, default: []].append(probe) }
        let name = search.question == .stack ? "stack" : (search.parameter ?? "value")
        var svg = "<svg class=\"probes\" viewBox=\"0 0 \(Int(width)) 44\" role=\"img\" aria-label=\"\(probes.count) probes of \(HTMLText.escape(name)) from \(HTMLText.escape(label(low))) to \(HTMLText.escape(label(high)))\">"
        svg += "<line x1=\"\(Int(margin))\" y1=\"18\" x2=\"\(Int(width - margin))\" y2=\"18\" class=\"axis\"/>"
        if let passing = search.passing {
            svg += "<line x1=\"\(String(format: "%.1f", x(passing)))\" y1=\"6\" x2=\"\(String(format: "%.1f", x(passing)))\" y2=\"30\" class=\"probe-answer\"/>"
        }
        for (value, tries) in byValue.sorted(by: { $0.key < $1.key }) {
            let completed = tries.allSatisfy(\.completed)
            let outcomes = Dictionary(grouping: tries, by: \.outcome).map { "\($0.key) ×\($0.value.count)" }.sorted().joined(separator: ", ")
            svg += "<circle class=\"\(completed ? "probe-ok" : "probe-failed")\" cx=\"\(String(format: "%.1f", x(value)))\" cy=\"18\" r=\"4\"><title>\(HTMLText.escape("\(name)=\(label(value)): \(outcomes)"))</title></circle>"
        }
        svg += "<text x=\"\(Int(margin))\" y=\"42\" class=\"tick\">\(HTMLText.escape(label(low)))</text><text x=\"\(Int(width - margin))\" y=\"42\" class=\"tick end\">\(HTMLText.escape(label(high)))</text>"
        return svg + "</svg>"
    }
}

extension TerminalReport {
    /// `  probe 7  cyclic-graph[operation=unarchive, shape=chain, size=2000] thread(1300KiB) linux #1  completed  31.2 ms`.
    package func probeLine(_ trial: TrialRecord, index: Int) -> String {
        let outcome = trial.outcome.kind == .completed ? paint(trial.outcome.description, 32) : paint(trial.outcome.description, 33)
        let time = Format.duration(trial.metrics.trialSeconds)
        return "  probe \(index)  \(trial.key.configuration) \(trial.strategy) \(trial.profile.rawValue) #\(trial.repetition)  \(outcome)  \(time)"
    }

    /// The bisect's answers, for the end of `strain bisect`.
    package func renderBisect(_ run: RunRecord) -> String {
        BisectReportSection(section: run.bisect).terminalLines(style).dropFirst().joined(separator: "\n")
    }
}
