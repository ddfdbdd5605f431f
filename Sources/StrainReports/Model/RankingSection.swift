import StrainRecords
import StrainText

/// The rankings the run's scenarios asked for ("which guard should I use"): a
/// table per ranking and group of the other parameters, best first.
package struct RankingSection: TextSection {
    /// One ranking over one group of the other parameters.
    package struct Table: Sendable {
        /// `contended-collection[workers=8] on linux: guards by throughput`.
        package var title: String
        /// The scenario the page files it under.
        package var scenario: String
        /// The column names.
        package var header: [String]
        /// A row's cells: rank, value, strategy, the metric, p50, p99, p99.9, fairness, together, outcomes.
        package var cells: [[String]]
        /// The comparison's table.
        package var source: GuardComparison.Table
        /// What the page draws under the table.
        package var charts: [Chart]

        static let alignments: [TextTable.Alignment] = [.right, .left, .left] + Array(repeating: .right, count: 6) + [.left]

        /// What the columns a reader cannot guess mean (`fairness` and `together` were
        /// explained nowhere, and a column of `p99.9` dashes only under report.html's chart).
        package var note: String { Self.note(shown: header) }

        /// The note for the columns a view shows (the terminal drops `p99.9` where it has no room).
        package static func note(shown columns: [String]) -> String {
            [("fairness", "Jain's index of the operations each worker did (1.00 when all did as many, 1/workers when one did all)"),
             ("together", "the workers there when the work began, of those asked for"),
             ("p99.9", "– where a trial had fewer than 2,000 samples")]
                .filter { columns.contains($0.0) }.map { "\($0.0): \($0.1)." }.joined(separator: " ")
        }
    }

    /// The tables, in the order the rankings are named.
    package var tables: [Table]

    init(_ comparison: GuardComparison) {
        tables = comparison.tables.map { table in
            Table(title: table.title, scenario: table.scenario, header: table.header,
                  cells: table.rows.enumerated().map { GuardComparison.cells($0.element, rank: $0.offset + 1) }, source: table,
                  charts: Self.charts(table))
        }
    }

    package func terminalLines(_ style: TerminalStyle) -> [String] {
        tables.flatMap { table -> [String] in
            let laid = TextTable(header: table.header, alignments: Table.alignments, rows: table.cells).terminalLines(width: style.width)
            var lines = style.heading(table.title) + laid.header
            for (row, rowLines) in zip(table.source.rows, laid.rows) {
                guard !row.allExpected else { lines += rowLines; continue }
                let expected = row.trials[0].expectedOutcomes.joined(separator: ", ")
                lines += style.unexpected(rowLines, note: "(expected \(expected))")
            }
            // A column of dashes left out for width is not explained; one moved under its rows is.
            let words = Set(laid.header.flatMap { $0.split(separator: " ").map(String.init) })
            let moved = laid.rows.joined().joined(separator: "\n")
            // No note, no line (a table whose only row crashed left a line of two spaces: re-trial 35p, F7).
            let note = Table.note(shown: table.header.filter { words.contains($0) || moved.contains("\($0): ") })
            return lines + (note.isEmpty ? [] : style.fit("  " + note, hanging: 2))
        }
    }

    package func markdown() -> String {
        tables.map { table in
            let rows = zip(table.source.rows, table.cells).map { row, cells in
                var cells = cells.map(Markdown.escape)
                if !row.allExpected { cells[9] = "**\(cells[9])** (expected \(Markdown.escape(row.trials[0].expectedOutcomes.joined(separator: ", "))))" }
                return cells
            }
            return "## \(Markdown.escape(table.title))\n\n"
                + TextTable(header: table.header.map(Markdown.escape), alignments: Table.alignments, rows: rows).markdown() + "\n"
                + Markdown.escape(table.note) + "\n\n"
        }.joined()
    }
}
