import Foundation

/// Why a program said it died, read from the tail of its standard error that the
/// probe kept: the line that gives the reason, not the last line of a stack trace.
///
/// - A JVM: the last `Exception in thread "…" …` line, and its `Caused by:` lines.
/// - Rust: the last `thread '…' panicked at …` line and the message under it, or
///   `thread '…' has overflowed its stack`, whichever came last.
/// - Anything else: of the last 20 non-empty lines, the last (up to 5) that are not
///   indented (stack lines are), up to `limit` characters.
package enum StandardErrorWords {
    /// Characters the words keep at most.
    package static let limit = 500

    /// The words in `tail`, or nil when it has no non-empty line.
    package static func lastWords(in tail: String) -> String? {
        let lines = tail.split(whereSeparator: \.isNewline).map(String.init).filter { !$0.allSatisfy(\.isWhitespace) }
        guard !lines.isEmpty else { return nil }
        let exception = lines.lastIndex { $0.hasPrefix("Exception in thread \"") }
        // Rust 1.87 and later name the thread's id too: `thread 'main' (15302) panicked at …`.
        let panic = lines.lastIndex { $0.hasPrefix("thread '") && $0.contains(" panicked at ") }
        let overflow = lines.lastIndex { $0.hasPrefix("thread '") && $0.hasSuffix(" has overflowed its stack") }
        let found = [exception, panic, overflow].compactMap { $0 }.max()
        switch found {
        case .some(let index) where index == exception:
            let causes = lines[(index + 1)...].filter { $0.hasPrefix("Caused by: ") }
            return headOf(([lines[index]] + causes).joined(separator: "\n"))
        case .some(let index) where index == panic:
            // Rust 1.73 and later: `… panicked at src/main.rs:4:5:`, the message on the lines after it.
            let message = lines[(index + 1)...].prefix { line in
                !["note: ", "stack backtrace:", "thread '", "fatal runtime error"].contains { line.hasPrefix($0) }
            }.prefix(10)
            return headOf(([lines[index]] + message).joined(separator: "\n"))
        case .some(let index):
            return headOf(lines[index])
        case .none:
            var kept: [String] = []
            var characters = 0
            for line in lines.suffix(20).reversed() where !(line.first?.isWhitespace ?? true) {
                if !kept.isEmpty && characters + line.count + 1 > limit { break }
                kept.insert(line, at: 0)
                characters += line.count + 1
                if kept.count == 5 { break }
            }
            guard !kept.isEmpty else { return nil }
            let words = kept.joined(separator: "\n")
            return words.count > limit ? "…" + words.suffix(limit - 1) : words
        }
    }

    /// `words` cut to `limit` characters from their start.
    static func headOf(_ words: String) -> String {
        words.count > limit ? words.prefix(limit - 1) + "…" : words
    }
}
