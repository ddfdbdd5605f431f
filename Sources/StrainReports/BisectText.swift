import Foundation
import StrainRecords
import StrainText

/// `strain bisect`'s answers as text: one headline per search, its sentence, the
/// slope, the probes' count and wall time. Shared by the terminal, Markdown and HTML.
package enum BisectText {
    /// `cyclic-graph[operation=unarchive, shape=chain, size=2000]: needs …`: the subject
    /// written as a trial key writes it, its parameters in `order` (the scenario's, from
    /// a probe's key; any other after them by name).
    package static func headline(_ search: BisectSearch, order: [String] = []) -> String {
        let rank = Dictionary(order.enumerated().map { ($1, $0) }, uniquingKeysWith: { first, _ in first })
        let parameters = search.parameters.sorted { (rank[$0.key] ?? .max, $0.key) < (rank[$1.key] ?? .max, $1.key) }
            .map { "\($0.key)=\($0.value)" }.joined(separator: ", ")
        let subject = parameters.isEmpty ? search.scenario : "\(search.scenario)[\(parameters)]"
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

    /// `About 668 B of stack per unit of size (…). Predicted size that completes — …`.
    package static func slopeSentence(_ slope: StackSlope) -> String {
        let count = { (value: Int) in Format.count(Double(value)) }
        let fits = slope.capacities.map { capacity in
            "\(capacity.name): \(capacity.largestValue.map { "up to ~\(count($0))" } ?? "not even 1")"
        }.joined(separator: "; ")
        let points = slope.points.map { "\(slope.parameter)=\(count($0.value)) on \(ByteSize.prose($0.stackBytes, exact: true))" }.joined(separator: " and ")
        return "About \(ByteSize.prose(Int(slope.bytesPerUnit.rounded()))) of stack per unit of \(slope.parameter) (from \(points); fixed cost \(ByteSize.prose(max(0, Int(slope.interceptBytes))))). Predicted largest \(slope.parameter) that completes — \(fits)."
    }

    /// `14 probes in 0.61 s`.
    package static func cost(_ search: BisectSearch) -> String {
        "\(search.probes.count) probes in \(Format.duration(search.wallSeconds))"
    }

    /// The `## Bisect` section of summary.md.
    static func markdown(_ section: BisectSection, orders: [[String]] = []) -> String {
        var out = "## Bisect\n\n"
        for (index, search) in section.searches.enumerated() {
            out += "- **\(MarkdownReport.escape(headline(search, order: index < orders.count ? orders[index] : [])))** (\(cost(search))): \(MarkdownReport.escape(search.explanation))\n"
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
    /// Each search's parameter names in the order its probes' keys give them.
    package var orders: [[String]] = []

    /// The run's answers, each search with its probes read from the run's trials.
    package init(_ run: RunRecord) {
        section = run.bisect
        let byIndex = Dictionary(run.trials.map { ($0.index, $0) }, uniquingKeysWith: { first, _ in first })
        orders = (run.bisect?.searches ?? []).map { search in
            search.probes.lazy.compactMap { byIndex[$0] }.first.map { $0.key.parameters.map(\.name) } ?? []
        }
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
        for (index, search) in section.searches.enumerated() {
            lines.append("  " + style.paint(BisectText.headline(search, order: order(index)), search.verdict == .boundary || search.verdict == .alwaysCompletes ? 32 : 33) + "  (\(BisectText.cost(search)))")
            lines.append("    \(search.explanation)")
        }
        if let slope = section.slope {
            lines.append("  " + BisectText.slopeSentence(slope))
        }
        lines.append("  Whole bisect: \(section.searches.map(\.probes.count).reduce(0, +)) probes in \(Format.duration(section.wallSeconds)).")
        return lines
    }

    package func markdown() -> String { section.map { BisectText.markdown($0, orders: orders) } ?? "" }

    private func order(_ index: Int) -> [String] { index < orders.count ? orders[index] : [] }

    package func html(into page: inout HTMLReport.Page) {
        guard let section else { return }
        let e = HTMLText.escape
        page.raw("<section id=\"bisect\">\n<h2>Bisect</h2>\n<ul>")
        for (index, search) in section.searches.enumerated() {
            page.raw("<li><b>\(e(BisectText.headline(search, order: order(index))))</b> (\(e(BisectText.cost(search)))): \(e(search.explanation))")
            if index < probes.count { page.raw("<div class=\"chart-scroll\">\(Self.picture(probes[index], search: search))</div>") }
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

    /// A search's probes in order of value, evenly spaced, each labelled with its value:
    /// a bisect doubles, then halves the gap, so its last probes lie a unit apart and
    /// overlap on any scale of values (they drew as one blot at the boundary). A dot per
    /// probed value, green where every repetition completed, red where any failed; a
    /// dashed line between the largest that completed and the next; a legend that says so.
    static func picture(_ probes: [Probe], search: BisectSearch) -> String {
        var byValue: [Int: [Probe]] = [:]
        for probe in probes { byValue[probe.value, default: []].append(probe) }
        let values = byValue.keys.sorted()
        guard let low = values.first, let high = values.last else { return "" }
        let label: (Int) -> String = { search.question == .stack ? ByteSize.exact($0) : Format.count(Double($0)) }
        let f = { (value: Double) in String(format: "%.1f", value) }
        // A slot as wide as the widest label (``ChartAxis/textWidth(_:)``), or a fraction
        // of one when the labels take turns on two to four rows, as few rows as keep the
        // strip within the charts' 440 units: wider, it shrank on a phone until its text
        // could not be read.
        let widest: Double = values.map { ChartAxis.textWidth(label($0)) }.max() ?? 6
        let margin: Double = widest / 2 + 6
        let room: Double = SVGChart.width - 2 * margin
        let gaps = Double(values.count - 1)
        let slotOn = { (rows: Int) -> Double in max(12.0, (widest + 10.0) / Double(rows)) }
        let rows: Int = (1...4).first { (count: Int) -> Bool in gaps * slotOn(count) <= room } ?? 4
        let slot: Double = slotOn(rows)
        let width: Double = max(SVGChart.width, 2 * margin + slot * gaps)
        let x = { (index: Int) -> Double in values.count == 1 ? width / 2 : margin + slot * Double(index) }
        let legendY: Double = 32.0 + Double(rows) * 13.0 + 8.0
        let name = search.question == .stack ? "stack" : (search.parameter ?? "value")
        let height: Double = legendY + 20
        var svg = "<svg class=\"probes\" width=\"\(Int(width))\" height=\"\(Int(height))\" viewBox=\"0 0 \(Int(width)) \(Int(height))\" role=\"img\" aria-label=\"\(values.count) probed values of \(HTMLText.escape(name)) from \(HTMLText.escape(label(low))) to \(HTMLText.escape(label(high)))\">"
        svg += "<line x1=\"\(f(x(0)))\" y1=\"12\" x2=\"\(f(x(values.count - 1)))\" y2=\"12\" class=\"axis\"/>"
        if let passing = search.passing, let last = values.lastIndex(where: { $0 <= passing }) {
            let answerX: Double = last == values.count - 1 ? x(last) + slot / 2 : (x(last) + x(last + 1)) / 2
            svg += "<line x1=\"\(f(answerX))\" y1=\"2\" x2=\"\(f(answerX))\" y2=\"22\" class=\"probe-answer\"/>"
        }
        for (index, value) in values.enumerated() {
            let tries = byValue[value] ?? []
            let completed = tries.allSatisfy(\.completed)
            let outcomes = Dictionary(grouping: tries, by: \.outcome).map { "\($0.key) ×\($0.value.count)" }.sorted().joined(separator: ", ")
            svg += "<circle class=\"\(completed ? "probe-ok" : "probe-failed")\" cx=\"\(f(x(index)))\" cy=\"12\" r=\"4\"><title>\(HTMLText.escape("\(name)=\(label(value)): \(outcomes)"))</title></circle>"
            let y = 32 + (index % rows) * 13
            svg += "<text x=\"\(f(x(index)))\" y=\"\(y)\" class=\"tick probe-value\" text-anchor=\"middle\">\(HTMLText.escape(label(value)))</text>"
        }
        // The legend, drawn so that a screenshot or a print keeps it, on two lines that fit the width.
        let key = search.question == .stack ? "stack" : name
        svg += "<circle class=\"probe-ok legend-dot\" cx=\"6\" cy=\"\(f(legendY - 4))\" r=\"4\"/><text x=\"14\" y=\"\(f(legendY))\" class=\"tick\">completed</text>"
        svg += "<circle class=\"probe-failed legend-dot\" cx=\"86\" cy=\"\(f(legendY - 4))\" r=\"4\"/><text x=\"94\" y=\"\(f(legendY))\" class=\"tick\">failed</text>"
        svg += "<line x1=\"142\" y1=\"\(f(legendY - 9))\" x2=\"142\" y2=\"\(f(legendY + 1))\" class=\"probe-answer\"/><text x=\"148\" y=\"\(f(legendY))\" class=\"tick\">the answer</text>"
        svg += "<text x=\"0\" y=\"\(f(legendY + 15))\" class=\"tick\">each \(HTMLText.escape(key)) probed, by value, evenly spaced</text>"
        return svg + "</svg>"
    }
}

extension TerminalReport {
    /// `  probe 7  cyclic-graph[operation=unarchive, shape=chain, size=2000] thread(1300KiB) linux #1  completed  31.2 ms`.
    package func probeLine(_ trial: TrialRecord, index: Int) -> String {
        let outcome = trial.outcome.kind == .completed ? paint(trial.outcome.description, 32) : paint(trial.outcome.description, 33)
        // The work's wall time, as `run`'s trial lines and the tables show it (the whole trial's where the work has none).
        let time = Format.duration(trial.metrics.wallSeconds ?? trial.metrics.trialSeconds)
        return "  probe \(index)  \(trial.key.configuration) \(trial.strategy) \(trial.profile.rawValue) #\(trial.repetition)  \(outcome)  \(time)"
    }

    /// The bisect's answers, for the end of `strain bisect`.
    package func renderBisect(_ run: RunRecord) -> String {
        BisectReportSection(run).terminalLines(style).dropFirst().joined(separator: "\n")
    }
}
