import Foundation
import StrainRecords

/// `report.html`: one self-contained page (inline CSS and SVG, no scripts, no
/// fonts or images from anywhere) that shows a run at a glance: comparison
/// charts per scenario, stack use against the stack each strategy had, thread
/// counts over time, latency curves, outcome histograms, growth with a swept
/// parameter, traces and thread dumps. Every string from the run is escaped.
public enum HTMLReport {
    public static func render(_ run: RunRecord) -> String {
        let summary = RunSummary(run)
        let comparison = GuardComparison(run)
        var page = Page()
        page.raw("<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n")
        page.raw("<title>Strain run: \(e(run.suite.name))</title>\n<style>\(css)</style>\n</head>\n<body>\n")
        header(run, summary: summary, into: &page)

        let scenarios = run.trials.map(\.scenario).reduce(into: [String]()) { if !$0.contains($1) { $0.append($1) } }
        page.raw("<nav><ul>")
        let anchors = Dictionary(uniqueKeysWithValues: scenarios.enumerated().map { ($0.element, "scenario-\($0.offset + 1)") })
        for scenario in scenarios { page.raw("<li><a href=\"#\(anchors[scenario]!)\">\(e(scenario))</a></li>") }
        page.raw("<li><a href=\"#environment\">environment</a></li></ul></nav>\n")

        for scenario in scenarios {
            page.raw("<section class=\"scenario\" id=\"\(anchors[scenario]!)\">\n<h2>\(e(scenario))</h2>\n")
            for table in comparison.tables where table.scenario == scenario { guardTable(table, into: &page) }
            for group in summary.groups where group.scenario == scenario && !GuardComparison.covers(group, in: run) {
                groupSection(group, into: &page)
            }
            sweeps(run.trials.filter { $0.scenario == scenario }, into: &page)
            timelines(run.trials.filter { $0.scenario == scenario }, into: &page)
            page.raw("</section>\n")
        }

        bisect(run, into: &page)
        verdicts(run, into: &page)
        traces(run, into: &page)
        confinement(run, into: &page)
        stalls(run, into: &page)
        environment(run, into: &page)
        page.raw("</body>\n</html>\n")
        return page.html
    }

    // MARK: - Sections

    static func header(_ run: RunRecord, summary: RunSummary, into page: inout Page) {
        page.raw("<header>\n<h1>Strain run: \(e(run.suite.name))</h1>\n")
        if let description = run.suite.description { page.raw("<p class=\"description\">\(e(description))</p>\n") }
        let unexpected = summary.unexpected.count
        let verdict = unexpected == 0 ? "<span class=\"ok\">every outcome expected</span>" : "<span class=\"bad\">\(unexpected) unexpected</span>"
        page.raw("<p class=\"counts\">\(summary.trialCount) trials: \(verdict). Suite <code>\(e(run.suite.path))</code>, started \(e(run.startedAt)), finished \(e(run.finishedAt)).</p>\n")
        if unexpected > 0 {
            page.raw("<ul class=\"unexpected\">")
            for trial in summary.unexpected {
                page.raw("<li>\(e(trialName(trial))): <b>\(e(trial.outcome.description))</b>, expected \(e(trial.expectedOutcomes.joined(separator: ", ")))")
                if let message = trial.outcome.message { page.raw(" — \(e(message))") }
                page.raw("</li>")
            }
            page.raw("</ul>\n")
        }
        page.raw("</header>\n")
    }

    static func groupSection(_ group: RunSummary.Group, into page: inout Page) {
        page.raw("<article class=\"group\">\n<h3>\(e(group.title))</h3>\n")
        page.raw("<table class=\"comparison\"><thead><tr><th>strategy</th><th>outcome</th><th>median wall</th><th>spread</th><th>peak RSS</th><th>threads</th><th>stack used / size</th><th>depth</th></tr></thead><tbody>\n")
        for row in group.rows {
            let walls = row.trials.compactMap(\.metrics.wallSeconds)
            let spread = walls.count > 1 ? "\(Format.duration(walls.min())) – \(Format.duration(walls.max()))" : "–"
            let depth = row.medianDepth.map { Format.count($0) } ?? row.medianFrames.map { "\(Format.count($0)) frames" } ?? "–"
            let outcome = row.allExpected ? e(row.outcomes) : "<b class=\"bad\">\(e(row.outcomes))</b> (expected \(e(row.trials[0].expectedOutcomes.joined(separator: ", "))))"
            page.raw("<tr\(row.allExpected ? "" : " class=\"unexpected\"")><td>\(e(row.strategy.description))</td><td>\(outcome)</td><td class=\"num\">\(e(Format.duration(row.medianWallSeconds)))</td><td class=\"num\">\(e(spread))</td><td class=\"num\">\(e(Format.bytes(row.medianPeakRSSBytes)))</td><td class=\"num\">\(row.peakThreads.map(String.init) ?? "–")</td><td class=\"num\">\(e(Format.stack(used: row.stackHighWaterBytes, size: row.stackSizeBytes)))</td><td class=\"num\">\(e(depth))</td></tr>\n")
        }
        page.raw("</tbody></table>\n<div class=\"charts\">\n")
        if group.rows.contains(where: { $0.medianWallSeconds != nil }) {
            let bars = group.rows.map { row -> SVGChart.Bar in
                let walls = row.trials.compactMap(\.metrics.wallSeconds)
                return SVGChart.Bar(label: row.strategy.description, value: row.medianWallSeconds, low: walls.min(), high: walls.max(),
                                    note: row.medianWallSeconds == nil ? row.outcomes : nil)
            }
            figure(SVGChart.bars(bars, title: "median wall time (line: min–max across repetitions)", format: { Format.duration($0) }), into: &page)
        }
        if group.rows.contains(where: { $0.medianPeakRSSBytes != nil }) {
            let bars = group.rows.map { SVGChart.Bar(label: $0.strategy.description, value: $0.medianPeakRSSBytes) }
            figure(SVGChart.bars(bars, title: "peak RSS (median)", format: { Format.bytes($0) }), into: &page)
        }
        if group.rows.contains(where: { $0.stackSizeBytes != nil }) {
            let bars = group.rows.map { row -> SVGChart.Bar in
                let overflowed = row.trials.contains { $0.outcome.kind == .stackOverflow }
                return SVGChart.Bar(label: row.strategy.description, value: row.stackHighWaterBytes.map(Double.init), limit: row.stackSizeBytes.map(Double.init),
                                    marked: overflowed, note: overflowed ? "overflowed" : nil)
            }
            figure(SVGChart.bars(bars, title: "stack used (bar) against the stack the thread had (red line); ✕ overflowed", format: { Format.bytes($0) }, limitLabel: "stack size"), into: &page)
        }
        if group.rows.contains(where: { $0.trials.count > 1 }) || group.rows.contains(where: { row in row.trials.contains { $0.outcome.kind != .completed } }) {
            figure(SVGChart.stacked(group.rows.map { ($0.strategy.description, outcomeCounts($0.trials)) }, title: "outcomes across repetitions"), into: &page)
        }
        page.raw("</div>\n</article>\n")
    }

    static func guardTable(_ table: GuardComparison.Table, into page: inout Page) {
        page.raw("<article class=\"group guards\">\n<h3>\(e(table.title))</h3>\n<table class=\"comparison\"><thead><tr>")
        for (index, column) in GuardComparison.header.enumerated() { page.raw("<th\(index >= 3 && index <= 8 ? " class=\"num\"" : "")>\(e(column))</th>") }
        page.raw("</tr></thead><tbody>\n")
        for (index, row) in table.rows.enumerated() {
            let cells = GuardComparison.cells(row, rank: index + 1)
            page.raw("<tr\(row.allExpected ? "" : " class=\"unexpected\"")>")
            for (column, cell) in cells.enumerated() { page.raw("<td\(column >= 3 && column <= 8 ? " class=\"num\"" : "")>\(e(cell))</td>") }
            page.raw("</tr>\n")
        }
        page.raw("</tbody></table>\n<div class=\"charts\">\n")
        let measured = table.rows.filter { $0.medianThroughput != nil }
        // Name rows by guard alone when they share one strategy.
        let oneStrategy = Set(table.rows.map(\.strategy)).count == 1
        let label = { (row: GuardComparison.Row) in oneStrategy ? row.guardName : "\(row.guardName) \(row.strategy)" }
        if !measured.isEmpty {
            let bars = table.rows.map { SVGChart.Bar(label: label($0), value: $0.medianThroughput, note: $0.medianThroughput == nil ? $0.outcomes : nil) }
            figure(SVGChart.bars(bars, title: "throughput (median, operations per second)", format: { Format.rate($0) }), into: &page)
            // Percentile curves on a "nines" axis: 90 → 1, 99 → 2, 99.9 → 3.
            let series = measured.prefix(8).compactMap { row -> SVGChart.Series? in
                guard let latency = row.trials.compactMap(\.metrics.latency).first else { return nil }
                let points = latency.curve.filter { $0.percentile < 100 && $0.nanoseconds > 0 }.map { (x: nines($0.percentile), y: Double($0.nanoseconds)) }
                return SVGChart.Series(name: label(row), points: points)
            }
            figure(SVGChart.lines(series, title: "latency by percentile (first repetition)", xLabel: "percentile", yLabel: "latency",
                                  logY: true, formatX: { nineLabel($0) }, formatY: { Format.nanoseconds($0) }, xTicks: [0, 0.301, 1, 2, 3, 4]), into: &page)
        }
        figure(SVGChart.stacked(table.rows.map { (label($0), outcomeCounts($0.trials)) }, title: "outcomes across repetitions"), into: &page)
        page.raw("</div>\n</article>\n")
    }

    /// Time and memory against each numeric parameter swept with three or more values.
    static func sweeps(_ trials: [TrialRecord], into page: inout Page) {
        let names = Set(trials.flatMap(\.parameters.keys)).sorted()
        for name in names {
            let values = Set(trials.compactMap { number($0.parameters[name]) })
            guard values.count >= 3 else { continue }
            var rest: [[String: String]] = []
            for trial in trials {
                var others = trial.parameters
                others[name] = nil
                if !rest.contains(others) { rest.append(others) }
            }
            for others in rest {
                let members = trials.filter { trial in
                    var remaining = trial.parameters
                    remaining[name] = nil
                    return remaining == others && number(trial.parameters[name]) != nil
                }
                let keys = members.map { "\($0.strategy) \($0.profile)" }.reduce(into: [String]()) { if !$0.contains($1) { $0.append($1) } }
                func series(_ metric: (TrialRecord) -> Double?) -> [(SVGChart.Series, GrowthFit?)] {
                    keys.compactMap { key in
                        let byValue = Dictionary(grouping: members.filter { "\($0.strategy) \($0.profile)" == key }) { number($0.parameters[name])! }
                        let points = byValue.keys.sorted().compactMap { x in Statistics.median(byValue[x]!.compactMap(metric)).map { (x: x, y: $0) } }
                        guard points.count >= 2 else { return nil }
                        return (SVGChart.Series(name: key, points: points), GrowthFit(points))
                    }
                }
                let time = series { $0.metrics.wallSeconds }
                let memory = series { $0.metrics.peakRSSBytes.map(Double.init) }
                guard !time.isEmpty || !memory.isEmpty else { continue }
                let fixed = others.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: ", ")
                page.raw("<article class=\"group sweep\">\n<h3>\(e(members[0].scenario)): growth with \(e(name))\(fixed.isEmpty ? "" : " (\(e(fixed)))")</h3>\n<ul class=\"fits\">")
                for (line, fit) in time { if let fit { page.raw("<li>\(e(line.name)): <b>\(e(fit.description(of: "time", over: name)))</b></li>") } }
                for (line, fit) in memory { if let fit { page.raw("<li>\(e(line.name)): \(e(fit.description(of: "peak RSS", over: name)))</li>") } }
                page.raw("</ul>\n<div class=\"charts\">\n")
                if !time.isEmpty {
                    figure(SVGChart.lines(time.map(\.0), title: "median wall time against \(name) (log–log)", xLabel: name, yLabel: "wall time",
                                          logX: true, logY: true, formatX: { Format.count($0) }, formatY: { Format.duration($0) }), into: &page)
                }
                if !memory.isEmpty {
                    figure(SVGChart.lines(memory.map(\.0), title: "peak RSS against \(name) (log–log)", xLabel: name, yLabel: "peak RSS",
                                          logX: true, logY: true, formatX: { Format.count($0) }, formatY: { Format.bytes($0) }), into: &page)
                }
                page.raw("</div>\n</article>\n")
            }
        }
    }

    /// Thread count over time for stalled trials and trials that started many threads.
    static func timelines(_ trials: [TrialRecord], into page: inout Page) {
        var seen = Set<String>()
        let chosen = trials.filter { trial in
            guard let timeline = trial.threadTimeline, timeline.count > 1 else { return false }
            guard trial.stall != nil || (timeline.map(\.threads).max() ?? 0) >= 16 else { return false }
            return seen.insert("\(trial.parameters.sorted { $0.key < $1.key })|\(trial.strategy)|\(trial.profile)").inserted
        }
        guard !chosen.isEmpty else { return }
        page.raw("<article class=\"group timelines\">\n<h3>\(e(chosen[0].scenario)): threads over time</h3>\n<div class=\"charts\">\n")
        for trial in chosen.prefix(12) {
            let points = trial.threadTimeline!.map { (x: $0.seconds, y: Double($0.threads)) }
            let label = "\(trial.strategy) \(trial.profile): \(trial.outcome.description)"
            let svg = SVGChart.lines([SVGChart.Series(name: trial.strategy.description, points: points)], title: label,
                                     xLabel: "seconds since the child started", yLabel: "threads",
                                     formatX: { String(format: "%.2f", $0) }, formatY: { String(format: "%.0f", $0) }, step: true)
            page.raw("<figure>\(svg)<figcaption>\(e(parameterText(trial)))</figcaption></figure>\n")
        }
        page.raw("</div>\n</article>\n")
    }

    static func verdicts(_ run: RunRecord, into page: inout Page) {
        let stack = StackVerdict.verdicts(for: run)
        let caps = DumpText.capVerdicts(run)
        let reference = ReferenceComparison.lines(run)
        guard !stack.isEmpty || !caps.isEmpty || !reference.isEmpty else { return }
        page.raw("<section id=\"verdicts\">\n<h2>Verdicts</h2>\n<ul>")
        for verdict in stack { page.raw("<li><b>\(e(verdict.title))</b>: \(e(verdict.explanation))</li>") }
        for (trial, verdict) in caps { page.raw("<li><b>\(e(trial))</b>: \(e(verdict.message))</li>") }
        for line in reference { page.raw("<li>pthread_mutex lock/unlock, the harness against a C loop: \(e(line))</li>") }
        page.raw("</ul>\n</section>\n")
    }

    static func traces(_ run: RunRecord, into page: inout Page) {
        let traced = MarkdownReport.distinctTraces(run)
        guard !traced.isEmpty else { return }
        page.raw("<section id=\"traces\">\n<h2>Traces</h2>\n")
        for trial in traced {
            guard let trace = trial.trace else { continue }
            page.raw("<details class=\"trace\"><summary>\(e(trialName(trial))): \(e(TraceText.headline(trace)))</summary>\n<ol class=\"frames\">")
            let cycleStart = trace.cycle?.startIndex ?? Int.max
            for (index, frame) in trace.firstFrames.prefix(min(cycleStart, trace.firstFrames.count)).enumerated() { frameItem(frame, index: index, into: &page) }
            if let cycle = trace.cycle {
                page.raw("<li class=\"cycle\"><details><summary>⟳ a cycle of \(cycle.frames.count) frames, repeated \(e(Format.count(Double(cycle.repetitions)))) times</summary><ol class=\"frames\">")
                for (index, frame) in cycle.frames.enumerated() { frameItem(frame, index: index, into: &page) }
                page.raw("</ol></details></li>")
            }
            if trace.omittedFrames > 0 || trace.cycle != nil {
                page.raw("<li class=\"gap\">… \(e(Format.count(Double(trace.totalFrames - trace.firstFrames.count - trace.lastFrames.count)))) more frames …</li>")
            }
            let lastStart = trace.totalFrames - trace.lastFrames.count
            for (offset, frame) in trace.lastFrames.enumerated() { frameItem(frame, index: lastStart + offset, into: &page) }
            page.raw("</ol></details>\n")
        }
        page.raw("</section>\n")
    }

    static func stalls(_ run: RunRecord, into page: inout Page) {
        let stalled = DumpText.distinctStalls(run)
        guard !stalled.isEmpty else { return }
        page.raw("<section id=\"stalls\">\n<h2>Stalls</h2>\n")
        if let summary = DumpText.watchdogSummary(run) { page.raw("<p>\(e(summary)).</p>\n") }
        for trial in stalled {
            guard let dump = trial.dump else { continue }
            page.raw("<details class=\"dump\" open><summary>\(e(trialName(trial))): \(e(DumpText.headline(trial)))</summary>\n")
            if let cycle = dump.waitCycle { page.raw("<p class=\"cycle\">Wait cycle: \(e(cycle.description))</p>\n") }
            for group in dump.groups {
                page.raw("<details class=\"thread-group\"><summary>\(e(DumpText.group(group)))</summary>\n")
                let threads = group.threads.map { "\($0.tid) \($0.name) (\($0.state)\($0.wait.map { ", " + $0 } ?? "")\($0.viaPtrace ? ", ptrace" : ""))" }
                page.raw("<p class=\"threads\">\(e(threads.joined(separator: "; ")))</p><ol class=\"frames\">")
                for (index, frame) in group.frames.enumerated() { frameItem(frame, index: index, into: &page) }
                page.raw("</ol></details>\n")
            }
            page.raw("</details>\n")
        }
        page.raw("</section>\n")
    }

    static func environment(_ run: RunRecord, into page: inout Page) {
        let environment = run.environment
        page.raw("<section id=\"environment\">\n<h2>Environment</h2>\n<table class=\"environment\"><tbody>")
        let rows: [(String, String)] = [
            ("host", environment.host), ("cores", "\(environment.cores)"), ("memory", Format.bytes(Double(environment.memoryBytes))),
            ("kernel", environment.kernel), ("architecture", environment.architecture), ("Swift", environment.swiftVersion),
            ("commit", environment.gitCommit ?? "–"), ("Strain", run.strainVersion),
            ("rlimits", environment.rlimits.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value < 0 ? "unlimited" : String($0.value))" }.joined(separator: ", ")),
            ("runner peak RSS", Format.bytes(Double(run.runnerPeakRSSBytes))),
        ]
        for (name, value) in rows { page.raw("<tr><th>\(e(name))</th><td>\(e(value))</td></tr>") }
        page.raw("</tbody></table>\n<h3>The suite as run</h3>\n<pre class=\"suite\">")
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        if let data = try? encoder.encode(run.suite) { page.raw(e(String(decoding: data, as: UTF8.self))) }
        page.raw("</pre>\n</section>\n")
    }

    // MARK: - Pieces

    struct Page {
        var html = ""
        mutating func raw(_ text: String) { html += text }
    }

    static func e(_ text: String) -> String { HTMLText.escape(text) }

    static func figure(_ svg: String, into page: inout Page) {
        guard !svg.isEmpty else { return }
        page.raw("<figure>\(svg)</figure>\n")
    }

    static func frameItem(_ frame: Frame, index: Int, into page: inout Page) {
        let name = frame.symbol ?? String(format: "0x%llx", frame.address)
        var module = "?"
        if let path = frame.module { module = path.split(separator: "/").last.map(String.init) ?? path }
        let offset = frame.moduleOffset.map { String(format: "+0x%llx", $0) } ?? ""
        page.raw("<li value=\"\(index)\"><span class=\"symbol\">\(e(name))</span> <span class=\"module\">\(e(module))\(e(offset))</span></li>")
    }

    static func outcomeCounts(_ trials: [TrialRecord]) -> [(name: String, count: Int)] {
        var counts: [(name: String, count: Int)] = []
        for trial in trials {
            let name = trial.outcome.description
            if let index = counts.firstIndex(where: { $0.name == name }) { counts[index].count += 1 } else { counts.append((name, 1)) }
        }
        return counts
    }

    static func trialName(_ trial: TrialRecord) -> String {
        "\(trial.scenario)\(trial.parameters.isEmpty ? "" : "[\(parameterText(trial))]") \(trial.strategy) \(trial.profile) #\(trial.repetition)"
    }

    static func parameterText(_ trial: TrialRecord) -> String {
        trial.parameters.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: ", ")
    }

    /// A parameter value as a finite number (`nan` and `inf` parse, but are not points).
    static func number(_ text: String?) -> Double? {
        text.flatMap(Double.init).flatMap { $0.isFinite ? $0 : nil }
    }

    static func nines(_ percentile: Double) -> Double { percentile >= 100 ? 6 : -log10(1 - percentile / 100) }

    static func nineLabel(_ value: Double) -> String {
        let percentile = (1 - pow(10, -value)) * 100
        return value < 0.05 ? "p0" : String(format: percentile >= 99.9 ? "p%.2f" : "p%.0f", percentile).replacingOccurrences(of: ".00", with: "")
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
    svg .muted{fill:#999}svg .overflow-mark{fill:#c1121f;font-weight:700}svg .in-bar{fill:#fff;font-size:10px}
    details{margin:4px 0}summary{cursor:pointer}ol.frames{margin:4px 0 8px;padding-left:42px;overflow-x:auto}ol.frames li{white-space:nowrap}
    .module{color:#777}.cycle>details>summary{color:#7b2cbf;font-weight:600}li.gap{list-style:none;color:#777}
    .thread-group>summary{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:12px}p.threads{color:#555;font-size:12px;margin:2px 0 2px 18px}
    figcaption{font-size:11px;color:#555;max-width:560px}pre.suite{background:#f5f5f7;padding:10px;overflow:auto;max-height:420px}ul.fits{margin:2px 0 8px}
    """
}
