import Foundation
import StrainRecords
import StrainText

extension GateReport {
    /// Every metric that decides or explains the verdict, worst rows first.
    var shownRows: [RowComparison] {
        rows.filter { !$0.isUnchangedThroughout || $0.metrics.contains { $0.verdict == .improved } }
            .sorted { $0.verdict.severity > $1.verdict.severity }
    }

    /// The terminal's summary: the conclusion, what failed and why (with the path of
    /// each changed outcome's evidence under `directory`, the gate's output folder),
    /// what was inconclusive.
    package func renderText(directory: String? = nil) -> String {
        let place = { (file: String) in directory.map { ($0 as NSString).appendingPathComponent(file) } ?? file }
        var lines: [String] = []
        let modeText = mode == .crossRun ? "cross-run against \(baselineName ?? "a stored baseline")"
            : schedule?.counted == true ? "counted A/B, each build's repetitions in one run" : "interleaved A/B"
        lines.append("Gate (\(modeText)) on \(suite): \(conclusion)")
        if let timed = schedule?.timedScenarios, !timed.isEmpty { lines.append("  Not countable, so timed in alternating rounds: \(timed.joined(separator: ", ")).") }
        if let sides = sidesSentence(code: { $0 }) { lines.append("  " + sides) }
        // `warning: the two sides …`, lowercase after the prefix as every `error:` is (gate.md's callout keeps its capital).
        for warning in warnings ?? [] { lines.append("  warning: \(warning.prefix(1).lowercased() + warning.dropFirst())") }
        for difference in fingerprint {
            lines.append("  \(difference.hard ? "machine differs" : "note"): \(difference.field) \(difference.baseline) → \(difference.candidate)")
        }
        // Failing rows in full; improved, fixed, new and missing rows with what changed;
        // inconclusive ones counted by reason (gate.json, gate.md and gate.html have each).
        for row in shownRows where row.verdict != .inconclusive {
            lines.append("  \(row.verdict.label.uppercased()) \(row.key)")
            if let reason = row.outcomeReason { lines.append("      outcome: \(reason)") }
            if let evidence = row.evidence {
                // The link as gate.md and gate.html give it, then the folder they are in: the
                // folder and link in one word ran to 130 columns and past any window.
                lines.append("      evidence: \(evidence.trial) at \(evidence.link)\(directory.map { " in \($0)" } ?? "")")
                lines.append("        \(evidence.line)")
                if let advice = evidence.advice { lines.append("      what to do: \(advice)") }
            }
            for metric in row.metrics where metric.verdict.fails || metric.verdict == .improved {
                lines.append("      \(MetricDescriptor.displayName(of: metric.metric)): \(metric.reason)\(Self.statistics(metric))")
                for site in metric.grewAt ?? [] { lines.append("        grew at \(site)") }
            }
        }
        // Metrics counted by why, as gate.md and gate.html list them: "3 rows inconclusive
        // (3 cross-run timings …)" sat beside gate.md's nine inconclusive metrics.
        var reasons: [String: Int] = [:]
        var inconclusiveMetrics = 0
        for row in rows where row.verdict == .inconclusive {
            for metric in row.metrics where metric.verdict == .inconclusive {
                reasons[Self.reasonKind(metric.reason), default: 0] += 1
                inconclusiveMetrics += 1
            }
        }
        let inconclusive = rows.filter { $0.verdict == .inconclusive }.count
        if inconclusive > 0 {
            // The most frequent reason first, ties by name: the same line every time.
            let why = reasons.sorted { $0.value == $1.value ? $0.key < $1.key : $0.value > $1.value }.map { "\($0.value) \($0.key)" }.joined(separator: "; ")
            // The floor says something only to rows that are below it.
            let advice = reasons["too few repetitions"] != nil ? "; a timing row can fail only with ≥ \(requiredRepetitions) repetitions per side here" : ""
            let metrics = inconclusiveMetrics == inconclusive ? "" : " in \(inconclusiveMetrics) metrics"
            lines.append("  \(inconclusive) row\(inconclusive == 1 ? "" : "s") inconclusive\(metrics) (\(why))\(advice)")
            // Named, the first few: which rows to give more repetitions.
            let named = rows.filter { $0.verdict == .inconclusive }
            for row in named.prefix(Self.inconclusiveShown) {
                // Metrics grouped by why: `wall, cpu (too few repetitions)`.
                var byReason: [(reason: String, metrics: [String])] = []
                for metric in row.metrics where metric.verdict == .inconclusive {
                    let reason = Self.reasonKind(metric.reason)
                    if let at = byReason.firstIndex(where: { $0.reason == reason }) { byReason[at].metrics.append(MetricDescriptor.displayName(of: metric.metric)) } else { byReason.append((reason, [MetricDescriptor.displayName(of: metric.metric)])) }
                }
                lines.append("    \(row.key): " + byReason.map { "\($0.metrics.joined(separator: ", ")) (\($0.reason))" }.joined(separator: "; "))
            }
            if named.count > Self.inconclusiveShown {
                lines.append("    and \(named.count - Self.inconclusiveShown) more: gate.md and gate.html name each")
            }
        }
        // A row is inconclusive when any of its metrics is: say what the counted ones decided.
        let counted = rows.flatMap(\.metrics).filter { $0.noise == .counted }
        let judged = counted.filter { $0.verdict != .inconclusive && $0.verdict != .notGated }
        if !counted.isEmpty {
            let verdicts = Dictionary(grouping: judged, by: \.verdict.label).sorted { $0.key < $1.key }.map { "\($0.value.count) \($0.key)" }.joined(separator: ", ")
            let names = Set(counted.map(\.metric)).sorted().joined(separator: ", ")
            lines.append("  counted metrics (\(names)): \(judged.count) judged\(verdicts.isEmpty ? "" : " (\(verdicts))"), \(counted.count - judged.count) not judged")
        }
        lines.append("  " + tally)
        if let runReports, !runReports.isEmpty { lines.append("  each side's report: \(runReports.map(place).joined(separator: ", "))") }
        // A cross-run gate keeps only the candidate's run: "each side's" named one file.
        if let runFiles, !runFiles.isEmpty {
            lines.append(runFiles.count == 1 ? "  the candidate's run: \(runFiles[0]) (strain report renders it)"
                : "  each side's run: \(runFiles.joined(separator: ", ")) (strain report renders either)")
        }
        return lines.joined(separator: "\n")
    }

    /// The gate's counts in one sentence that every output shows, so they agree: trials
    /// (a trial takes the worst verdict of its outcome and metrics), then the metrics
    /// of those trials by their own verdicts. "5 unchanged" among the counted metrics and
    /// "0 unchanged" trials were both true and read as a contradiction.
    package var tally: String {
        let unchanged = rows.filter(\.isUnchangedThroughout).count
        let metrics = rows.flatMap(\.metrics)
        let byVerdict = GateVerdict.allCases.compactMap { verdict -> String? in
            let count = metrics.filter { $0.verdict == verdict }.count
            return count == 0 ? nil : "\(count) \(verdict.label)"
        }
        // Whose metrics: every trial's, not the unchanged ones' ("their" read as theirs).
        let counted = "\(metrics.count) metric\(metrics.count == 1 ? "" : "s")"
        let whose = rows.count == 1 ? "its \(counted)" : "the \(counted) of all \(rows.count)"
        // A row is a trial key, its repetitions pooled: "2 trials compared" read as two trials where 6 ran on each side, and an
        // A/A gate's "0 unchanged" alarmed where its metrics were only inconclusive (re-trial 35q, F17).
        let inconclusive = metrics.contains { $0.verdict == .inconclusive } && unchanged < rows.count
        let trials = "\(rows.count) trial key\(rows.count == 1 ? "" : "s") compared, \(unchanged) unchanged in every metric and outcome"
            + (inconclusive ? " (a key with an inconclusive metric is not counted unchanged); " : "; ")
        // `the 0 metrics of all 2: none.` said nothing a reader could use (re-trial 35m).
        guard !metrics.isEmpty else { return trials + "no metric compared (only outcomes)." }
        return trials + "\(whose): \(byVerdict.joined(separator: ", "))."
    }

    /// Inconclusive rows the terminal names; the rest are counted.
    static let inconclusiveShown = 8

    /// An inconclusive metric's reason without its numbers, for counting.
    static func reasonKind(_ reason: String) -> String {
        if reason.hasPrefix("too few repetitions") { return "too few repetitions" }
        if reason.hasPrefix("the machines differ") { return "machines differ" }
        if isUncalibrated(reason) { return "cross-run measurements not calibrated" }
        if reason.hasPrefix("counted, but not judged: the work ran on") { return "counted, not judged: the work ran on several workers at once" }
        if reason.hasPrefix("not counted on the candidate") { return "not counted on the candidate" }
        if reason.hasPrefix("not counted on the baseline") { return "not counted on the baseline" }
        if reason.hasPrefix("estimated worse") { return "estimated worse beyond δ but not beyond the noise: more repetitions would decide" }
        return reason
    }

    /// ` [n 10/10, Hodges–Lehmann ratio 1.31 (1.25–1.38), q 0.0004, δ 10% from suite]`.
    static func statistics(_ metric: MetricComparison) -> String {
        var parts = ["n \(metric.baselineCount)/\(metric.candidateCount)"]
        if let ratio = metric.ratio {
            var text = String(format: "Hodges–Lehmann ratio %.3f", ratio)
            if let low = metric.ratioLow, let high = metric.ratioHigh { text += String(format: " (95%% %.3f–%.3f)", low, high) }
            parts.append(text)
        }
        if let q = metric.qValue { parts.append(String(format: "q %.3g", q)) }
        parts.append("δ \(Gate.percent(metric.delta)), floor \(Gate.format(metric.floor, metric.unit)) from \(metric.thresholdSource)")
        return " [\(parts.joined(separator: ", "))]"
    }

    /// `completed ×9, crashed(SIGABRT) ×1`.
    package static func histogramText(_ counts: [String: Int]) -> String {
        counts.isEmpty ? "–" : counts.sorted { $0.value == $1.value ? $0.key < $1.key : $0.value > $1.value }.map { "\($0.key) ×\($0.value)" }.joined(separator: ", ")
    }

    /// gate.json's bytes.
    package func encoded() throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return try encoder.encode(self)
    }
}
