import Foundation

/// The one escaper behind the HTML, Markdown and JUnit reports: `&`, `<` and
/// `>` as entities, `extra` characters as given, and the control characters
/// markup cannot carry (all below U+0020 but tab and line breaks, DEL, and
/// U+FFFE/U+FFFF, which XML forbids) replaced by `control`. Line breaks stay,
/// or become `lineBreaks` when a line ending would end the construct.
package enum MarkupText {
    /// A user's text split at its backticks: the parts between a pair are code
    /// (`` `SYS_gettid` ``), the rest prose; an unpaired backtick stays prose.
    package static func codeSpans(_ text: String) -> [(code: Bool, text: String)] {
        let parts = text.components(separatedBy: "`")
        guard parts.count >= 3 else { return [(false, text)] }
        var spans: [(code: Bool, text: String)] = []
        let paired = parts.count % 2 == 1 ? parts.count : parts.count - 1
        for (index, part) in parts.prefix(paired).enumerated() where !part.isEmpty || index % 2 == 1 {
            spans.append((index % 2 == 1, part))
        }
        if paired < parts.count { spans.append((false, "`" + parts[paired])) }
        return spans
    }

    package static func escape(_ text: String, extra: [Unicode.Scalar: String] = [:], lineBreaks: String? = nil, control: String) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\t": out.unicodeScalars.append(scalar)
            case "\n", "\r":
                if let lineBreaks { out += lineBreaks } else { out.unicodeScalars.append(scalar) }
            default:
                if let replacement = extra[scalar] {
                    out += replacement
                } else if scalar.value < 0x20 || scalar.value == 0x7F || scalar.value == 0xFFFE || scalar.value == 0xFFFF {
                    out += control
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return out
    }
}

extension MarkupText {
    /// An HTML page whose hyphenated words a browser will not break at their hyphens:
    /// `gcd-global`, `thread-pool(64,`, `2026-11-30T02:15:14Z`, `--out` and
    /// `baseline-run.json` each go in a `<span class="nb">` (which the page's style
    /// sets `white-space:nowrap`), so a narrow screen never shows `gcd-` / `global`,
    /// a name a reader would copy into a suite. A path is kept whole a segment at a
    /// time, with a `<wbr>` after each `/`, so a long one still wraps at its slashes.
    /// Only text between tags changes: tags and their attributes, and the contents of
    /// `title`, `style`, `script`, `svg`, `pre` and `textarea`, are copied as they are;
    /// so is a word longer than `longest` bytes, which must stay free to wrap.
    package static func keepingHyphenatedWordsWhole(_ html: String, longest: Int = 48) -> String {
        let bytes = Array(html.utf8)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count + bytes.count / 8)
        let verbatim: [[UInt8]] = ["title", "style", "script", "svg", "pre", "textarea"].map { Array($0.utf8) }
        var index = 0
        var textStart = 0
        func lower(_ byte: UInt8) -> UInt8 { byte >= 65 && byte <= 90 ? byte + 32 : byte }
        func matches(_ name: [UInt8], at position: Int) -> Bool {
            guard position + name.count <= bytes.count else { return false }
            for offset in 0..<name.count where lower(bytes[position + offset]) != name[offset] { return false }
            let after = position + name.count
            return after == bytes.count || !(bytes[after].isASCIILetterOrDigit)
        }
        func flushText(upTo end: Int) {
            if textStart < end { out += wordsKeptWhole(bytes[textStart..<end], longest: longest) }
        }
        while index < bytes.count {
            guard bytes[index] == UInt8(ascii: "<") else { index += 1; continue }
            flushText(upTo: index)
            // The tag itself, to its `>`, as it is (an attribute's `>` is written `&gt;`).
            var end = index + 1
            while end < bytes.count, bytes[end] != UInt8(ascii: ">") { end += 1 }
            end = min(end + 1, bytes.count)
            if let name = verbatim.first(where: { matches($0, at: index + 1) }) {
                // Everything to the matching close tag, as it is.
                var close = end
                while close < bytes.count, !(bytes[close] == UInt8(ascii: "<") && close + 1 < bytes.count
                                              && bytes[close + 1] == UInt8(ascii: "/") && matches(name, at: close + 2)) { close += 1 }
                while close < bytes.count, bytes[close] != UInt8(ascii: ">") { close += 1 }
                end = min(close + 1, bytes.count)
            }
            out += bytes[index..<end]
            index = end
            textStart = end
        }
        flushText(upTo: bytes.count)
        return String(decoding: out, as: UTF8.self)
    }

    /// Text between tags: each hyphenated word in a no-wrap span, a number with its
    /// unit (`403.2 ms;`, `(8 MiB)`) in one, and a long symbol given a `<wbr>` after
    /// each `(`, `,`, `<` (not its first), `::`, label `:` (`run(context:` / `submit:…`) and member `.`,
    /// where a browser may break it rather than anywhere (`waitForStartsSecond` / `s:`).
    private static func wordsKeptWhole(_ text: ArraySlice<UInt8>, longest: Int) -> [UInt8] {
        // Words and the whitespace between them, in turn.
        var tokens: [(word: [UInt8], space: [UInt8])] = []
        var word: [UInt8] = []
        var space: [UInt8] = []
        for byte in text {
            if byte == 0x20 || byte == 0x0A || byte == 0x09 || byte == 0x0D {
                space.append(byte)
            } else {
                if !space.isEmpty { tokens.append((word, space)); word = []; space = [] }
                word.append(byte)
            }
        }
        tokens.append((word, space))
        var out: [UInt8] = []
        var index = 0
        while index < tokens.count {
            let (word, space) = tokens[index]
            // Words the terminal keeps on one line (a number and its unit or what it counts,
            // an operator and its number, a command and its short option), separated by
            // one space, as one unbreakable piece of at most five words.
            var last = index
            while last + 1 < tokens.count, last - index < 4, tokens[last].space == [0x20], joins(tokens[last].word, tokens[last + 1].word) { last += 1 }
            if last > index {
                out += Array("<span class=\"nb\">".utf8) + tokens[index...last].map(\.word).joined(separator: [0x20]) + Array("</span>".utf8) + tokens[last].space
                index = last + 1
                continue
            }
            out += kept(word, longest: longest) + space
            index += 1
        }
        return out
    }

    /// One word: a path a segment at a time, a hyphenated word whole, a long symbol
    /// with its breaks, else as it is.
    private static func kept(_ word: [UInt8], longest: Int) -> [UInt8] {
        let slash = UInt8(ascii: "/")
        if word.contains(UInt8(ascii: "-")) {
            guard word.contains(slash) else { return wrapped(word, longest: longest) }
            // A path: each segment whole, a break allowed after each slash.
            var out: [UInt8] = []
            var segment: [UInt8] = []
            for byte in word {
                segment.append(byte)
                if byte == slash { out += wrapped(segment, longest: longest) + Array("<wbr>".utf8); segment.removeAll() }
            }
            return out + wrapped(segment, longest: longest)
        }
        guard word.count >= symbolLength, !word.contains(slash) else { return word }
        var out: [UInt8] = []
        for (position, byte) in word.enumerated() {
            out.append(byte)
            guard position + 1 < word.count else { break }
            let next = word[position + 1]
            let before = position > 0 ? word[position - 1] : 0
            let label = byte == UInt8(ascii: ":") && before != UInt8(ascii: ":") && next != UInt8(ascii: ":") && (next.isASCIILetterOrDigit && !(next >= 48 && next <= 57) || next == UInt8(ascii: "_"))
            // Not after a `<` that begins the word: a line would end on a lone `<` (`in <` / `std::…`).
            let entityLess = byte == UInt8(ascii: ";") && position > 3 && Array(word[(position - 3)...position]) == Array("&lt;".utf8)
            // After a path's `::` (`std::sys::sync::mutex::futex::Mutex>::lock_contended` ran past a phone's card).
            let path = byte == UInt8(ascii: ":") && before == UInt8(ascii: ":") && (next.isASCIILetterOrDigit || next == UInt8(ascii: "_"))
            if byte == UInt8(ascii: "(") || byte == UInt8(ascii: ",") || label || entityLess || path || isMember(word, dot: position) { out += Array("<wbr>".utf8) }
        }
        return out
    }

    /// Whether the byte at `dot` is a `.` between a type and its member
    /// (`NSKeyedUnarchiver.` / `_decodeArrayOfObjectsForKey(`, a piece wider than a
    /// phone's card otherwise): a capitalised identifier before it, an identifier after
    /// it, and not a file's extension (`Main.swift:12`). Never in a library's name
    /// (`libswift_Concurrency.so+0x71e5f`), a compiler's clone (`_dispatch_worker_thread.cold.5`)
    /// or a package path (`java.lang.StackOverflowError`, which a reader searches for).
    private static func isMember(_ word: [UInt8], dot: Int) -> Bool {
        guard word[dot] == UInt8(ascii: "."), dot > 0, dot + 1 < word.count else { return false }
        func identifier(_ byte: UInt8) -> Bool { byte.isASCIILetterOrDigit || byte == UInt8(ascii: "_") }
        guard identifier(word[dot - 1]), identifier(word[dot + 1]), !(word[dot + 1] >= 48 && word[dot + 1] <= 57) else { return false }
        var start = dot - 1
        while start > 0, identifier(word[start - 1]) { start -= 1 }
        guard word[start] >= 65 && word[start] <= 90 else { return false }
        var end = dot + 1
        while end < word.count, identifier(word[end]) { end += 1 }
        let lowercase = word[(dot + 1)..<end].allSatisfy { $0 >= 97 && $0 <= 122 }
        let extensionLike = lowercase && end - dot - 1 <= 5 && (end == word.count || word[end] == UInt8(ascii: ":") || word[end] == UInt8(ascii: ")"))
        return !extensionLike
    }

    /// A word this long or longer is a symbol a phone may need to break.
    static let symbolLength = 28

    /// ``TerminalStyle/joins(_:_:)`` on two escaped words (`&lt;` is `<`).
    private static func joins(_ word: [UInt8], _ next: [UInt8]) -> Bool {
        let text = { (bytes: [UInt8]) in Substring(String(decoding: bytes, as: UTF8.self).replacingOccurrences(of: "&lt;", with: "<").replacingOccurrences(of: "&gt;", with: ">")) }
        return TerminalStyle.joins(text(word), text(next))
    }

    /// `word` in a no-wrap span when a hyphen inside it joins two characters (or
    /// starts an option, `--out`), and it is short enough to keep on one line.
    private static func wrapped(_ word: [UInt8], longest: Int) -> [UInt8] {
        guard word.count <= longest, word.count >= 3 else { return word }
        var joins = false
        for position in 1..<word.count where word[position - 1] == UInt8(ascii: "-") {
            let next = word[position]
            if next.isASCIILetterOrDigit || next == UInt8(ascii: "-") { joins = true; break }
        }
        guard joins else { return word }
        return Array("<span class=\"nb\">".utf8) + word + Array("</span>".utf8)
    }
}

private extension UInt8 {
    var isASCIILetterOrDigit: Bool {
        (self >= 48 && self <= 57) || (self >= 65 && self <= 90) || (self >= 97 && self <= 122)
    }
}
