import Foundation
import StrainRecords
import StrainText

/// `report.html`: one self-contained page (inline CSS and SVG, no scripts, no
/// fonts or images from anywhere) that shows a run at a glance: comparison
/// charts per scenario, stack use against the stack each strategy had, thread
/// counts over time, latency curves, outcome histograms, growth with a swept
/// parameter, traces and thread dumps. Every string from the run is escaped.
package enum HTMLReport {
    package static func render(_ run: RunRecord) -> String { render(RunReport(run)) }

    /// The model laid out as one page: the answer, a block per scenario with
    /// its tables and charts, then the page's sections in order.
    package static func render(_ report: RunReport) -> String {
        var page = Page()
        page.trialAnchors = report.trialAnchors
        page.raw("<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n")
        page.raw("<title>Strain run: \(e(report.head.suiteName))</title>\n<style>\(css)</style>\n</head>\n<body>\n")
        let links = report.trialAnchors
        header(report, links: links, into: &page)

        let anchors = Dictionary(uniqueKeysWithValues: report.scenarios.enumerated().map { ($0.element, "scenario-\($0.offset + 1)") })
        let hasVerdicts = !report.verdicts.isEmpty
        page.raw("<nav><ul>")
        let isBisect = report.isBisect
        if isBisect { page.raw("<li><a href=\"#bisect\">bisect</a></li>") }
        for scenario in report.scenarios { page.raw("<li><a href=\"#\(anchors[scenario]!)\">\(e(scenario))</a></li>") }
        if hasVerdicts { page.raw("<li><a href=\"#verdicts\">verdicts</a></li>") }
        if !report.traces.entries.isEmpty { page.raw("<li><a href=\"#traces\">traces</a></li>") }
        if !report.stalls.entries.isEmpty { page.raw("<li><a href=\"#stalls\">stalls</a></li>") }
        page.raw("<li><a href=\"#environment\">environment</a></li></ul></nav>\n")

        // A bisect answers first; its probes' tables fold below it.
        if isBisect {
            report.bisect.html(into: &page)
            page.raw("<details class=\"probes\"><summary>The probes: \(report.outcomes.tables.count) table\(report.outcomes.tables.count == 1 ? "" : "s"), one per probed value</summary>\n")
        }
        for scenario in report.scenarios {
            page.raw("<section class=\"scenario\" id=\"\(anchors[scenario]!)\">\n<h2>\(e(scenario))</h2>\n")
            for table in report.rankings.tables where table.scenario == scenario { guardTable(table, into: &page) }
            let tables = report.outcomes.tables.filter { $0.scenario == scenario }
            for table in tables { groupSection(table, links: links, into: &page) }
            for table in report.metrics.tables where table.scenario == scenario { declaredMetricsTable(table, into: &page) }
            for sweep in report.growth.sweeps where sweep.scenario == scenario { sweepSection(sweep, into: &page) }
            timelines(report.timelines.timelines(of: scenario), into: &page)
            page.raw("</section>\n")
        }
        if isBisect { page.raw("</details>\n") }

        for section in report.pageSections { section.html(into: &page) }
        page.raw("</body>\n</html>\n")
        return MarkupText.keepingHyphenatedWordsWhole(page.html)
    }

    // MARK: - Sections

    /// The answer first: what failed, why, and what to do, each linked to its
    /// trace or dump, before any table.
    static func header(_ report: RunReport, links: TrialAnchors, into page: inout Page) {
        let head = report.head
        page.raw("<header>\n<h1>Strain run: \(e(head.suiteName))</h1>\n")
        if let description = head.description {
            let text = description.map { $0.code ? "<code>\(e($0.text))</code>" : e($0.text) }.joined()
            page.raw("<p class=\"description\">\(text)</p>\n")
        }
        let unexpected = head.unexpectedCount
        let verdict = (unexpected == 0 ? "<span class=\"ok\">every outcome expected</span>" : "<span class=\"bad\">\(unexpected) unexpected\(e(head.harnessErrorNote))</span>")
            + (head.interruption.map { "<span class=\"bad\">\(e($0))</span>" } ?? "")
        page.raw("<p class=\"counts\">\(counted(head.trialCount, "trial")): \(verdict). Suite <code>\(e(head.suitePath))</code>, started \(e(head.startedAt)), finished \(e(head.finishedAt)).</p>\n")
        page.raw("</header>\n")

        // A bisect's per-probe stack verdicts ("run it on a larger stack too") are what
        // the bisect did: its answer, just below, replaces them here (the model leaves them out).
        let answer = report.answer
        guard unexpected > 0 || !answer.isEmpty else { return }
        page.raw("<section id=\"answer\" class=\"answer\">\n")
        if unexpected > 0 {
            page.raw("<h2>What failed</h2>\n<ul class=\"unexpected\">")
            for failed in report.failed.entries {
                // `timedOut ×1 of 1` is one phrase: a phone broke it before `×1` (and before `of`).
                var outcome = "<b>\(e(failed.key.outcomes).replacingOccurrences(of: " ×", with: "&nbsp;×"))</b>&nbsp;of&nbsp;\(failed.key.total)"
                if let anchor = links.evidence(of: failed.key.first) { outcome = "<a href=\"#\(anchor)\">\(outcome)</a>" }
                page.raw("<li>\(e(failed.key.key.description)): \(outcome); expects \(e(failed.expected))")
                if let reason = failed.reason { page.raw(" — <span class=\"reason\">\(e(reason))</span>") }
                if let message = failed.message { page.raw(" — \(e(message))") }
                if let point = failed.point {
                    page.raw("<br><span class=\"where\">\(point.label) <code>\(e(point.name))</code></span>")
                }
                page.raw("</li>")
            }
            page.raw("</ul>\n")
        }
        if !answer.advice.isEmpty {
            page.raw("<h2>Why, and what to do</h2>\n<ul class=\"advice\">")
            for advice in answer.advice {
                let evidence = advice.evidence.flatMap { links.evidence(of: $0) }.map { " <a href=\"#\($0)\">\(evidenceLabel($0))</a>" } ?? ""
                let dump = advice.dumpAnchor.map { " <a href=\"#\($0)\">dump</a>" } ?? ""
                page.raw("<li><b>\(e(advice.bold))</b>: \(e(advice.text))\(evidence)\(dump)</li>")
            }
            page.raw("</ul>\n")
        }
        if !answer.stalls.isEmpty {
            page.raw("<h2>What stalled</h2>\n<ul class=\"stall-list\">")
            for stall in answer.stalls {
                page.raw("<li><a href=\"#\(stall.anchor)\"><b>\(e(stall.heading))</b></a>: \(e(stall.body))</li>")
            }
            page.raw("</ul>\n")
        }
        page.raw("</section>\n")
    }

    /// What a link to `anchor` says: `trace`, `dump` or `evidence`.
    static func evidenceLabel(_ anchor: String) -> String {
        anchor.hasPrefix("trace") ? "trace" : anchor.hasPrefix("stall") ? "dump" : "evidence"
    }

    static func groupSection(_ table: OutcomeSection.Table, links: TrialAnchors, into page: inout Page) {
        page.raw("<article class=\"group\">\n<h3>\(e(table.title))</h3>\n")
        // The page adds the spread across repetitions after the median.
        var header = table.header
        header.insert("spread", at: 3)
        page.raw("<div class=\"table\"><table class=\"comparison\"><thead><tr>" + header.map { "<th>\(e($0))</th>" }.joined() + "</tr></thead><tbody>\n")
        for row in table.rows {
            var cells = row.cells.map(e)
            cells.insert(e(row.spread), at: 3)
            if !row.allExpected { cells[1] = "<b class=\"bad\">\(cells[1])</b> (expected \(e(row.expected)))" }
            let trials = row.source.trials
            cells[0] = page.trialAnchors.rowMarkers(trials) + cells[0]
            if let anchor = trials.lazy.compactMap({ links.evidence(of: $0) }).first {
                cells[1] += " <a href=\"#\(anchor)\">\(evidenceLabel(anchor))</a>"
            }
            page.raw("<tr\(row.allExpected ? "" : " class=\"unexpected\"")>" + cells.enumerated().map { column, cell in
                "<td\(column < 2 ? "" : " class=\"num\"")\(dataLabel(header, column))>\(cell)</td>"
            }.joined() + "</tr>\n")
        }
        page.raw("</tbody></table></div>\n")
        if let note = table.note { page.raw("<p class=\"note\">\(e(note))</p>\n") }
        page.raw("<div class=\"charts\">\n")
        for chart in table.charts { figure(chart, into: &page) }
        page.raw("</div>\n</article>\n")
    }

    static func guardTable(_ ranking: RankingSection.Table, into page: inout Page) {
        let table = ranking.source
        page.raw("<article class=\"group guards\">\n<h3>\(e(ranking.title))</h3>\n<div class=\"table\"><table class=\"comparison\"><thead><tr>")
        for (index, column) in ranking.header.enumerated() { page.raw("<th\(index >= 3 && index <= 8 ? " class=\"num\"" : "")>\(e(column))</th>") }
        page.raw("</tr></thead><tbody>\n")
        for (row, cells) in zip(table.rows, ranking.cells) {
            page.raw("<tr\(row.allExpected ? "" : " class=\"unexpected\"")>")
            for (column, cell) in cells.enumerated() {
                page.raw("<td\(column >= 3 && column <= 8 ? " class=\"num\"" : "")\(dataLabel(ranking.header, column))>\(column == 0 ? page.trialAnchors.rowMarkers(row.trials) : "")\(e(cell))</td>")
            }
            page.raw("</tr>\n")
        }
        page.raw("</tbody></table></div>\n<p class=\"note\">\(e(ranking.note))</p>\n<div class=\"charts\">\n")
        for chart in ranking.charts { figure(chart, into: &page) }
        page.raw("</div>\n</article>\n")
    }

    /// A cell's column header, which a narrow screen shows before the cell when the
    /// table's rows are stacked (the header row is hidden there).
    static func dataLabel(_ header: [String], _ column: Int) -> String {
        header.indices.contains(column) ? " data-label=\"\(e(header[column]))\"" : ""
    }

    /// A group's declared metrics: the medians per strategy, in their units.
    static func declaredMetricsTable(_ table: DeclaredMetrics.Table, into page: inout Page) {
        page.raw("<article class=\"group metrics\">\n<h3>\(e(table.title)): the scenario's metrics</h3>\n<div class=\"table\"><table class=\"comparison\"><thead><tr>")
        for (index, column) in table.header.enumerated() { page.raw("<th\(index > 0 ? " class=\"num\"" : "")>\(e(column))</th>") }
        page.raw("</tr></thead><tbody>\n")
        for row in table.rows {
            page.raw("<tr>")
            for (index, cell) in row.enumerated() { page.raw("<td\(index > 0 ? " class=\"num\"" : "")\(dataLabel(table.header, index))>\(e(cell))</td>") }
            page.raw("</tr>\n")
        }
        page.raw("</tbody></table></div>\n</article>\n")
    }

    /// Time and memory against a numeric parameter swept over three or more values,
    /// on log–log axes, with the fitted exponents.
    static func sweepSection(_ sweep: GrowthSweep, into page: inout Page) {
        page.raw("<article class=\"group sweep\">\n<h3>\(e(sweep.title))</h3>\n<ul class=\"fits\">")
        for line in sweep.fitLines { page.raw("<li>\(e(line))</li>") }
        page.raw("</ul>\n<div class=\"charts\">\n")
        for chart in sweep.charts { figure(chart, into: &page) }
        page.raw("</div>\n</article>\n")
    }

    /// Thread count over time for stalled trials and trials that started many threads.
    static func timelines(_ timelines: TimelineSection.Scenario?, into page: inout Page) {
        guard let timelines else { return }
        page.raw("<article class=\"group timelines\">\n<h3>\(e(timelines.title))</h3>\n<div class=\"charts\">\n")
        for chart in timelines.charts { figure(.lines(chart), into: &page) }
        if let note = timelines.note { page.raw("<p class=\"note\">\(spans(note))</p>\n") }
        page.raw("</div>\n</article>\n")
    }

    // MARK: - Pieces

    /// The page as it is written.
    package struct Page: Sendable {
        package var html = ""
        /// Where each trial's id goes: sections put ``TrialAnchors/markers(at:)`` in their entries.
        package var trialAnchors = TrialAnchors()
        package mutating func raw(_ text: String) { html += text }
    }

    static func e(_ text: String) -> String { HTMLText.escape(text) }

    /// A chart of the model in a `<figure>`, with its caption; nothing when it has nothing to draw.
    static func figure(_ chart: Chart, into page: inout Page) {
        let svg = SVGChart.svg(chart)
        guard !svg.isEmpty else { return }
        page.raw("<figure>\(svg)\(chart.caption.map { "<figcaption>\(e($0))</figcaption>" } ?? "")</figure>\n")
    }

    /// Text with its backticked spans as `<code>`, the rest escaped.
    static func spans(_ text: String) -> String {
        MarkupText.codeSpans(text).map { $0.code ? "<code>\(e($0.text))</code>" : e($0.text) }.joined()
    }

    /// One frame: its inlined functions first (same number), then the function,
    /// its source location and its module. `index` nil: a frame of the cycle's period.
    static func frameItem(_ frame: Frame, index: Int?, entry: Bool = false, into page: inout Page) {
        // The number as the terminal writes it (`#29,096`, which `<li value>` would show as `29096.`).
        let number = index.map { "<span class=\"n\">\(e(TraceText.frameNumber($0)))</span>" } ?? ""
        // The entry is marked where its call was made: its innermost inlined function, if any.
        let mark = " <span class=\"entry-mark\">← entered the recursion</span>"
        for (position, inlined) in (frame.inlined ?? []).enumerated() {
            let marked = entry && position == 0
            page.raw("<li class=\"inlined\(marked ? " entry" : "")\">\(number)<span class=\"symbol\">\(e(inlined.symbol ?? "?"))</span>\(location(inlined.location, file: inlined.file)) <span class=\"module\">inlined</span>\(marked ? mark : "")</li>")
        }
        let marked = entry && (frame.inlined ?? []).isEmpty
        let name = frame.symbol ?? String(format: "0x%llx", frame.address)
        let offset = frame.moduleOffset.map { String(format: "+0x%llx", $0) } ?? ""
        page.raw("<li\(marked ? " class=\"entry\"" : "")>\(number)<span class=\"symbol\">\(e(name))</span>\(location(frame.location, file: frame.file)) <span class=\"module\">\(e(frame.moduleName ?? "?"))\(e(offset))</span>\(marked ? mark : "")</li>")
    }

    /// ` <span class="location" title="/full/path">File.swift:12:5</span>`, or nothing.
    static func location(_ text: String?, file: String?) -> String {
        guard let text else { return "" }
        return " <span class=\"location\" title=\"\(e(file ?? text))\">\(e(text))</span>"
    }

    static let css = """
    body{font:14px/1.45 -apple-system,"Segoe UI",Helvetica,Arial,sans-serif;margin:0 auto;max-width:1240px;padding:0 18px 40px;color:#1d1d1f;background:#fff}
    h1{font-size:24px;margin:18px 0 4px}h2{font-size:19px;margin:28px 0 8px;border-bottom:2px solid #e4e4e8;padding-bottom:4px}
    h3{font-size:15px;margin:18px 0 6px}code,pre,.symbol,.module{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:12px}
    nav ul{list-style:none;padding:0;display:flex;flex-wrap:wrap;gap:6px 14px;margin:8px 0}nav a{color:#3366cc}
    .ok{color:#2b9348;font-weight:600}.bad{color:#c1121f;font-weight:600}
    table{border-collapse:collapse;margin:6px 0 10px}th,td{padding:3px 10px;border-bottom:1px solid #e4e4e8;text-align:left;vertical-align:top}
    th{background:#f5f5f7;font-weight:600}td.num,th.num{text-align:right;font-variant-numeric:tabular-nums}
    tr.unexpected td{background:#fdecec}.charts{display:flex;flex-wrap:wrap;gap:10px}figure{margin:0;border:1px solid #e4e4e8;border-radius:6px;padding:6px;background:#fcfcfd}
    svg text{font-family:-apple-system,"Segoe UI",Helvetica,Arial,sans-serif;font-size:11px;fill:#333}svg .chart-title{font-weight:600;font-size:12px}
    svg .muted{fill:#999}svg .overflow-mark{fill:#c1121f;font-weight:700}svg .in-bar{fill:#fff;font-size:11px}svg text.value.in-bar{fill:#fff}
    details{margin:4px 0}summary{cursor:pointer}ol.frames{margin:4px 0 8px;padding-left:66px;overflow-x:auto;list-style:none}ol.frames li{white-space:nowrap}
    ol.frames .n{display:inline-block;min-width:60px;margin-left:-66px;padding-right:6px;text-align:right;color:#777;font-variant-numeric:tabular-nums}
    ol.period{list-style:none;padding-left:18px}li.inlined{color:#555}li.entry{background:#fff6d6}.entry-mark{color:#8a5a00;font-weight:600}
    .location{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:12px;color:#1b4965;font-weight:600}
    .module{color:#777}.cycle>details>summary{color:#1b4965;font-weight:600}li.gap{list-style:none;color:#777}
    .answer{border:1px solid #e4e4e8;border-radius:6px;padding:4px 14px 8px;background:#fcfcfd}.answer h2{font-size:16px;border:0;margin:10px 0 4px}
    .reason{color:#9d0208;font-family:ui-monospace,Menlo,Consolas,monospace;font-size:12px}.where{color:#555;font-size:12px}p.note{color:#777;font-size:12px;margin:2px 0}
    div.table{max-width:100%;overflow-x:auto}td.num{white-space:nowrap}svg.chart{max-width:100%;height:auto;display:block}figure{max-width:100%;box-sizing:border-box;min-width:0}
    svg .point-label{font-size:11px;fill:#555}svg .tick{font-size:11px;fill:#555}svg .tick.end{text-anchor:end}
    div.chart-scroll{max-width:100%}svg.probes{max-width:100%;height:auto;display:block;margin:4px 0 8px}svg.probes .axis{stroke:#bbb}svg.probes .probe-answer{stroke:#2b9348;stroke-dasharray:3 2}
    svg.probes .probe-ok{fill:#2b9348;fill-opacity:.8}svg.probes .probe-failed{fill:#c1121f;fill-opacity:.8}details.probes>summary{font-weight:600;margin:12px 0}
    @media (max-width:640px){body{padding:0 8px 24px}th,td{padding:2px 6px}#bisect ul{padding-left:16px}
    div.table table,div.table tbody,div.table tr,div.table td{display:block;width:auto}div.table thead{display:none}
    div.table tr{border-bottom:1px solid #e4e4e8;padding:3px 0}div.table td{border:0;padding:1px 6px;text-align:left;white-space:normal}
    div.table td[data-label]::before{content:attr(data-label) ": ";color:#555;font-weight:600}div.table td:empty{display:none}}
    .thread-group>summary{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:12px}p.threads{color:#555;font-size:12px;margin:2px 0 2px 18px}
    figcaption{font-size:11px;color:#555;max-width:560px}pre.suite{background:#f5f5f7;padding:10px;overflow:auto;max-height:420px}ul.fits{margin:2px 0 8px}
    summary{overflow-wrap:anywhere}.nb{white-space:nowrap}
    """
}
