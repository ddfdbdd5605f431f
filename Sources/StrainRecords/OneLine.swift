import Foundation

/// Text from a record or a program, made to fit on one line of a text output: a line
/// break shown as `\n` or `\r`, another control character as `\u{1b}` (tab kept), so
/// that a name, a message or a symbol cannot start a line of its own, and with it a
/// GitHub workflow command (`::add-mask::…`) that Strain did not mean.
public enum OneLine {
    /// `text` with its line breaks and control characters shown escaped.
    public static func text(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: needsEscape) else { return text }
        var out = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case _ where needsEscape(scalar): out += "\\u{\(String(scalar.value, radix: 16))}"
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    /// Whether `scalar` is shown escaped: C0 controls but tab, DEL, C1 controls (NEL among them).
    static func needsEscape(_ scalar: Unicode.Scalar) -> Bool {
        (scalar.value < 0x20 && scalar != "\t") || (0x7F...0x9F).contains(scalar.value)
    }

    /// `value` with every string in it made one line (`text`), dictionary keys too: the
    /// copy a text view renders, so no view has to remember it wherever it prints a name.
    ///
    /// Done on the JSON the type encodes to, where every control character in a string is
    /// an escape sequence (`\n`, `\u0001`): each becomes the same escape written out, the
    /// rest is kept byte for byte (numbers are never reparsed); `value` as it was if it
    /// does not encode and decode again.
    public static func copy<Value: Codable>(_ value: Value) -> Value {
        guard let encoded = try? JSONEncoder().encode(value) else { return value }
        let rewritten = escapingControls(inJSON: encoded)
        guard rewritten != encoded else { return value }
        return (try? JSONDecoder().decode(Value.self, from: rewritten)) ?? value
    }

    /// JSON text whose strings' control characters are written out as visible escapes.
    static func escapingControls(inJSON data: Data) -> Data {
        let bytes = [UInt8](data)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        let backslash = UInt8(ascii: "\\")
        var index = 0
        // Outside a string JSON has no backslash; inside one, a backslash always starts an escape.
        while index < bytes.count {
            let byte = bytes[index]
            guard byte == backslash, index + 1 < bytes.count else {
                out.append(byte)
                index += 1
                continue
            }
            let next = bytes[index + 1]
            var shown: String?
            var length = 2
            switch next {
            case UInt8(ascii: "n"): shown = "\\n"
            case UInt8(ascii: "r"): shown = "\\r"
            case UInt8(ascii: "b"): shown = "\\u{8}"
            case UInt8(ascii: "f"): shown = "\\u{c}"
            case UInt8(ascii: "u") where index + 6 <= bytes.count:
                if let value = UInt32(String(decoding: bytes[(index + 2)..<(index + 6)], as: UTF8.self), radix: 16),
                   let scalar = Unicode.Scalar(value), needsEscape(scalar) {
                    shown = scalar == "\n" ? "\\n" : scalar == "\r" ? "\\r" : "\\u{\(String(value, radix: 16))}"
                }
                length = 6
            default: break
            }
            if let shown {
                // The visible escape, as JSON: each backslash doubled.
                out += Array(shown.replacingOccurrences(of: "\\", with: "\\\\").utf8)
            } else {
                out += bytes[index..<min(index + length, bytes.count)]
            }
            index += length
        }
        // A raw DEL or C1 control (JSON does not escape them) is left for the terminal's filter.
        return Data(out)
    }

    /// A spreadsheet's cell of text that never starts a formula: one that starts with `=`,
    /// `+`, `-`, `@`, a tab or a carriage return gets a leading apostrophe (OWASP's advice
    /// on CSV injection), unless it is a number written out (`-1.5`), which a spreadsheet
    /// reads as the number it is.
    public static func spreadsheetCell(_ text: String) -> String {
        guard let first = text.unicodeScalars.first, ["=", "+", "-", "@", "\t", "\r"].contains(first),
              text.wholeMatch(of: /[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?/) == nil else { return text }
        return "'" + text
    }

    /// `text` (many lines) with every line that a GitHub runner would read as a workflow
    /// command, one whose first characters after white space are `::`, shown with its
    /// first colon escaped (`\u{3a}:add-mask::…`). The runner breaks lines at `\n` and
    /// at a lone `\r` alike, and trims white space from a line's start.
    public static func withoutWorkflowCommands(_ text: String) -> String {
        guard text.contains("::") else { return text }
        var out = ""
        var atLineStart = true
        var pending = ""
        var scalars = text.unicodeScalars.makeIterator()
        var lookahead: Unicode.Scalar? = scalars.next()
        while let scalar = lookahead {
            lookahead = scalars.next()
            if scalar == "\n" || scalar == "\r" {
                out += pending
                pending = ""
                out.unicodeScalars.append(scalar)
                atLineStart = true
                continue
            }
            if atLineStart {
                if scalar.properties.isWhitespace {
                    pending.unicodeScalars.append(scalar)
                    continue
                }
                atLineStart = false
                out += pending
                pending = ""
                if scalar == ":", lookahead == ":" {
                    out += "\\u{3a}"
                    continue
                }
            }
            out.unicodeScalars.append(scalar)
        }
        return out + pending
    }
}
