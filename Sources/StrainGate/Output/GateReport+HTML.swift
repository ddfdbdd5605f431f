import Foundation
import StrainRecords

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
        page += "<p>\(mode == .interleaved ? "Interleaved A/B: both builds ran in one job, repetitions alternating." : "Cross-run against \(e(baselineName ?? "a stored baseline")); timings judged with a δ calibrated from A/A runs.")"
        if let sides = sidesSentence(code: { "<code>\(e($0))</code>" }) { page += " " + sides }
        page += " A timing row can fail only with ≥ \(requiredRepetitions) repetitions per side; Benjamini-Hochberg q = \(q).</p>\n"
        if let runReports, !runReports.isEmpty {
            page += "<p>Each side's run as a report: " + runReports.map { "<a href=\"\(e($0))\">\(e($0))</a>" }.joined(separator: ", ")
                + "; each outcome that changed links to its trial there.</p>\n"
        }
        if let runFiles, !runFiles.isEmpty {
            page += "<p>Each side's run, with its traces and dumps: " + runFiles.map { "<a href=\"\(e($0))\">\(e($0))</a>" }.joined(separator: ", ")
                + "; <code>strain report &lt;file&gt; --out &lt;page.html&gt;</code> renders either as a report.</p>\n"
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
            page += "<section id=\"other\"><h2>Improved, inconclusive, new</h2>\n" + Self.table(others, failingOnly: false) + "</section>\n"
        }
        let unchanged = rows.filter { $0.verdict == .unchanged }
        page += "<section id=\"unchanged\"><details><summary>\(unchanged.count) unchanged row\(unchanged.count == 1 ? "" : "s")</summary>\n<ul>"
        for row in unchanged { page += "<li>\(e(row.key.description))</li>" }
        page += "</ul></details></section>\n</main>\n</body>\n</html>\n"
        return page
    }

    /// One body per trial: its key and outcomes once, over its outcome's verdict and
    /// each metric's.
    static func table(_ rows: [RowComparison], failingOnly: Bool) -> String {
        let e = html
        var out = "<div class=\"scroll\"><table>\n<thead><tr><th>verdict</th><th>metric</th><th>baseline → candidate (change of the median)</th><th>samples</th><th>ratio, Hodges–Lehmann (95% interval)</th><th>q</th><th>n</th><th>δ, floor (from)</th></tr></thead>\n"
        for row in rows {
            out += "<tbody>\n<tr class=\"key\"><th colspan=\"8\">\(e(row.key.description)) <span class=\"outcomes\">outcomes \(e(histogramText(row.baselineOutcomes))) → \(e(histogramText(row.candidateOutcomes)))</span></th></tr>\n"
            if let reason = row.outcomeReason, [.outcomeChanged, .missing, .harnessError, .new, .fixed].contains(row.verdict) {
                let pointer = row.evidence == nil && (row.verdict == .outcomeChanged || row.verdict == .harnessError) ? " (the trials, with their dumps and traces, are in the candidate's run)" : ""
                out += "<tr class=\"\(row.verdict.fails ? "bad" : "")\"><td>\(e(row.verdict.label))</td><td>outcome</td><td colspan=\"6\">\(e(reason + pointer))</td></tr>\n"
                if let evidence = row.evidence {
                    out += "<tr class=\"evidence\"><td></td><td>evidence</td><td colspan=\"6\"><a href=\"\(e(evidence.link))\">repetition \(evidence.trial.repetition) in the candidate's report</a>: \(e(evidence.line))</td></tr>\n"
                }
            }
            for metric in row.metrics where failingOnly ? metric.verdict.fails : (metric.verdict != .unchanged && metric.verdict != .notGated) {
                let values = "\(metric.baselineMedian.map { Gate.format($0, metric.unit) } ?? "–") → \(metric.candidateMedian.map { Gate.format($0, metric.unit) } ?? "–")"
                    + (metric.changePercent.map { String(format: " (%+.1f%%)", $0) } ?? "")
                let effect = metric.ratio.map { ratio in String(format: "×%.3f", ratio) + (metric.ratioLow.map { String(format: " (%.3f–%.3f)", $0, metric.ratioHigh ?? $0) } ?? "") } ?? e(metric.reason)
                out += "<tr class=\"\(metric.verdict.fails ? "bad" : "")\"><td>\(e(metric.verdict.label))</td><td>\(e(metric.metric))</td><td class=\"num\">\(e(values))</td><td>\(samples(metric))</td><td class=\"effect\">\(effect)</td>"
                out += "<td class=\"num\">\(metric.qValue.map { String(format: "%.3g", $0) } ?? "–")</td><td class=\"num\">\(metric.baselineCount)/\(metric.candidateCount)</td>"
                out += "<td>\(e(Gate.percent(metric.delta))), \(e(Gate.format(metric.floor, metric.unit))) (\(e(metric.thresholdSource)))</td></tr>\n"
            }
            out += "</tbody>\n"
        }
        return out + "</table></div>\n"
    }

    /// Each side's repetitions as dots on one scale shared by both, baseline above and
    /// candidate below, so a bimodal or drifting side shows; each dot's value in its tooltip.
    static func samples(_ metric: MetricComparison) -> String {
        guard let before = metric.baselineSamples, let after = metric.candidateSamples, !(before.isEmpty && after.isEmpty) else { return "" }
        let all = before + after
        let low = all.min()!, high = all.max()!
        let width = 120.0, margin = 4.0
        func x(_ value: Double) -> Double { high > low ? margin + (value - low) / (high - low) * (width - 2 * margin) : width / 2 }
        var svg = "<svg class=\"dots\" width=\"\(Int(width))\" height=\"26\" role=\"img\" aria-label=\"\(before.count) baseline and \(after.count) candidate repetitions, from \(html(Gate.format(low, metric.unit))) to \(html(Gate.format(high, metric.unit)))\">"
        for (values, y, side) in [(before, 7, "baseline"), (after, 19, "candidate")] {
            for value in values {
                svg += "<circle class=\"\(side)\" cx=\"\(String(format: "%.1f", x(value)))\" cy=\"\(y)\" r=\"3\"><title>\(side) \(html(Gate.format(value, metric.unit)))</title></circle>"
            }
        }
        return svg + "</svg>"
    }

    /// HTML text: the same escaping as XML (`&#39;` and `&apos;` both mean `'` in HTML5).
    static func html(_ text: String) -> String { xml(text) }

    static let css = """
        body{font:15px/1.45 system-ui,sans-serif;margin:0 auto;max-width:1200px;padding:1em;color:#1d1d1f}
        h1{font-size:1.5em;margin:.2em 0}h2{font-size:1.15em;margin-top:1.4em}
        .pass b{color:#1a7f37}.fail b{color:#c62828}.note{color:#8a5a00}
        .scroll{overflow-x:auto}table{border-collapse:collapse;width:100%}
        th,td{border-bottom:1px solid #ddd;padding:.3em .5em;text-align:left;vertical-align:top}
        td.num{white-space:nowrap;text-align:right}tr.bad td{background:#fdecea}
        code{font-size:.95em}a{color:#0550ae}
        tr.key th{background:#f6f8fa;font-weight:600;overflow-wrap:anywhere}tr.key .outcomes{font-weight:normal;color:#57606a;margin-left:.5em}
        td.effect{min-width:14em}@media (max-width:600px){body{font-size:13px}th,td{padding:.25em .3em}}
        svg.dots circle{fill-opacity:.55}svg.dots .baseline{fill:#6e7781}svg.dots .candidate{fill:#0969da}tr.bad svg.dots .candidate{fill:#c62828}
        """
}
