import Foundation
import StrainRecords
import StrainText

/// What a run prints: a line per finished trial, then a compact table per
/// scenario, the verdicts, the traces' headlines and the paths written.
package struct TerminalReport: Sendable {
    /// Colour or not, and the width tables fit.
    package var style: TerminalStyle

    /// With `color` when writing to a terminal with NO_COLOR unset; `columns`, the
    /// window's width, when tables should fit it (nil: whole lines). A line as wide
    /// as the window wraps on some terminals, so tables keep one column short, as
    /// the progress line does.
    package init(color: Bool, columns: Int? = nil) {
        style = TerminalStyle(color: color, width: columns.map { $0 - 1 })
    }

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

    /// `text`, each of its lines fitted to the window between words (see ``TerminalStyle/fit(_:)``).
    package func fit(_ text: String) -> String {
        text.split(separator: "\n", omittingEmptySubsequences: false).flatMap { style.fit(String($0)) }.joined(separator: "\n")
    }

    /// `1:05`, `0:08`.
    static func clock(_ seconds: Double) -> String {
        let whole = Int(seconds.rounded())
        return String(format: "%d:%02d", whole / 60, whole % 60)
    }

    package func render(_ run: RunRecord) -> String { render(RunReport(run)) }

    /// The model laid out for the terminal: every section in order, then the
    /// count and the failing keys, so the last lines a run prints say what failed.
    package func render(_ report: RunReport) -> String {
        var lines = report.terminalSections.flatMap { $0.terminalLines(style) }
        lines.append("")
        let head = report.head
        lines.append("\(counted(head.trialCount, "trial")): " + (head.unexpectedCount == 0 ? paint("every outcome expected", 32) : paint("\(head.unexpectedCount) unexpected\(head.harnessErrorNote)", 31))
                     + (head.interruption.map { paint($0, 31) } ?? ""))
        lines += report.failed.recap().map { "  " + $0 }
        // Every line fits the window, broken between words (tables have fitted theirs already).
        return lines.flatMap { style.fit($0) }.joined(separator: "\n")
    }

    func paint(_ text: String, _ code: Int) -> String { style.paint(text, code) }
}
