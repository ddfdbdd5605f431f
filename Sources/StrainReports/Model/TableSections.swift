import StrainRecords

/// A table per comparison group (scenario, parameters, profile): a row per
/// strategy with its outcomes and medians, formatted once.
package struct OutcomeSection: TextSection {
    package struct Row: Sendable {
        /// strategy, outcome, median wall, peak RSS, threads, stack used / size, depth, and allocations where counted.
        package var cells: [String]
        /// `12.1 ms – 14.0 ms` across repetitions, or `–`.
        package var spread: String
        package var allExpected: Bool
        /// `completed, crashed`: what the suite expects.
        package var expected: String
        /// The first unexpected trial's reason, when it has one.
        package var reason: String?
        /// The summary's row, for the page's charts.
        package var source: RunSummary.Row
    }

    package struct Table: Sendable {
        /// `cyclic-graph (operation=archive, size=200) on ios`.
        package var title: String
        package var scenario: String
        package var header: [String]
        package var rows: [Row]
        /// The summary's group, for the page's charts.
        package var group: RunSummary.Group

        /// strategy and outcome on the left, the numbers on the right.
        var alignments: [TextTable.Alignment] { [.left, .left] + Array(repeating: .right, count: header.count - 2) }
    }

    package var tables: [Table]

    init(_ groups: [RunSummary.Group]) {
        tables = groups.map { group in
            let counted = group.countsAllocations
            let header = ["strategy", "outcome", "median wall", "peak RSS", "threads", "stack used / size", "depth"] + (counted ? ["allocations"] : [])
            let rows = group.rows.map { row -> Row in
                let depth = row.medianDepth.map { Format.count($0) } ?? row.medianFrames.map { "\(Format.count($0)) frames" } ?? "–"
                let walls = row.trials.compactMap(\.metrics.wallSeconds)
                let cells = [row.strategy.description, row.outcomes, Format.duration(row.medianWallSeconds), Format.bytes(row.medianPeakRSSBytes),
                             row.peakThreads.map(String.init) ?? "–", Format.stack(used: row.stackHighWaterBytes, size: row.stackSizeBytes), depth]
                    + (counted ? [row.allocationsText] : [])
                return Row(cells: cells, spread: walls.count > 1 ? "\(Format.duration(walls.min())) – \(Format.duration(walls.max()))" : "–",
                           allExpected: row.allExpected, expected: row.trials[0].expectedOutcomes.joined(separator: ", "),
                           reason: row.allExpected ? nil : row.trials.lazy.compactMap { CrashReason.message(for: $0) }.first, source: row)
            }
            return Table(title: group.title, scenario: group.scenario, header: header, rows: rows, group: group)
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
        }.joined()
    }
}

/// The rankings the run's scenarios asked for ("which guard should I use"): a
/// table per ranking and group of the other parameters, best first.
package struct RankingSection: TextSection {
    package struct Table: Sendable {
        package var title: String
        package var scenario: String
        package var header: [String]
        /// A row's cells: rank, value, strategy, the metric, p50, p99, p99.9, fairness, together, outcomes.
        package var cells: [[String]]
        /// The comparison's table, for the page's charts.
        package var source: GuardComparison.Table

        static let alignments: [TextTable.Alignment] = [.right, .left, .left] + Array(repeating: .right, count: 6) + [.left]
    }

    package var tables: [Table]

    init(_ comparison: GuardComparison) {
        tables = comparison.tables.map { table in
            Table(title: table.title, scenario: table.scenario, header: table.header,
                  cells: table.rows.enumerated().map { GuardComparison.cells($0.element, rank: $0.offset + 1) }, source: table)
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
            return lines
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
        }.joined()
    }
}

/// The metrics the scenarios declared for themselves, per group: medians per strategy.
package struct MetricsSection: TextSection {
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
