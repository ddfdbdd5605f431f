import StrainRecords

/// How the terminal view writes: in colour or not, and how wide the window is.
package struct TerminalStyle: Sendable {
    /// Whether to paint with SGR colours.
    package var color: Bool
    /// The window's columns: tables wrap their widest column to fit; nil, no limit.
    package var width: Int?

    /// A style in colour or not, fitting `width` columns (nil: no limit).
    package init(color: Bool, width: Int? = nil) {
        self.color = color
        self.width = width
    }

    /// Text safe for a terminal and a CI log: a run's own strings (an error
    /// message, a symbol) lose every control character but tab and newline, so
    /// they can neither move the cursor nor retitle the window; only this report's
    /// colours, `ESC [ digits m`, and the line clear `ESC [ 2K` pass. No line can
    /// start a GitHub workflow command (`OneLine.withoutWorkflowCommands`): nothing
    /// printed through here is one Strain means.
    package static func safe(_ text: String) -> String {
        var out = ""
        var scalars = text.unicodeScalars[...]
        while let scalar = scalars.popFirst() {
            if scalar == "\u{1B}" {
                let rest = String(String.UnicodeScalarView(scalars.prefix(4)))
                if let match = rest.firstMatch(of: /^\[(\d{1,2}m|2K)/) {
                    out += "\u{1B}" + match.0
                    scalars = scalars.dropFirst(match.0.unicodeScalars.count)
                }
                continue
            }
            if scalar.value < 0x20 && scalar != "\n" && scalar != "\t" && scalar != "\r" || scalar.value == 0x7F { continue }
            out.unicodeScalars.append(scalar)
        }
        return OneLine.withoutWorkflowCommands(out)
    }

    /// `text` in SGR colour `code` (1 bold, 31 red, 32 green, 33 yellow) when in colour.
    package func paint(_ text: String, _ code: Int) -> String {
        color ? "\u{1B}[\(code)m\(text)\u{1B}[0m" : text
    }

    /// A section's first lines: a blank line, then its heading in bold (wrapped at spaces to the width).
    package func heading(_ title: String) -> [String] {
        [""] + (width.map { TextTable.wrap(title, width: $0) } ?? [title]).map { paint($0, 1) }
    }

    /// A table row's lines in red with `note` after its first line, or on a line
    /// of its own below the row when the window is too narrow for both.
    package func unexpected(_ rowLines: [String], note: String) -> [String] {
        let first = rowLines.first ?? ""
        let fits = width.map { first.count + 3 + note.count <= $0 } ?? true
        let lines = fits ? [first + "   " + note] + rowLines.dropFirst() : rowLines + ["    " + note]
        return lines.map { paint($0, 31) }
    }

    /// Each line of `text` fitted (``fit(_:hanging:)``), joined again.
    package func fitLines(_ text: String) -> String {
        text.split(separator: "\n", omittingEmptySubsequences: false).flatMap { fit(String($0)) }.joined(separator: "\n")
    }

    /// `line` in lines of at most ``width`` visible characters, broken only between
    /// words, the lines after the first indented four past the first's indent. A word
    /// wider than a line (a C++ or Swift symbol) is broken only after a `<`, `,`, `(` or
    /// a `:` that ends an argument label (``symbolBreaks(in:)``), never inside a name;
    /// one with no such place (a path) stays whole on a line of its own. Colours (SGR)
    /// take no room, and a line painted whole stays painted on each of its lines.
    /// `hanging`, when given, is the indent of the lines after the first (a column's).
    package func fit(_ line: String, hanging indent: Int? = nil) -> [String] {
        guard let width, Self.visibleCount(line) > width else { return [line] }
        if let painted = line.wholeMatch(of: /(\u{1B}\[\d+m)([^\u{1B}]*)\u{1B}\[0m/) {
            return fit(String(painted.2), hanging: indent).map { String(painted.1) + $0 + "\u{1B}[0m" }
        }
        let body = line.drop { $0 == " " }
        let lead = String(repeating: " ", count: line.count - body.count)
        let hanging = indent.map { String(repeating: " ", count: $0) } ?? lead + "    "
        var pieces: [String] = []
        var current = lead
        var count = lead.count
        var started = false
        var index = body.startIndex
        while let wordStart = body[index...].firstIndex(where: { $0 != " " }) {
            let spaces = body.distance(from: index, to: wordStart)
            var wordEnd = body[wordStart...].firstIndex(of: " ") ?? body.endIndex
            // `× 631`, `+ 7.26 ms`, `5.65 ms` and `closure #1` are one unit to a reader: the next word comes along.
            while wordEnd < body.endIndex, body.index(after: wordEnd) < body.endIndex, body[body.index(after: wordEnd)] != " " {
                let nextStart = body.index(after: wordEnd)
                let nextEnd = body[nextStart...].firstIndex(of: " ") ?? body.endIndex
                // A code span a sentence quotes (`strain explain SCENARIO`) stays whole when short:
                // it broke after `` (`strain `` at 80 columns (re-trial 35m).
                let joined = body[wordStart..<wordEnd]
                let inCodeSpan = joined.count(where: { $0 == "`" }) % 2 == 1
                    && body.distance(from: wordStart, to: nextEnd) <= min(Self.codeSpanLimit, width - 8)
                guard inCodeSpan || Self.joins(joined.split(separator: " ").last ?? "", body[nextStart..<nextEnd]) else { break }
                wordEnd = nextEnd
            }
            let word = String(body[wordStart..<wordEnd])
            let wordCount = Self.visibleCount(word)
            if started, count + spaces + wordCount > width {
                pieces.append(current)
                current = hanging
                count = hanging.count
            } else if started {
                current += String(repeating: " ", count: spaces)
                count += spaces
            }
            // A word longer than the line's room: its parts, each up to a symbol's break.
            var rest = Substring(word)
            while count + Self.visibleCount(String(rest)) > width, !rest.contains("\u{1B}"),
                  let cut = Self.symbolBreaks(in: rest).last(where: { rest.distance(from: rest.startIndex, to: $0) <= width - count }) {
                pieces.append(current + rest[..<cut])
                rest = rest[cut...]
                current = hanging
                count = hanging.count
            }
            current += rest
            count += Self.visibleCount(String(rest))
            started = true
            index = wordEnd
        }
        pieces.append(current)
        return pieces
    }

    /// The longest code span (in backticks) a line keeps whole rather than break between its
    /// words (in a window of fewer than 48 columns, 8 fewer than the window).
    static let codeSpanLimit = 40

    /// Where a symbol may go on to the next line: after a `<`, `,` or `(`, and after a
    /// lone `:` that is not followed by a digit or a `/` (an argument label's; never in
    /// a qualified name's `::`, `file.swift:12` or `https://`). Each index is the start
    /// of the part after the break.
    package static func symbolBreaks(in word: Substring) -> [Substring.Index] {
        var breaks: [Substring.Index] = []
        var index = word.startIndex
        while index < word.endIndex {
            let next = word.index(after: index)
            guard next < word.endIndex else { break }
            let character = word[index]
            let afterColon = index > word.startIndex && word[word.index(before: index)] == ":"
            if "<,(".contains(character) || (character == ":" && !afterColon && !":/0123456789".contains(word[next])) { breaks.append(next) }
            index = next
        }
        return breaks
    }

    /// `name`, a frame's, to follow `lead` visible characters on a line: whole when the
    /// line fits the window, else with each outermost template or generic argument
    /// list written `<…>` (`std::pair<…> swift::ConcurrentReadableHashMap<…>::find<…>`),
    /// so the terminal never breaks a C++ or Swift name inside its arguments (re-trial
    /// 35o, F14); the second value says whether it left any out. A name whose angle
    /// brackets do not pair (`operator<`, `operator->`) stays whole.
    package func frameName(_ name: String, after lead: Int) -> (name: String, elided: Bool) {
        guard let width, lead + Self.visibleCount(name) > width, let short = Self.argumentsElided(name) else { return (name, false) }
        return (short, true)
    }

    /// `name` with each outermost template or generic argument list written `<…>`, or nil
    /// when it has none or its angle brackets do not pair.
    package static func argumentsElided(_ name: String) -> String? {
        var out = ""
        var depth = 0
        for character in name {
            if character == ">" {
                depth -= 1
                guard depth >= 0 else { return nil }
            }
            if depth == 0 { out.append(character) }
            if character == "<" {
                if depth == 0 { out.append("…") }
                depth += 1
            }
        }
        return depth == 0 && out != name ? out : nil
    }

    /// `text` with a space after each place ``symbolBreaks(in:)`` allows: what a test
    /// compares the words of a fitted text and its whole original by.
    package static func spacedAtSymbolBreaks(_ text: String) -> String {
        text.split(separator: " ", omittingEmptySubsequences: false).map { word in
            var out = ""
            var from = word.startIndex
            for cut in symbolBreaks(in: word) {
                out += word[from..<cut] + " "
                from = cut
            }
            return out + word[from...]
        }.joined(separator: " ")
    }

    /// Whether a line may not break between `word` and `next`: after an operator (its
    /// number follows), after `closure` (its `#1`) or `not` (`not judged`), between a
    /// number and its unit or what it counts (`5.65 ms`, `(8 MiB)`, `12 %`, `4 threads`,
    /// `29,114 frames`), and around a command's short option (`build -c release`).
    static func joins(_ word: Substring, _ next: Substring) -> Bool {
        if ["×", "≤", "≥", "<", "=", "+", "±", "closure", "not", "depth", "swift", "(swift"].contains(word) { return true }
        // A gate's verdict keeps its first count (`on gate-small: passed:` / `3 inconclusive`).
        if ["passed:", "failed:", "incomplete:"].contains(word) { return true }
        // Strain's commands that a sentence names stay whole: `(strain` / `gate --calibrate)`
        // and `strain report` / `<file> --out <page.html>` broke in gate.html's cells. A
        // command with values (`strain gate --baseline-binary A …`) still breaks between them.
        if Words.bare(word) == "strain", Words.startsWithSubcommand(next) { return true }
        if Words.isSubcommand(word), next.hasPrefix("<") || next.hasPrefix("--calibrate") { return true }
        if Words.isPlaceholder(word), next.hasPrefix("--") { return true }
        if word.hasPrefix("--"), word.count > 2, next.hasPrefix("<") { return true }
        if Words.isShortOption(next), Words.isLowercaseWord(word) { return true }
        if Words.isShortOption(word), !next.hasPrefix("-") { return true }
        // `3 of 3 repetitions`, `×1 of 1`, `37 of 101 units`: a count and what it is out of.
        if word == "of", next.first?.isNumber == true { return true }
        // `a median 1.37 ms`: the figure a median names (`took a median` / `1.37 ms` at 1400 px).
        if word == "median", next.first?.isNumber == true { return true }
        // `q = 0.05`, `maxConcurrentOperationCount = width`: a name and its `=`.
        if next == "=" { return true }
        // `task-executor(2, 8MiB)`: a strategy's arguments, and the gate's `[n 8/8, …]` (re-trial 35p, F8).
        if word.hasSuffix(","), word.contains("("), !word.contains(")"), next.contains(")"), next.count <= 12 { return true }
        if word == "[n" { return true }
        // A number or a range of them (`of 4–65 threads`, which broke before `threads`).
        guard Words.isNumber(word) else { return false }
        let unit = next.drop { $0 == "(" }.prefix { !")],;:.".contains($0) }
        return units.contains(String(unit)) || counted.contains(String(unit))
    }

    /// The word shapes ``joins(_:_:)`` asks about, matched by hand: it runs for every pair of
    /// words a page wraps, and a regex literal is parsed again each time it is evaluated (a gate
    /// over a 137 KB run.json of long strings spent 64 % of its 6 s there, past the fuzzer's 5 s
    /// bound). `Tests/StrainTests/WordShapeTests.swift` holds each regex it replaces and checks
    /// both agree.
    package enum Words {
        package static let subcommands = ["report", "gate", "run", "bisect", "exec", "dump", "explain", "baseline", "compare", "merge", "list"]

        /// `word` without one leading `(`, then one leading backtick (`/\(?`?…/`).
        package static func bare(_ word: Substring) -> Substring {
            let open = word.first == "(" ? word.dropFirst() : word
            return open.first == "`" ? open.dropFirst() : open
        }

        /// `/\(?`?(report|gate|…)/` as a prefix.
        package static func startsWithSubcommand(_ word: Substring) -> Bool {
            let rest = bare(word)
            return subcommands.contains { rest.hasPrefix($0) }
        }

        /// `/\(?`?(report|gate|…)/` as the whole word.
        package static func isSubcommand(_ word: Substring) -> Bool { subcommands.contains(String(bare(word))) }

        /// `/<[^ ]+>/`: a placeholder such as `<file>`.
        package static func isPlaceholder(_ word: Substring) -> Bool {
            word.count >= 3 && word.first == "<" && word.last == ">" && !word.contains(" ")
        }

        /// `/-[a-zA-Z]/`: a short option such as `-c`.
        package static func isShortOption(_ word: Substring) -> Bool {
            guard word.count == 2, word.first == "-", let letter = word.last?.asciiValue else { return false }
            return (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(letter) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(letter)
        }

        /// `/\(?[a-z]+/`.
        package static func isLowercaseWord(_ word: Substring) -> Bool {
            let rest = word.first == "(" ? word.dropFirst() : word
            return !rest.isEmpty && rest.allSatisfy { $0.asciiValue.map { (UInt8(ascii: "a")...UInt8(ascii: "z")).contains($0) } ?? false }
        }

        /// `/\(?[-+−×]?[0-9][0-9,.]*(–[0-9][0-9,.]*)?/`: a number or a range of them.
        package static func isNumber(_ word: Substring) -> Bool {
            var rest = word.first == "(" ? word.dropFirst() : word
            if let sign = rest.first, "-+−×".contains(sign) { rest = rest.dropFirst() }
            let digits = { (text: Substring) -> Substring in text.prefix { $0 == "," || $0 == "." || isDigit($0) } }
            guard let first = rest.first, isDigit(first) else { return false }
            rest = rest.dropFirst(digits(rest).count)
            guard rest.first == "–" else { return rest.isEmpty }
            rest = rest.dropFirst()
            guard let second = rest.first, isDigit(second) else { return false }
            return digits(rest).count == rest.count
        }

        package static func isDigit(_ character: Character) -> Bool {
            character.asciiValue.map { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) } ?? false
        }
    }

    /// What a count names, kept beside its number on the terminal.
    static let counted: Set<String> = ["frame", "frames", "thread", "threads", "trial", "trials", "probe", "probes", "repetition", "repetitions",
                                       "item", "items", "unit", "units", "sample", "samples", "not", "of",
                                       // A gate's counts: `passed: 3` / `inconclusive` broke apart.
                                       "unchanged", "inconclusive", "improved", "regressed"]

    /// The units a number keeps on its line.
    static let units: Set<String> = ["ns", "µs", "us", "ms", "s", "min", "h", "B", "KiB", "MiB", "GiB", "TiB", "KB", "MB", "GB", "%"]

    /// Characters a terminal shows of `text`: its SGR colour sequences take none.
    package static func visibleCount(_ text: String) -> Int {
        text.contains("\u{1B}") ? text.replacing(/\u{1B}\[[0-9;]*m/, with: "").count : text.count
    }
}
