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
