import Foundation
import StrainKit
import StrainReports
import Testing

/// The one text-table helper behind the terminal and Markdown tables.
@Suite struct TextTableTests {
    static let table = TextTable(
        header: ["strategy", "outcome", "median wall", "stack used / size"], alignments: [.left, .left, .right, .right],
        rows: [["thread(512KiB)", "completed", "1.2 ms", "12 KiB / 512 KiB"],
               ["task-executor(64, 512KiB)", "2 completed, 1 stackOverflow", "12.3 ms", "511 KiB / 512 KiB"]])

    @Test func withoutAWidthEachColumnIsAsWideAsItsWidestCellAndNumbersAlignRight() {
        let laid = Self.table.terminalLines()
        let lines = laid.header + laid.rows.flatMap { $0 }
        #expect(lines == [
            "  strategy                   outcome                       median wall  stack used / size",
            "  thread(512KiB)             completed                          1.2 ms   12 KiB / 512 KiB",
            "  task-executor(64, 512KiB)  2 completed, 1 stackOverflow      12.3 ms  511 KiB / 512 KiB",
        ], "\(lines.joined(separator: "\n"))")
    }

    @Test func aTableWiderThanTheWindowWrapsItsWidestColumnsAtSpacesAndEveryLineFits() {
        let laid = Self.table.terminalLines(width: 60)
        let lines = laid.header + laid.rows.flatMap { $0 }
        #expect(lines.allSatisfy { $0.count <= 60 }, "\(lines.joined(separator: "\n"))")
        // The long cells wrap onto the row's next lines, at spaces where a word fits.
        #expect(laid.rows[1][0].hasPrefix("  task-executor( "), "a word longer than the column breaks: \(laid.rows[1])")
        #expect(laid.rows[1][1].hasPrefix("  64, 512KiB) "), "\(laid.rows[1])")
        let second = laid.rows[1].joined(separator: " ")
        for word in ["completed,", "stackOverflow", "12.3", "511", "KiB"] {
            #expect(second.contains(word), "\(word) in \(laid.rows[1])")
        }
        #expect(laid.rows[1].count > 1, "the long row takes more than one line")
        #expect(!lines.contains { $0.hasSuffix(" ") }, "no trailing blanks")
    }

    @Test func aWordLongerThanItsColumnBreaksMidWord() {
        #expect(TextTable.wrap("abcdefghij", width: 4) == ["abcd", "efgh", "ij"])
        #expect(TextTable.wrap("ab cd ef", width: 5) == ["ab cd", "ef"])
        #expect(TextTable.wrap("short", width: 10) == ["short"])
    }

    @Test func theMarkdownTableHasItsAlignmentRow() {
        #expect(Self.table.markdown() == """
            | strategy | outcome | median wall | stack used / size |
            | --- | --- | ---: | ---: |
            | thread(512KiB) | completed | 1.2 ms | 12 KiB / 512 KiB |
            | task-executor(64, 512KiB) | 2 completed, 1 stackOverflow | 12.3 ms | 511 KiB / 512 KiB |

            """)
    }

    /// The fixture's tables at 80 columns: every line of every table fits 79.
    @Test func theFixturesTablesFitAnEightyColumnWindow() throws {
        let report = RunReport(try ReportTests.fixture())
        let style = TerminalStyle(color: false, width: 79)
        let tables: [any TextSection] = [report.outcomes, report.rankings, report.metrics]
        let lines = tables.flatMap { $0.terminalLines(style) }
        #expect(lines.count > 20)
        let wide = lines.filter { $0.count > 79 }
        #expect(wide.isEmpty, "\(wide.joined(separator: "\n"))")
        let unfitted = tables.flatMap { $0.terminalLines(TerminalStyle(color: false)) }
        #expect(unfitted.contains { $0.count > 79 }, "the fixture has tables wider than 80 columns to fit")
    }
}

/// `strain run`'s closing tables, as a user reads them in a narrow window.
@Suite(.timeLimit(.minutes(10))) struct TerminalWidthTests {
    @Test func aRunsTablesFitTheWidthColumnsGives() async throws {
        // At 80 columns values stay whole; at 60 words break, but no line overflows.
        for columns in [80, 60] {
            let (result, _, _) = try await StrainBinary.runSuite("name: narrow\nruns:\n  - scenario: noop\n    strategies: [main, gcd-global, thread(512KiB)]\n",
                                                           environment: ["COLUMNS": "\(columns)"])
            #expect(result.status == 0, "\(result.stderr)")
            let lines = result.stdout.components(separatedBy: "\n")
            let heading = try #require(lines.firstIndex { $0 == "noop on linux" }, "\(result.stdout)")
            let table = lines[(heading + 1)...].prefix { !$0.isEmpty }
            #expect(table.count >= 4, "a header and three strategies: \(table)")
            #expect(table.allSatisfy { $0.count <= columns - 1 }, "every line fits \(columns) columns:\n\(table.joined(separator: "\n"))")
            if columns == 80 {
                for strategy in ["main", "gcd-global", "thread(512KiB)"] {
                    #expect(table.contains { $0.hasPrefix("  \(strategy) ") }, "\(strategy) has its row whole:\n\(table.joined(separator: "\n"))")
                }
            }
        }
    }
}

extension TextTableTests {
    @Test func aTableTooWideForTheWindowLeavesOutItsColumnsOfDashesFirst() {
        let table = TextTable(header: ["strategy", "outcome", "stack used / size", "median wall"], alignments: [.left, .left, .right, .right],
                              rows: [["gcd-global", "starved", "–", "1.14 s"], ["thread(512KiB)", "completed", "–", "18.0 ms"]])
        let laid = table.terminalLines(width: 40)
        #expect(laid.header == ["  strategy        outcome    median wall"], "\(laid.header)")
        #expect(laid.rows.map { $0.joined() } == ["  gcd-global      starved         1.14 s", "  thread(512KiB)  completed      18.0 ms"])
        #expect(table.terminalLines().header[0].contains("stack used / size"), "a table that fits keeps every column")
    }
}
