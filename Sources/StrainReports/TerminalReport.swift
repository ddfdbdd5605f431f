import Foundation
import StrainRecords

/// What a run prints: a line per finished trial, then a compact table per
/// scenario, the verdicts, the traces' headlines and the paths written.
package struct TerminalReport: Sendable {
    /// Whether to use colour (a terminal, and NO_COLOR unset).
    package var color: Bool

    package init(color: Bool) { self.color = color }

    /// `[ 3/12] ok   cyclic-graph[…] thread(512KiB) ios #1  stackOverflow  12.3 ms`.
    package func trialLine(_ trial: TrialRecord, index: Int, total: Int) -> String {
        let width = String(total).count
        let position = String(repeating: " ", count: max(0, width - String(index).count)) + "\(index)"
        let mark = trial.expected ? paint("ok ", 32) : paint("!! ", 31)
        let time = Format.duration(trial.metrics.wallSeconds ?? trial.metrics.trialSeconds)
        var line = "[\(position)/\(total)] \(mark) \(trial.id)  \(trial.outcome)  \(time)"
        if !trial.expected, let reason = CrashReason.message(for: trial) { line += "  — \(reason)" }
        return line
    }

    /// `[######······] 12/35  0:08 left  next: sync-cycle gcd-serial linux #1`:
    /// the line a terminal shows while a run goes on, at most `columns - 1`
    /// characters wide (a line as wide as the terminal wraps on some), the next
    /// trial's name shortened first. `secondsLeft` is the estimate to show.
    package func progressLine(done: Int, total: Int, elapsedSeconds: Double, next: String?, width: Int = 24,
                             secondsLeft: Double? = nil, columns: Int = .max) -> String {
        let budget = max(10, columns == .max ? .max : columns - 1)
        var barWidth = width
        // A narrow terminal gets a shorter bar before it loses the count.
        let count = " \(done)/\(total)"
        if barWidth + 2 + count.count > budget { barWidth = max(4, budget - 2 - count.count) }
        let filled = total > 0 ? min(barWidth, done * barWidth / total) : barWidth
        let bar = String(repeating: "#", count: filled) + String(repeating: "·", count: barWidth - filled)
        var line = "[\(bar)]\(count)"
        if done > 0, done < total {
            let left = secondsLeft ?? elapsedSeconds / Double(done) * Double(total - done)
            let text = "  \(Self.clock(left)) left"
            if line.count + text.count <= budget { line += text }
        }
        if let next {
            let label = "  next: "
            let room = budget - line.count - label.count
            if room >= next.count {
                line += label + next
            } else if room >= 8 {
                line += label + next.prefix(room - 1) + "…"
            }
        }
        return String(line.prefix(budget))
    }

    /// `1:05`, `0:08`.
    static func clock(_ seconds: Double) -> String {
        let whole = Int(seconds.rounded())
        return String(format: "%d:%02d", whole / 60, whole % 60)
    }

    package func render(_ run: RunRecord) -> String {
        let summary = RunSummary(run)
        var lines: [String] = []
        for group in summary.groups where !GuardComparison.covers(group, in: run) {
            lines.append("")
            lines.append(paint(group.title, 1))
            let counted = group.countsAllocations
            let header = ["strategy", "outcome", "median wall", "peak RSS", "threads", "stack used / size", "depth"] + (counted ? ["allocations"] : [])
            var rows: [[String]] = []
            for row in group.rows {
                let depth = row.medianDepth.map { Format.count($0) } ?? row.medianFrames.map { "\(Format.count($0)) frames" } ?? "–"
                rows.append([row.strategy.description, row.outcomes, Format.duration(row.medianWallSeconds), Format.bytes(row.medianPeakRSSBytes),
                             row.peakThreads.map(String.init) ?? "–", Format.stack(used: row.stackHighWaterBytes, size: row.stackSizeBytes), depth]
                            + (counted ? [row.allocationsText] : []))
            }
            let widths = header.indices.map { column in ([header] + rows).map { $0[column].count }.max() ?? 0 }
            func line(_ cells: [String]) -> String {
                cells.enumerated().map { column, cell in
                    let pad = String(repeating: " ", count: widths[column] - cell.count)
                    return column >= 2 ? pad + cell : cell + pad
                }.joined(separator: "  ")
            }
            lines.append("  " + line(header))
            for (row, cells) in zip(group.rows, rows) {
                let text = "  " + line(cells)
                lines.append(row.allExpected ? text : paint(text + "   (expected \(row.trials[0].expectedOutcomes.joined(separator: ", ")))", 31))
                if !row.allExpected, let reason = row.trials.lazy.compactMap({ CrashReason.message(for: $0) }).first {
                    lines.append(paint("    reason: \(reason)", 31))
                }
            }
        }
        for table in GuardComparison(run).tables {
            lines.append("")
            lines.append(paint(table.title, 1))
            let rows = table.rows.enumerated().map { GuardComparison.cells($0.element, rank: $0.offset + 1) }
            let header = table.header
            let widths = header.indices.map { column in ([header] + rows).map { $0[column].count }.max() ?? 0 }
            func line(_ cells: [String]) -> String {
                cells.enumerated().map { column, cell in
                    let pad = String(repeating: " ", count: widths[column] - cell.count)
                    if column == cells.count - 1 { return cell }
                    return (3...8).contains(column) ? pad + cell : cell + pad
                }.joined(separator: "  ")
            }
            lines.append("  " + line(header))
            for (row, cells) in zip(table.rows, rows) {
                let text = "  " + line(cells)
                lines.append(row.allExpected ? text : paint(text + "   (expected \(row.trials[0].expectedOutcomes.joined(separator: ", ")))", 31))
            }
        }
        for table in DeclaredMetrics(run).tables {
            lines.append("")
            lines.append(paint(table.title + ": the scenario's metrics", 1))
            let widths = table.header.indices.map { column in ([table.header] + table.rows).map { $0[column].count }.max() ?? 0 }
            for cells in [table.header] + table.rows {
                lines.append("  " + cells.enumerated().map { column, cell in
                    let pad = String(repeating: " ", count: widths[column] - cell.count)
                    return column == 0 ? cell + pad : pad + cell
                }.joined(separator: "  "))
            }
        }
        let reference = ReferenceComparison.lines(run)
        if !reference.isEmpty {
            lines.append("")
            lines.append(paint("pthread_mutex lock/unlock, uncontended: the harness against a C loop", 1))
            lines += reference.map { "  " + $0 }
        }
        let verdicts = StackVerdict.verdicts(for: run)
        if !verdicts.isEmpty {
            lines.append("")
            lines.append(paint("Stack verdicts", 1))
            for verdict in verdicts { lines.append("  \(verdict.title): \(verdict.explanation)") }
        }
        let traced = MarkdownReport.distinctTraces(run)
        if !traced.isEmpty {
            lines.append("")
            lines.append(paint("Traces", 1))
            for trial in traced {
                guard let trace = trial.trace else { continue }
                lines.append("  \(trial.key): \(TraceText.headline(trace))")
                if let reason = CrashReason.message(for: trial) { lines.append("    reason: \(reason)") }
                if let cycle = trace.cycle {
                    if let fault = trace.firstFrames.first { lines.append("    fault: #0  \(fault.displayName)") }
                    lines.append("    cycle: \(TraceText.cycle(cycle))")
                    let layout = TraceLayout(trace)
                    if let entry = layout.entry {
                        lines.append("    entered from: #\(Format.count(Double(entry.index)))  \(entry.frame.displayName)")
                        // When the entry is still the runtime's, the first frame with a source location after it is the caller's code.
                        if entry.frame.location == nil, let user = layout.firstLocated(after: entry.index) {
                            lines.append("    called from: #\(Format.count(Double(user.index)))  \(user.frame.displayName)")
                        }
                    }
                } else if let first = trace.firstFrames.first {
                    lines.append("    at: \(first.displayName)")
                    if let point = TraceText.pointOfFailure(trace), point != first, let index = trace.firstFrames.firstIndex(of: point) {
                        lines.append("    in: #\(index)  \(point.displayName)")
                    }
                }
                if let note = trace.sourceLocations?.note { lines.append("    (\(note))") }
            }
        }
        lines += confinementLines(run)
        lines += ProcessFaultText.terminalLines(run, paint: paint)
        lines += sanitizerLines(run)
        let stalls = DumpText.distinctStalls(run)
        if !stalls.isEmpty {
            lines.append("")
            lines.append(paint("Stalls", 1))
            if let summary = DumpText.watchdogSummary(run) { lines.append("  \(summary)") }
            for trial in stalls {
                guard let dump = trial.dump else { continue }
                lines.append("  \(trial.key): \(DumpText.headline(trial))")
                if let cycle = dump.waitCycle { lines.append("    cycle: \(cycle.description)") }
                for group in dump.groups.prefix(4) { lines.append("    \(DumpText.group(group))") }
                if dump.groups.count > 4 { lines.append("    … \(dump.groups.count - 4) more groups in run.json") }
            }
        }
        let caps = DumpText.capVerdicts(run)
        if !caps.isEmpty {
            lines.append("")
            lines.append(paint("Thread caps", 1))
            for (key, verdict) in caps { lines.append("  \(key): \(verdict.message)") }
        }
        let sweeps = GrowthSweep.sweeps(run)
        if !sweeps.isEmpty {
            lines.append("")
            lines.append(paint("Growth", 1))
            for sweep in sweeps {
                lines.append("  \(sweep.title)")
                for fit in sweep.fitLines { lines.append("    \(fit)") }
            }
        }
        lines.append("")
        let unexpected = summary.unexpected.count
        lines.append("\(summary.trialCount) trials: " + (unexpected == 0 ? paint("every outcome expected", 32) : paint("\(unexpected) unexpected", 31))
                     + (run.interrupted == true ? paint(run.interruptionNote, 31) : ""))
        lines += Self.failingKeys(run).map { "  " + $0 }
        return lines.joined(separator: "\n")
    }

    /// What a failing run ends with: its failing keys, each once with its outcomes
    /// counted (`noop main ios: completed ×2 of 3; expects crashed`); at most ten, then how many more.
    static func failingKeys(_ run: RunRecord, limit: Int = 10) -> [String] {
        let keys = FailedKeys(run).keys
        var lines = keys.prefix(limit).map { "\($0.key): \(FailedKeys.line($0))" }
        if keys.count > limit { lines.append("… and \(keys.count - limit) more keys: run.json and the reports list them all") }
        return lines
    }

    /// Text safe for a terminal: a run's own strings (an error message, a
    /// symbol) lose every control character but tab and newline, so they can
    /// neither move the cursor nor retitle the window; only this report's
    /// colours, `ESC [ digits m`, and the line clear `ESC [ 2K` pass.
    package static func safe(_ text: String) -> String {
        var out = ""
        var scalars = text.unicodeScalars[...]
        while let scalar = scalars.popFirst() {
            if scalar == "\u{1B}" {
                let rest = String(String.UnicodeScalarView(scalars.prefix(4)))
                if let match = rest.firstMatch(of: /^\[(\d{1,2}m|2K)/) {
                    out += "\u{1B}" + match.0
                    scalars = scalars.dropFirst(match.0.unicodeScalars.count)
                }
                continue
            }
            if scalar.value < 0x20 && scalar != "\n" && scalar != "\t" && scalar != "\r" || scalar.value == 0x7F { continue }
            out.unicodeScalars.append(scalar)
        }
        return out
    }

    func paint(_ text: String, _ code: Int) -> String {
        color ? "\u{1B}[\(code)m\(text)\u{1B}[0m" : text
    }
}

/// The time a run has left, from how long its trials took: the mean of the
/// trials so far blended with the mean of the last few, so a run whose later
/// trials are slower (stalls waiting out their threshold) or faster corrects its
/// estimate as they finish.
package struct ProgressEstimate: Sendable {
    private var finishes: [Double] = []
    /// Trials the recent mean looks back over.
    package var window = 8

    package init() {}

    /// Notes that a trial finished `elapsedSeconds` after the run started.
    package mutating func finished(atElapsed elapsedSeconds: Double) {
        finishes.append(elapsedSeconds)
    }

    /// Seconds left for `remaining` trials; nil before the first trial finished.
    package func secondsLeft(remaining: Int) -> Double? {
        guard let last = finishes.last, !finishes.isEmpty else { return nil }
        let overall = last / Double(finishes.count)
        let recentCount = min(window, finishes.count)
        let recentStart = finishes.count > recentCount ? finishes[finishes.count - recentCount - 1] : 0
        let recent = (last - recentStart) / Double(recentCount)
        return Double(remaining) * (overall + recent) / 2
    }
}
