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

    package func markdown() -> String {
        tables.map { table in
            "## \(Markdown.escape(table.title)): the scenario's metrics\n\n"
                + TextTable(header: table.header.map(Markdown.escape), alignments: Self.alignments(table), rows: table.rows.map { $0.map(Markdown.escape) }).markdown() + "\n"
        }.joined()
    }
}
