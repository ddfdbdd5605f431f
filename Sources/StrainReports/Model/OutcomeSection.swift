import StrainRecords
import StrainText

/// A table per comparison group (scenario, parameters, profile): a row per
/// strategy with its outcomes and medians, formatted once.
package struct OutcomeSection: TextSection {
    /// One strategy's trials in a group.
    package struct Row: Sendable {
        /// strategy, outcome, median wall, peak RSS, threads, stack used / size, depth, and allocations and instructions where counted.
        package var cells: [String]
        /// `12.1 ms – 14.0 ms` across repetitions, or `–`.
        package var spread: String
        /// Whether every trial ended as the suite expects.
        package var allExpected: Bool
        /// `completed, crashed`: what the suite expects.
        package var expected: String
        /// The first unexpected trial's reason, when it has one.
        package var reason: String?
        /// The summary's row, for the page's charts.
        package var source: RunSummary.Row
    }

    /// One comparison group.
    package struct Table: Sendable {
        /// `cyclic-graph[operation=archive, size=200] on ios`.
        package var title: String
        /// The scenario the page files it under.
        package var scenario: String
        /// The column names.
        package var header: [String]
        /// A row per strategy, in run order.
        package var rows: [Row]
        /// What the page draws under the table, each chart on its own axis.
        package var charts: [Chart]
        /// A sentence under the table explaining a cell (`– / 8.0 MiB`), when one needs it.
        package var note: String?

        /// strategy and outcome on the left, the numbers on the right.
        var alignments: [TextTable.Alignment] { [.left, .left] + Array(repeating: .right, count: header.count - 2) }
    }

    /// The groups, in run order.
    package var tables: [Table]

    init(_ groups: [RunSummary.Group]) {
        tables = groups.map { group in
            let counted = group.countsAllocations
            let instructions = group.countsInstructions
            let header = ["strategy", "outcome", "median wall", "peak RSS", "threads", "stack used / size", "depth"]
                + (counted ? ["allocations"] : []) + (instructions ? ["instructions"] : [])
            let rows = group.rows.map { row -> Row in
                let depth = row.medianDepth.map { Format.count($0) } ?? row.medianFrames.map { "\(Format.count($0)) frames" } ?? "–"
                let walls = row.trials.compactMap(\.metrics.wallSeconds)
                let cells = [row.strategy.description, row.outcomes, Format.duration(row.medianWallSeconds), Format.bytes(row.medianPeakRSSBytes),
                             row.peakThreads.map(String.init) ?? "–", Format.stack(used: row.stackHighWaterBytes, size: row.stackSizeBytes), depth]
                    + (counted ? [row.allocationsText] : []) + (instructions ? [row.instructionsText] : [])
                return Row(cells: cells, spread: walls.count > 1 ? "\(Format.duration(walls.min())) – \(Format.duration(walls.max()))" : "–",
                           allExpected: row.allExpected, expected: row.trials[0].expectedOutcomes.joined(separator: ", "),
                           reason: row.allExpected ? nil : row.trials.lazy.compactMap { CrashReason.message(for: $0) }.first, source: row)
            }
            let unmeasured = group.rows.contains { $0.stackHighWaterBytes == nil && $0.stackSizeBytes != nil }
            return Table(title: group.title, scenario: group.scenario, header: header, rows: rows, charts: Self.charts(group),
                         note: unmeasured ? Format.stackNotMeasured : nil)
        }
    }

    package func terminalLines(_ style: TerminalStyle) -> [String] {
        tables.flatMap { table -> [String] in
            let laid = TextTable(header: table.header, alignments: table.alignments, rows: table.rows.map(\.cells)).terminalLines(width: style.width)
            var lines = style.heading(table.title) + laid.header
            for (row, rowLines) in zip(table.rows, laid.rows) {
                guard !row.allExpected else { lines += rowLines; continue }
                lines += style.unexpected(rowLines, note: "(expected \(row.expected))")
                if let reason = row.reason { lines.append(style.paint("    reason: \(reason)", 31)) }
            }
            if let note = table.note { lines += style.fit("  " + note, hanging: 2) }
            return lines
        }
    }

    package func markdown() -> String {
        tables.map { table in
            let rows = table.rows.map { row in
                var cells = row.cells.map(Markdown.escape)
                if !row.allExpected { cells[1] = "**\(cells[1])** (expected \(Markdown.escape(row.expected)))" }
                return cells
            }
            return "## \(Markdown.escape(table.title))\n\n" + TextTable(header: table.header, alignments: table.alignments, rows: rows).markdown() + "\n"
                + (table.note.map { "\(Markdown.escape($0))\n\n" } ?? "")
        }.joined()
    }
}
