/// A table of text cells laid out once for the terminal and for Markdown: each
/// column's width and alignment are decided here, not by each report. In the
/// terminal a table wider than the window wraps its widest column (at a space
/// where it can) until the rows fit, instead of letting the terminal wrap the
/// whole line mid-word.
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

    /// A table whose rows each have one cell per header column.
    package init(header: [String], alignments: [Alignment], rows: [[String]]) {
        precondition(alignments.count == header.count && rows.allSatisfy { $0.count == header.count }, "a cell per column")
        self.header = header
        self.alignments = alignments
        self.rows = rows
    }

    /// How narrow a column gets before words break: the longest word of its
    /// cells, but at least `minimumFloor` and at most `maximumFloor`.
    static let minimumFloor = 3
    static let maximumFloor = 14
    static let gap = "  "

    /// The header's lines, then each row's lines (more than one when a cell
    /// wraps), each after `indent`. Right-aligned columns are padded on the left;
    /// a left-aligned last column is not padded. With `width`, a table too wide
    /// for it leaves out its columns of dashes, then the widest column
    /// is narrowed until a line is at most `width` characters, as far as
    /// ``minimumFloor`` allows, words breaking only when they must.
    package func terminalLines(indent: String = "  ", width: Int? = nil) -> (header: [String], rows: [[String]]) {
        var widths = header.indices.map { column in ([header] + rows).map { $0[column].count }.max() ?? 0 }
        if let width {
            let budget = width - indent.count - Self.gap.count * max(0, header.count - 1)
            // Too wide: first leave out the columns with nothing in them (every cell `–`).
            let empty = header.indices.filter { column in !rows.isEmpty && rows.allSatisfy { $0[column] == "–" || $0[column].isEmpty } }
            if widths.reduce(0, +) > budget, !empty.isEmpty, empty.count < header.count {
                let kept = header.indices.filter { !empty.contains($0) }
                return TextTable(header: kept.map { header[$0] }, alignments: kept.map { alignments[$0] }, rows: rows.map { row in kept.map { row[$0] } })
                    .terminalLines(indent: indent, width: width)
            }
            // Narrow the widest column a character at a time, so the cut is spread over the
            // wide columns, down to each column's floor.
            let floors = { (cells: [[String]]) in
                header.indices.map { column in min(Self.maximumFloor, max(Self.minimumFloor, cells.flatMap { Self.words($0[column]).map(\.count) }.max() ?? 0)) }
            }
            // Header words whole if it can, values whole if it can, else as narrow as it gets.
            for floor in [floors([header] + rows), floors(rows), Array(repeating: Self.minimumFloor, count: header.count)] {
                while widths.reduce(0, +) > budget, let widest = widths.indices.filter({ widths[$0] > floor[$0] }).max(by: { widths[$0] < widths[$1] }) {
                    widths[widest] -= 1
                }
            }
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
        return (lines(header), rows.map(lines))
    }

    /// The pieces of a cell that should not break: its words, a number kept with
    /// its unit (`8.0 MiB`, `12.4 k allocs,`).
    static func words(_ cell: String) -> [String] {
        var words: [String] = []
        for word in cell.split(separator: " ").map(String.init) {
            if let last = words.last, last.first?.isNumber == true, !last.hasSuffix(","), word.first?.isNumber == false, word != "/" {
                words[words.count - 1] += " " + word
            } else {
                words.append(word)
            }
        }
        return words
    }

    /// `text` in pieces of at most `width` characters, broken between its
    /// ``words(_:)`` (a number stays with its unit), a word longer than `width`
    /// at its own spaces, else mid-word.
    package static func wrap(_ text: String, width: Int) -> [String] {
        guard text.count > width, width > 0 else { return [text] }
        var pieces: [String] = []
        var line = ""
        var queue = words(text)[...]
        while var word = queue.popFirst() {
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
            while word.count > width {
                pieces.append(String(word.prefix(width)))
                word = String(word.dropFirst(width))
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
