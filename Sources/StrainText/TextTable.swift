/// A table of text cells laid out once for the terminal and for Markdown: each
/// column's width and alignment are decided here, not by each report. In the
/// terminal a table wider than the window never splits a word: it wraps its
/// widest columns between words, and when the words themselves do not fit side
/// by side it moves its widest columns under each row (`depth: 1,234 frames`),
/// as cargo and hyperfine do, instead of letting the terminal cut a line mid-word.
package struct TextTable: Sendable {
    /// Where a column's cells sit: text on the left, numbers on the right.
    package enum Alignment: Sendable {
        case left, right
    }

    /// The column names.
    package var header: [String]
    /// Each column's alignment.
    package var alignments: [Alignment]
    /// The rows, a cell per column.
    package var rows: [[String]]

    /// A row's cells moved under it to fit a window: each column's name and the cell.
    var under: [[(name: String, cell: String)]]

    /// A table whose rows each have one cell per header column.
    package init(header: [String], alignments: [Alignment], rows: [[String]]) {
        precondition(alignments.count == header.count && rows.allSatisfy { $0.count == header.count }, "a cell per column")
        self.header = header
        self.alignments = alignments
        self.rows = rows
        under = rows.map { _ in [] }
    }

    static let gap = "  "
    /// How far a cell moved under its row is indented past the table's indent.
    static let underIndent = "    "

    /// The table without `columns`: kept out (`moved` false), or each row's cells
    /// of them moved under the row.
    func without(_ columns: [Int], moved: Bool) -> TextTable {
        let kept = header.indices.filter { !columns.contains($0) }
        var table = TextTable(header: kept.map { header[$0] }, alignments: kept.map { alignments[$0] }, rows: rows.map { row in kept.map { row[$0] } })
        table.under = rows.indices.map { index in under[index] + (moved ? columns.map { (header[$0], rows[index][$0]) } : []) }
        return table
    }

    /// The header's lines, then each row's lines (more than one when a cell
    /// wraps, or a cell moved under the row), each after `indent`. Right-aligned
    /// columns are padded on the left; a left-aligned last column is not padded.
    /// With `width`, a table too wide for it leaves out its columns of dashes,
    /// then narrows its widest columns, breaking cells only between words (a
    /// number kept with its unit, the first column whole), then moves its widest
    /// column past the first two under each row, until a line is at most `width`
    /// characters. A single word wider than the window stays whole.
    package func terminalLines(indent: String = "  ", width: Int? = nil) -> (header: [String], rows: [[String]]) {
        var widths = header.indices.map { column in ([header] + rows).map { $0[column].count }.max() ?? 0 }
        if let width {
            let budget = width - indent.count - Self.gap.count * max(0, header.count - 1)
            // Too wide: first leave out the columns with nothing in them (every cell `–`).
            let empty = header.indices.filter { column in !rows.isEmpty && rows.allSatisfy { $0[column] == "–" || $0[column].isEmpty } }
            if widths.reduce(0, +) > budget, !empty.isEmpty, empty.count < header.count {
                return without(empty, moved: false).terminalLines(indent: indent, width: width)
            }
            // The narrowest each column gets without breaking a word (a number stays with
            // its unit); the first column, which names the row, whole while it can be.
            let floors = header.indices.map { column in ([header] + rows).flatMap { Self.words($0[column]).map(\.count) }.max() ?? 0 }
            var firstWhole = floors
            firstWhole[0] = widths[0]
            // Narrow the widest column a character at a time, so the cut is spread over the
            // wide columns, down to each column's floor.
            func narrow(to floor: [Int]) {
                while widths.reduce(0, +) > budget, let widest = widths.indices.filter({ widths[$0] > floor[$0] }).max(by: { widths[$0] < widths[$1] }) {
                    widths[widest] -= 1
                }
            }
            narrow(to: firstWhole)
            // Still too wide: the words do not fit side by side. The widest column past the
            // first two (what the row is and how it ended), else the second, goes under each
            // row, and the rest is laid out again.
            if widths.reduce(0, +) > budget, header.count > 1 {
                let widest = header.indices.dropFirst(header.count > 2 ? 2 : 1).max { floors[$0] < floors[$1] }!
                return without([widest], moved: true).terminalLines(indent: indent, width: width)
            }
            narrow(to: floors)
        }
        func lines(_ cells: [String]) -> [String] {
            let wrapped = cells.enumerated().map { Self.wrap($0.element, width: widths[$0.offset]) }
            let height = wrapped.map(\.count).max() ?? 1
            return (0..<height).map { line in
                let parts = wrapped.enumerated().map { column, pieces -> String in
                    let cell = line < pieces.count ? pieces[line] : ""
                    let pad = String(repeating: " ", count: max(0, widths[column] - cell.count))
                    if column == cells.count - 1, alignments[column] == .left { return cell }
                    return alignments[column] == .right ? pad + cell : cell + pad
                }
                var text = indent + parts.joined(separator: Self.gap)
                while line > 0, text.hasSuffix(" ") { text.removeLast() }
                return text
            }
        }
        // A cell moved under its row: `    depth: 1,234 frames`, wrapped between words; a
        // cell with nothing in it (`–`) not at all.
        func underLines(_ moved: [(name: String, cell: String)]) -> [String] {
            let lead = indent + Self.underIndent
            return moved.filter { $0.cell != "–" && !$0.cell.isEmpty }.flatMap { name, cell in
                TextTable.wrap("\(name): \(cell)", width: width.map { $0 - lead.count } ?? .max).map { lead + $0 }
            }
        }
        return (lines(header), rows.indices.map { lines(rows[$0]) + underLines(under[$0]) })
    }

    /// The pieces of a cell that should not break: its words, a number kept with
    /// its unit (`8.0 MiB`, `12.4 k allocs,`, `3 frames`), and a number that ends a
    /// sentence kept with the word before it (`into 1.`), so that no line starts with
    /// what reads as a numbered list, and a `/` kept with the piece after it. Only the one word after a number goes with it
    /// (two after `k`, `M` or `G`): the rest of a sentence breaks as words do.
    package static func words(_ cell: String) -> [String] {
        var words: [String] = []
        // Whether the piece so far is a bare number, or a number and its magnitude, that the next word's unit joins.
        var open = false
        // A `/` waiting for the piece after it: `68 KiB` then `/ 8 MiB`. Kept with the size
        // before it (`68 KiB /`), the line went on with the next column's value and read
        // `68 KiB /     41`, the 41 a depth; a lone `/` on a line of its own reads as nothing.
        var slash = false
        for word in cell.split(separator: " ").map(String.init) {
            if word == "/", !words.isEmpty, !slash {
                slash = true
            } else if slash {
                words.append("/ " + word)
                slash = false
                open = word.wholeMatch(of: /[+-]?\d[\d.,]*/) != nil && word.last?.isNumber == true
            } else if open, let last = words.last, word.first?.isNumber == false {
                words[words.count - 1] = last + " " + word
                open = !last.dropFirst(last.hasPrefix("/ ") ? 2 : 0).contains(" ") && ["k", "M", "G"].contains(word)
            } else if !words.isEmpty, word.wholeMatch(of: /\d+\./) != nil {
                words[words.count - 1] += " " + word
                open = false
            } else {
                words.append(word)
                open = word.wholeMatch(of: /[+-]?\d[\d.,]*/) != nil && word.last?.isNumber == true
            }
        }
        if slash { words[words.count - 1] += " /" }
        return words
    }

    /// `text` in pieces of at most `width` characters, broken between its
    /// ``words(_:)`` (a number stays with its unit), a piece longer than `width`
    /// at its own spaces; a single word longer than `width` stays whole on a line
    /// of its own, never cut.
    package static func wrap(_ text: String, width: Int) -> [String] {
        guard text.count > width, width > 0 else { return [text] }
        var pieces: [String] = []
        var line = ""
        var queue = words(text)[...]
        while let word = queue.popFirst() {
            if !line.isEmpty, line.count + 1 + word.count <= width {
                line += " " + word
                continue
            }
            if !line.isEmpty { pieces.append(line) }
            line = ""
            if word.count > width, word.contains(" ") {
                queue = word.split(separator: " ").map(String.init) + queue
                continue
            }
            line = word
        }
        if !line.isEmpty { pieces.append(line) }
        return pieces
    }

    /// A GitHub-flavoured table: the header, the alignment row, a line per row.
    /// Cells are written as given: escape them first.
    package func markdown() -> String {
        var out = "| " + header.joined(separator: " | ") + " |\n"
        out += "|" + alignments.map { $0 == .right ? " ---: |" : " --- |" }.joined() + "\n"
        for row in rows { out += "| " + row.joined(separator: " | ") + " |\n" }
        return out
    }
}
