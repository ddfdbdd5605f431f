import Foundation
import StrainRecords
import StrainText

extension GateReport {
    /// The comparison view: one self-contained page (inline CSS, no scripts) that
    /// answers first (the conclusion and what failed, with δ and where it came from,
    /// the effect with its interval, the q-value, n per side and the outcomes), then
    /// every other row.
    package func renderHTML() -> String {
        let e = Self.html
        var page = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
        page += "<title>Strain gate: \(e(suite))</title>\n<style>\(Self.css)</style>\n</head>\n<body>\n"
        let status = exitCode == 0 ? "pass" : "fail"
        page += "<header><h1>Strain gate: \(e(suite))</h1>\n<p class=\"\(status)\"><b>\(e(conclusion))</b></p>\n"
        page += "<p>\(e(mode == .interleaved ? interleavedSentence : crossRunSentence))"
        if let sides = sidesSentence(code: { "<code>\(e($0))</code>" }) { page += " " + sides }
        if let repetitionsSentence { page += " " + e(repetitionsSentence) }
        page += " Benjamini-Hochberg q = \(q). A change is worked from the unrounded medians (gate.json has them); "
            + "a ratio is the Hodges–Lehmann estimate, the median of every candidate-to-baseline pair's ratio, so it can differ from the change of the medians.</p>\n"
        if let runReports, !runReports.isEmpty {
            page += "<p>Each side's run as a report: " + runReports.map { "<a href=\"\(e($0))\">\(e($0))</a>" }.joined(separator: ", ")
                + "; each outcome that changed links to its trial there.</p>\n"
        }
        if let runFiles, !runFiles.isEmpty {
            let one = runFiles.count == 1
            page += "<p>\(one ? "The candidate's run" : "Each side's run"), with its traces and dumps: " + runFiles.map { "<a href=\"\(e($0))\">\(e($0))</a>" }.joined(separator: ", ")
                + "; <code>strain report &lt;file&gt; --out &lt;page.html&gt;</code> renders \(one ? "it" : "either") as a report.</p>\n"
        }
        for warning in warnings ?? [] { page += "<p class=\"note warning\"><b>Warning:</b> \(e(warning))</p>\n" }
        if !fingerprint.isEmpty {
            page += "<p class=\"note\">Machines differ: " + fingerprint.map { "\(e($0.field)) \(e($0.baseline)) → \(e($0.candidate))\($0.hard ? " (hard)" : "")" }.joined(separator: "; ") + "</p>\n"
        }
        page += "</header>\n<main>\n"
        let failing = self.failing
        if !failing.isEmpty {
            page += "<section id=\"failing\"><h2>What failed</h2>\n" + Self.table(failing, failingOnly: true) + "</section>\n"
        }
        let others = shownRows.filter { !$0.verdict.fails }
        if !others.isEmpty {
            let kinds = Self.kinds(of: others)
            page += "<section id=\"other\"><h2>\(kinds.prefix(1).uppercased() + kinds.dropFirst())</h2>\n" + Self.table(others, failingOnly: false) + "</section>\n"
        }
        let unchanged = rows.filter(\.isUnchangedThroughout)
        page += "<section id=\"unchanged\"><p>\(e(tally))</p>\n"
        // No disclosure of nothing: `0 trials unchanged` opened on an empty list.
        if !unchanged.isEmpty {
            page += "<details><summary>\(unchanged.count) trial\(unchanged.count == 1 ? "" : "s") unchanged in every metric and outcome</summary>\n<ul>"
            for row in unchanged { page += "<li>\(e(row.key.description))</li>" }
            page += "</ul></details>"
        }
        page += "</section>\n</main>\n</body>\n</html>\n"
        return MarkupText.keepingHyphenatedWordsWhole(page)
    }

    /// The columns of a comparison table, in order: each cell carries its column's name
    /// too, which a phone shows beside it when the rows are stacked.
    package static let columns = [
        "verdict", "metric", "baseline → candidate (change of the median)", "samples",
        "ratio, Hodges–Lehmann (95% interval), or why none", "q", "n", "δ, floor (from)",
    ]

    /// What the samples strips show, visible above each table (a tooltip shows in no
    /// screenshot, print or pull request); `example`, a strip of the table whose
    /// repetitions read the same (`all 14.8 MiB`), shows how such a strip is written.
    package static func samplesLegend(example: String?) -> String {
        "<p class=\"legend\">Samples: a dot per repetition, "
        + "<svg class=\"key\" width=\"10\" height=\"10\" aria-hidden=\"true\"><circle class=\"baseline legend-dot\" cx=\"5\" cy=\"5\" r=\"4\"/></svg> baseline on the upper row, "
        + "<svg class=\"key\" width=\"10\" height=\"10\" aria-hidden=\"true\"><circle class=\"candidate legend-dot\" cx=\"5\" cy=\"5\" r=\"4\"/></svg> candidate on the lower "
        + "(<svg class=\"key\" width=\"10\" height=\"10\" aria-hidden=\"true\"><circle class=\"candidate failed legend-dot\" cx=\"5\" cy=\"5\" r=\"4\"/></svg> in a failing row), "
        + "on one linear scale from the smallest repetition of either side to the largest, written at its ends"
        // Not a fixed `all 14.8 MiB`, which pointed at no strip of a gate where none read the same (re-trial 35k).
        + (example.map { " (where every repetition reads the same, its dots sit in the middle, written once: <code>\(html($0))</code>)" } ?? "") + ".</p>\n"
    }

    /// One body per trial: its key and outcomes once, over its outcome's verdict and
    /// each metric's.
    package static func table(_ rows: [RowComparison], failingOnly: Bool) -> String {
        let e = html
        let label = { (column: Int) in " data-label=\"\(e(columns[column]))\"" }
        var out = "<div class=\"scroll\"><table class=\"rows\">\n<thead><tr>" + columns.map { "<th>\(e($0))</th>" }.joined() + "</tr></thead>\n"
        var example: String?
        var strips = false
        for row in rows {
            out += "<tbody>\n<tr class=\"key\"><th colspan=\"8\">\(e(row.key.description)) <span class=\"outcomes\">outcomes \(e(histogramText(row.baselineOutcomes))) → \(e(histogramText(row.candidateOutcomes)))</span></th></tr>\n"
            if let reason = row.outcomeReason, [.outcomeChanged, .missing, .harnessError, .new, .fixed, .unchanged].contains(row.verdict) {
                let pointer = row.evidence == nil && (row.verdict == .outcomeChanged || row.verdict == .harnessError) ? " (the trials, with their dumps and traces, are in the candidate's run)" : ""
                out += "<tr class=\"\(row.verdict.fails ? "bad" : "")\"><td\(label(0))>\(e(row.verdict.label))</td><td\(label(1))>outcome</td><td class=\"wide\" colspan=\"6\">\(e(reason + pointer))</td></tr>\n"
                if let evidence = row.evidence {
                    out += "<tr class=\"evidence\"><td></td><td class=\"label\">evidence</td><td class=\"wide\" colspan=\"6\"><a href=\"\(e(evidence.link))\">repetition \(evidence.trial.repetition) in the candidate's report</a>: \(e(evidence.line))</td></tr>\n"
                    if let advice = evidence.advice {
                        out += "<tr class=\"evidence\"><td></td><td class=\"label\">what to do</td><td class=\"wide\" colspan=\"6\">\(e(advice))</td></tr>\n"
                    }
                }
            }
            for metric in row.metrics where failingOnly ? metric.verdict.fails : (metric.verdict != .unchanged && metric.verdict != .notGated) {
                example = example ?? allSame(metric)
                let strip = samples(metric)
                strips = strips || !strip.isEmpty
                let values = "\(metric.baselineMedian.map { Gate.format($0, metric.unit) } ?? "–") → \(metric.candidateMedian.map { Gate.format($0, metric.unit) } ?? "–")"
                    + (metric.changePercent.map { String(format: " (%+.1f%%)", $0) } ?? "")
                // An inconclusive row's estimate is shown with why it decides nothing; `(q 1)`
                // is one figure (a phone broke it after `(q`).
                let reason = e(metric.reason).replacingOccurrences(of: "(q ", with: "(q&nbsp;")
                let effect = metric.ratio.map { ratio in
                    String(format: "×%.3f", ratio) + (metric.ratioLow.map { String(format: " (%.3f–%.3f)", $0, metric.ratioHigh ?? $0) } ?? "")
                        + (metric.verdict == .inconclusive ? "; " + reason : "")
                } ?? reason
                out += "<tr class=\"\(metric.verdict.fails ? "bad" : "")\"><td\(label(0))>\(e(metric.verdict.label))</td><td\(label(1))>\(e(MetricDescriptor.displayName(of: metric.metric)))</td><td class=\"num\"\(label(2))>\(e(values))</td><td\(label(3))>\(strip)</td><td class=\"effect\"\(label(4))>\(effect)</td>"
                out += "<td class=\"num\"\(label(5))>\(metric.qValue.map { String(format: "%.3g", $0) } ?? "–")</td><td class=\"num\"\(label(6))>\(metric.baselineCount)/\(metric.candidateCount)</td>"
                out += "<td\(label(7))>\(e(Gate.percent(metric.delta))), \(e(Gate.format(metric.floor, metric.unit))) (\(e(metric.thresholdSource)))</td></tr>\n"
            }
            out += "</tbody>\n"
        }
        // A legend over strips there are: a table of outcomes alone has none.
        return (strips ? samplesLegend(example: example) : "") + out + "</table></div>\n"
    }

    /// `all 14.8 MiB` where every repetition of `metric` reads the same at three digits;
    /// nil where they differ, or there are none.
    static func allSame(_ metric: MetricComparison) -> String? {
        guard let before = metric.baselineSamples, let after = metric.candidateSamples, let low = (before + after).min(), let high = (before + after).max() else { return nil }
        let text = Gate.format(low, metric.unit)
        return high == low || text == Gate.format(high, metric.unit) ? "all \(text)" : nil
    }

    /// Each side's repetitions as dots on one linear scale shared by both, baseline
    /// above and candidate below, so a bimodal or drifting side shows; the scale's ends
    /// written under it, each dot's value in its tooltip.
    package static func samples(_ metric: MetricComparison) -> String {
        guard let before = metric.baselineSamples, let after = metric.candidateSamples, !(before.isEmpty && after.isEmpty) else { return "" }
        let all = before + after
        let low = all.min()!, high = all.max()!
        let width = 150.0, margin = 4.0
        let (lowText, highText) = (html(Gate.format(low, metric.unit)), html(Gate.format(high, metric.unit)))
        // Ends that read the same at three digits are one value: the dots at the middle,
        // under one label (they sat at both ends of the strip under `all 14.8 MiB`).
        let spread = allSame(metric) == nil
        func x(_ value: Double) -> Double { spread ? margin + (value - low) / (high - low) * (width - 2 * margin) : width / 2 }
        let range = spread ? "from \(lowText) to \(highText)" : "all \(lowText)"
        var svg = "<svg class=\"dots\" width=\"\(Int(width))\" height=\"40\" viewBox=\"0 0 \(Int(width)) 40\" role=\"img\" aria-label=\"\(before.count) baseline and \(after.count) candidate repetitions, \(range)\">"
        for (values, y, side) in [(before, 6, "baseline"), (after, 16, "candidate")] {
            for value in values {
                svg += "<circle class=\"\(side)\" cx=\"\(String(format: "%.1f", x(value)))\" cy=\"\(y)\" r=\"3\"><title>\(side) \(html(Gate.format(value, metric.unit)))</title></circle>"
            }
        }
        // The scale: a line with a tick at each end, and the ends' values under it.
        let right = width - margin
        svg += "<path class=\"scale\" d=\"M\(Int(margin)) 21V25H\(Int(right))V21\"/>"
        // Ends that read the same at three digits are written once (`14.8 MiB … 14.8 MiB`).
        if spread {
            svg += "<text x=\"0\" y=\"37\">\(lowText)</text><text x=\"\(Int(width))\" y=\"37\" text-anchor=\"end\">\(highText)</text>"
        } else {
            svg += "<text x=\"\(Int(width / 2))\" y=\"37\" text-anchor=\"middle\">all \(lowText)</text>"
        }
        return svg + "</svg>"
    }

    /// HTML text: the same escaping as XML (`&#39;` and `&apos;` both mean `'` in HTML5).
    static func html(_ text: String) -> String { xml(text) }

    package static let css = """
        body{font:15px/1.45 system-ui,sans-serif;margin:0 auto;max-width:1200px;padding:1em;color:#1d1d1f}
        h1{font-size:1.5em;margin:.2em 0}h2{font-size:1.15em;margin-top:1.4em}
        .pass b{color:#1a7f37}.fail b{color:#c62828}.note{color:#8a5a00}
        .scroll{overflow-x:auto}table{border-collapse:collapse;width:100%}
        th,td{border-bottom:1px solid #ddd;padding:.3em .5em;text-align:left;vertical-align:top}
        td.num{white-space:nowrap;text-align:right}tr.bad td{background:#fdecea}
        code{font-size:.95em}a{color:#0550ae}
        tr.key th{background:#f6f8fa;font-weight:600;overflow-wrap:anywhere}tr.key .outcomes{font-weight:normal;color:#57606a;margin-left:.5em}
        td.effect{min-width:14em}p.legend{font-size:.9em;color:#57606a;margin:.3em 0}
        svg.dots circle,svg.key circle{fill-opacity:.55}svg .baseline{fill:#6e7781}svg .candidate{fill:#0969da}tr.bad svg.dots .candidate,svg .candidate.failed{fill:#c62828}
        svg.dots{vertical-align:middle}svg.dots .scale{fill:none;stroke:#8c959f}svg.dots text{font-size:10px;fill:#57606a;font-family:system-ui,sans-serif}
        @media (max-width:600px){body{font-size:13px}table.rows,table.rows tbody,table.rows tr,table.rows th,table.rows td{display:block;width:auto}
        table.rows thead{display:none}table.rows tr{border-bottom:1px solid #ddd;padding:.2em 0}table.rows td{border:0;padding:.1em .3em;text-align:left;white-space:normal;min-width:0}
        table.rows td[data-label]::before{content:attr(data-label) ": ";color:#57606a;font-size:.9em}table.rows td:empty{display:none}
        svg.dots{max-width:100%;height:auto}}
        .nb{white-space:nowrap}
        """
}
