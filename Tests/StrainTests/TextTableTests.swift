import Foundation
import StrainKit
import StrainReports
import StrainText
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

    @Test func aTableWiderThanTheWindowWrapsBetweenWordsThenMovesItsWidestColumnUnderEachRow() {
        // At 70 the cells wrap between words and every column stays in the table.
        let wrapped = Self.table.terminalLines(width: 70)
        let wrappedLines = wrapped.header + wrapped.rows.flatMap { $0 }
        #expect(wrappedLines.allSatisfy { $0.count <= 70 }, "\(wrappedLines.joined(separator: "\n"))")
        #expect(wrapped.rows[1][0].hasPrefix("  task-executor(64, 512KiB)  2 completed, "), "the first column whole: \(wrapped.rows[1])")
        #expect(wrapped.rows[1][1].contains("1 stackOverflow"), "the outcome wraps between its words: \(wrapped.rows[1])")
        // At 60 the words cannot sit side by side: the widest column past the strategy and the
        // outcome goes under each row.
        let laid = Self.table.terminalLines(width: 60)
        let lines = laid.header + laid.rows.flatMap { $0 }
        #expect(lines.allSatisfy { $0.count <= 60 }, "\(lines.joined(separator: "\n"))")
        // (The stack column's `/ 512 KiB` is its narrowest: a lone `/` is never a line of its own.)
        #expect(laid.header == ["  strategy                   outcome             median wall"], "\(laid.header)")
        #expect(laid.rows[1] == ["  task-executor(64, 512KiB)  2 completed,            12.3 ms", "                             1 stackOverflow",
                                 "      stack used / size: 511 KiB / 512 KiB"], "\(laid.rows[1])")
        #expect(!lines.contains { $0.hasSuffix(" ") }, "no trailing blanks")
    }

    /// A stack cell wrapped after its `/` (`68 KiB /`), and the row's next column went on
    /// beside it: `68 KiB /     41`, the 41 a depth. The `/` starts the size's line instead.
    @Test func aSlashStartsTheLineOfWhatComesAfterIt() {
        #expect(TextTable.words("68 KiB / 8 MiB") == ["68 KiB", "/ 8 MiB"])
        #expect(TextTable.words("16 KiB / 12.4 k allocs") == ["16 KiB", "/ 12.4 k allocs"])
        #expect(TextTable.wrap("68 KiB / 8 MiB", width: 8) == ["68 KiB", "/ 8 MiB"])
        #expect(TextTable.words("a /") == ["a /"] && TextTable.words("/ b") == ["/", "b"])
        let table = TextTable(header: ["strategy", "stack", "depth"], alignments: [.left, .right, .right],
                              rows: [["gcd-global", "68 KiB / 8 MiB", "41"]])
        let laid = table.terminalLines(width: 30)
        #expect(laid.rows[0].allSatisfy { !$0.contains("/ ") || $0.contains("/ 8 MiB") } && !laid.rows[0].contains { $0.contains("KiB /") }, "\(laid.rows[0])")
    }

    @Test func aWordLongerThanItsWidthStaysWhole() {
        #expect(TextTable.wrap("abcdefghij", width: 4) == ["abcdefghij"])
        #expect(TextTable.wrap("ab abcdefghij cd", width: 4) == ["ab", "abcdefghij", "cd"])
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
            let (result, _, _) = try await StrainBinary.runSuiteLeavingNothing("name: narrow\nruns:\n  - scenario: noop\n    strategies: [main, gcd-global, thread(512KiB)]\n",
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

/// What a reader takes as one unit stays on one line at 80 columns: an operator and its
/// number (`× 631`, `≤ 620`), `closure #1`, and a `/` with the size before it.
@Suite struct UnitsOnOneLineTests {
    @Test func aFittedLineNeverEndsOnAnOperatorOrOnClosure() {
        // 52: the line ends just after `×` unless the count comes along.
        let style = TerminalStyle(color: false, width: 52)
        let trace = "        NSCoding.init(coder:) [witness] → NSKeyedUnarchiver._decodeObject(_:) × 631"
        let lines = style.fit(trace)
        #expect(lines.last?.hasSuffix("× 631") == true && !lines.contains { $0.hasSuffix("×") }, "\(lines)")
        let bisect = "  cyclic-graph (games=4, operation=unarchive, shape=chain): size ≤ 620 completes"
        #expect(!style.fit(bisect).contains { $0.hasSuffix("≤") }, "\(style.fit(bisect))")
        let frames = "        CooperativeStarvationScenario.run(on:context:) ← closure #1 in closure #1 in f"
        let fitted = style.fit(frames)
        #expect(!fitted.contains { $0.hasSuffix("closure") || $0.hasSuffix("×") }, "\(fitted)")
    }

    /// A count keeps what it counts (`4 threads`, `29,114 frames`), `not` its word (`not
    /// judged`), and a command its short option (`build -c release`): a re-trial saw
    /// `; 4` / `threads dumped`, `0 not` / `judged` and `(swift build` / `-c release)`.
    @Test func aCountKeepsItsNounAndACommandItsOption() {
        let style = TerminalStyle(color: false, width: 30)
        // Each line's natural break at 30 falls inside the pair.
        let cases = [("  a dump of a stalled run; 4 threads dumped", "4 threads"), ("  the whole trace held 29,114 frames", "29,114 frames"),
                     ("  counted: 6 judged, 0 not judged", "0 not judged"), ("  build it first (swift build -c release)", "(swift build -c release)")]
        for (line, together) in cases {
            let fitted = style.fit(line)
            #expect(fitted.count > 1 && fitted.contains { $0.contains(together) }, "\(fitted)")
        }
        // Only a short option joins: a long command still breaks between its words.
        let command = style.fit("  strain gate --baseline-binary A --candidate-binary B suite.yaml")
        #expect(command.allSatisfy { $0.count <= 30 }, "\(command)")
    }

    /// A symbol longer than a line (a C++ template, a Swift method with many labels) goes
    /// on after a `<`, `,`, `(` or a label's `:`, never inside a name; a path stays whole.
    @Test func aSymbolLongerThanALineBreaksAfterPunctuationNeverInsideAName() {
        let style = TerminalStyle(color: false, width: 80)
        let cxx = "        __swift::__runtime::llvm::hashing::detail::hash_combine_range_impl<swift::TargetMetadata<swift::InProcess>>(char*,char*)"
        let swift = "        FloodThenProbe.run(context:submit:waitForStartsSeconds:beforeProbe:submitProbe:block:)"
        for line in [cxx, swift] {
            let fitted = style.fit(line)
            #expect(fitted.count > 1 && fitted.allSatisfy { $0.count <= 80 }, "\(fitted)")
            #expect(fitted.dropFirst().allSatisfy { $0.hasPrefix("            ") }, "continued under the first line's indent: \(fitted)")
            // Joined again without their indents, the parts are the symbol: no character lost or cut.
            #expect(fitted[0] + fitted.dropFirst().map { String($0.drop { $0 == " " }) }.joined() == line, "\(fitted)")
            for part in fitted.dropLast() {
                #expect(part.last.map { "<,(:".contains($0) } == true, "a part ends at a symbol's break: \(fitted)")
            }
        }
        #expect(style.fit(cxx)[0].hasSuffix("hash_combine_range_impl<"), "the last break that fits: \(style.fit(cxx))")
        // A qualified name is one name: never broken after its `::` (a re-trial saw `llvm::` / `hash_code`).
        let qualified = "        fault: #0  __swift::__runtime::llvm::hash_combine<__swift::__runtime::llvm::hash_code,__swift::__runtime::llvm::StringRef>"
        let parts = style.fit(qualified)
        #expect(parts.count > 1 && !parts.contains { $0.hasSuffix("::") }, "\(parts)")
        let path = "        /very/long/" + String(repeating: "folder/", count: 12) + "File.swift:123"
        #expect(style.fit(path) == [path], "a path has no symbol break: it stays whole")
    }

    /// A number stays with its unit, and `+` with its number (a re-trial saw `(threshold +` /
    /// `7.26 ms)` and `dumped in 5.65` / `ms (ptrace)`).
    @Test func aNumberKeepsItsUnitAndAnOperatorItsNumber() {
        let stalls = "  4 caught by the heartbeat watchdog: last heartbeat to outcome recorded, median 407.3 ms (threshold + 7.26 ms); their dumps took a median 489 µs, of 4 threads"
        let dumped = "  crash[kind=lock-order] gcd-global linux: deadlocked; 6 threads dumped in 5.65 ms (ptrace)"
        for width in 60...90 {
            let style = TerminalStyle(color: false, width: width)
            for line in [stalls, dumped] {
                let fitted = style.fit(line)
                #expect(!fitted.contains { $0.hasSuffix("+") || $0.hasSuffix("5.65") || $0.hasSuffix("7.26") || $0.hasSuffix("407.3") || $0.hasSuffix(" 489") },
                        "width \(width): \(fitted)")
                #expect(!fitted.dropFirst().contains { ["ms", "ms)", "µs", "7.26"].contains($0.trimmingCharacters(in: .whitespaces).split(separator: " ").first.map(String.init) ?? "") },
                        "width \(width): no line starts with a lone unit: \(fitted)")
            }
        }
    }

    /// A count stays with what it is out of (a phone showed `(3 of` / `3 repetitions)`,
    /// `timedOut ×1 of` / `1` and `37` / `of 101 units`), on the terminal and in HTML.
    @Test func aCountKeepsWhatItIsOutOf() {
        for line in ["  completes up to 620 (3 of 3 repetitions) on thread(512KiB)", "  noop main linux: timedOut ×1 of 1; expects completed", "  then 37 of 101 units ran before the probe"] {
            for width in 30...60 {
                let fitted = TerminalStyle(color: false, width: width).fit(line)
                #expect(!fitted.contains { $0.hasSuffix(" of") || $0.hasSuffix("(3") || $0.hasSuffix("×1") || $0.hasSuffix(" 37") }, "width \(width): \(fitted)")
            }
        }
        #expect(MarkupText.keepingHyphenatedWordsWhole("<p>up to 620 (3 of 3 repetitions), timedOut ×1 of 1, 37 of 101 units</p>")
            == "<p>up to 620 <span class=\"nb\">(3 of 3 repetitions),</span> timedOut <span class=\"nb\">×1 of 1,</span> <span class=\"nb\">37 of 101 units</span></p>")
    }

    @Test func aStackCellFoldsIntoTwoLinesNotThreeWithALoneSlash() {
        let table = TextTable(header: ["strategy", "outcome", "stack used / size"], alignments: [.left, .left, .right],
                              rows: [["gcd-global", "completed", "1.6 MiB / 8.0 MiB"]])
        let laid = table.terminalLines(width: 32)
        #expect(!(laid.header + laid.rows[0]).contains { $0.trimmingCharacters(in: .whitespaces) == "/" }, "\(laid.header + laid.rows[0])")
    }
}
