import StrainRecords
import StrainText

/// The metrics the scenarios declared for themselves, per group: medians per strategy.
package struct MetricsSection: TextSection {
    /// A table per group whose trials recorded declared metrics.
    package var tables: [DeclaredMetrics.Table]

    static func alignments(_ table: DeclaredMetrics.Table) -> [TextTable.Alignment] {
        [.left] + Array(repeating: .right, count: table.header.count - 1)
    }

    package func terminalLines(_ style: TerminalStyle) -> [String] {
        tables.flatMap { table -> [String] in
            let laid = TextTable(header: table.header, alignments: Self.alignments(table), rows: table.rows).terminalLines(width: style.width)
            return style.heading(table.title + ": the scenario's metrics") + laid.header + laid.rows.flatMap { $0 }
        }
    }

    /// summary.md names the tables and leaves them to report.html: a table per
    /// comparison of numbers that decide nothing took 3,600 of the default suite's
    /// characters, which a pull-request comment is short of.
    package func markdown() -> String {
        guard !tables.isEmpty else { return "" }
        let scenarios = Array(Set(tables.map(\.scenario))).sorted().map(Markdown.escape).joined(separator: ", ")
        return "## The scenarios' own metrics\n\n\(tables.count == 1 ? "1 table" : "\(tables.count) tables") (\(scenarios)), a row per strategy, "
            + "in report.html; every value is in run.json (`metrics.custom` of each trial), and in metrics.csv with `--format csv`.\n\n"
    }
}
