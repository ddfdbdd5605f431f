import Foundation
import StrainRecords

/// What a run prints: a line per finished trial, then a compact table per
/// scenario, the verdicts, the traces' headlines and the paths written.
public struct TerminalReport: Sendable {
    /// Whether to use colour (a terminal, and NO_COLOR unset).
    public var color: Bool

    public init(color: Bool) { self.color = color }

    /// `[ 3/12] ok   cyclic-graph[…] thread(512KiB) ios #1  stackOverflow  12.3 ms`.
    public func trialLine(_ trial: TrialRecord, index: Int, total: Int) -> String {
        let width = String(total).count
        let position = String(repeating: " ", count: max(0, width - String(index).count)) + "\(index)"
        let mark = trial.expected ? paint("ok ", 32) : paint("!! ", 31)
        let parameters = trial.parameters.isEmpty ? "" : "[" + trial.parameters.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: ",") + "]"
        let time = Format.duration(trial.metrics.wallSeconds ?? trial.metrics.trialSeconds)
        return "[\(position)/\(total)] \(mark) \(trial.scenario)\(parameters) \(trial.strategy) \(trial.profile) #\(trial.repetition)  \(trial.outcome)  \(time)"
    }

    /// `[######······] 12/35  0:08 left  next: sync-cycle gcd-serial linux #1`:
    /// the line a terminal shows while a run goes on.
    public func progressLine(done: Int, total: Int, elapsedSeconds: Double, next: String?, width: Int = 24) -> String {
        let filled = total > 0 ? min(width, done * width / total) : width
        let bar = String(repeating: "#", count: filled) + String(repeating: "·", count: width - filled)
        var line = "[\(bar)] \(done)/\(total)"
        if done > 0, done < total {
            let left = elapsedSeconds / Double(done) * Double(total - done)
            line += "  \(Self.clock(left)) left"
        }
        if let next { line += "  next: \(next)" }
        return line
    }

    /// `1:05`, `0:08`.
    static func clock(_ seconds: Double) -> String {
        let whole = Int(seconds.rounded())
        return String(format: "%d:%02d", whole / 60, whole % 60)
    }

    public func render(_ run: RunRecord) -> String {
        let summary = RunSummary(run)
        var lines: [String] = []
        for group in summary.groups where !GuardComparison.covers(group, in: run) {
            lines.append("")
            lines.append(paint(group.title, 1))
            let header = ["strategy", "outcome", "median wall", "peak RSS", "threads", "stack used / size", "depth"]
            var rows: [[String]] = []
            for row in group.rows {
                let depth = row.medianDepth.map { Format.count($0) } ?? row.medianFrames.map { "\(Format.count($0)) frames" } ?? "–"
                rows.append([row.strategy.description, row.outcomes, Format.duration(row.medianWallSeconds), Format.bytes(row.medianPeakRSSBytes),
                             row.peakThreads.map(String.init) ?? "–", Format.stack(used: row.stackHighWaterBytes, size: row.stackSizeBytes), depth])
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
            }
        }
        for table in GuardComparison(run).tables {
            lines.append("")
            lines.append(paint(table.title, 1))
            let rows = table.rows.enumerated().map { GuardComparison.cells($0.element, rank: $0.offset + 1) }
            let header = GuardComparison.header
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
                lines.append("  \(trial.scenario) \(trial.strategy) \(trial.profile): \(TraceText.headline(trace))")
                if let cycle = trace.cycle { lines.append("    cycle: \(TraceText.cycle(cycle))") }
                else if let first = trace.firstFrames.first { lines.append("    at: \(first.displayName)") }
            }
        }
        lines += confinementLines(run)
        let stalls = DumpText.distinctStalls(run)
        if !stalls.isEmpty {
            lines.append("")
            lines.append(paint("Stalls", 1))
            if let summary = DumpText.watchdogSummary(run) { lines.append("  \(summary)") }
            for trial in stalls {
                guard let dump = trial.dump else { continue }
                lines.append("  \(trial.scenario) \(trial.strategy) \(trial.profile): \(DumpText.headline(trial))")
                if let cycle = dump.waitCycle { lines.append("    cycle: \(cycle.description)") }
                for group in dump.groups.prefix(4) { lines.append("    \(DumpText.group(group))") }
                if dump.groups.count > 4 { lines.append("    … \(dump.groups.count - 4) more groups in run.json") }
            }
        }
        let caps = DumpText.capVerdicts(run)
        if !caps.isEmpty {
            lines.append("")
            lines.append(paint("Thread caps", 1))
            for (trial, verdict) in caps { lines.append("  \(trial): \(verdict.message)") }
        }
        lines.append("")
        let unexpected = summary.unexpected.count
        lines.append("\(summary.trialCount) trials: " + (unexpected == 0 ? paint("every outcome expected", 32) : paint("\(unexpected) unexpected", 31)))
        return lines.joined(separator: "\n")
    }

    /// Text safe for a terminal: a run's own strings (an error message, a
    /// symbol) lose every control character but tab and newline, so they can
    /// neither move the cursor nor retitle the window; only this report's
    /// colours, `ESC [ digits m`, and the line clear `ESC [ 2K` pass.
    public static func safe(_ text: String) -> String {
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
