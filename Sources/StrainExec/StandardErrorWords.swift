import Foundation

/// Why a program said it died, read from the tail of its standard error that the
/// probe kept: the line that gives the reason, not the last line of a stack trace.
///
/// - A JVM: the last `Exception in thread "…" …` line, and its `Caused by:` lines.
/// - Rust: the last `thread '…' panicked at …` line and the message under it, or
///   `thread '…' has overflowed its stack`, whichever came last.
/// - Swift: the last line that says `Fatal error:`, `Precondition failed` or
///   `Assertion failed` and the message's lines under it (a debug build's precondition
///   message may run over many: SwiftNIO's ends with its "Further information" lines),
///   up to the runtime's `Current stack trace:`.
/// - libstdc++: the last `terminate called after throwing an instance of '…'` line and
///   its `what():` line.
/// - Anything else: the final message: its last line that is not indented (stack
///   lines are) and does not continue a line that ends with `:`, with the lines that
///   continue it (up to 5), up to `limit` characters. Node's closing `Node.js v…` line,
///   Lua's `stack traceback:`, and a usage line or help hint after the message
///   (`usage: tool FILE`, `Try 'ls --help' …`) are not messages.
///
/// Whichever message came last wins; its first line says what went wrong
/// (`CrashReason` in StrainReports picks that line for a report).
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
        let swift = lines.lastIndex(where: isSwiftFatalLine)
        let terminate = lines.lastIndex { $0.hasPrefix("terminate called after throwing an instance of ") }
        let ruby = lines.lastIndex(where: isRubyErrorLine)
        let found = [exception, panic, overflow, swift, terminate, ruby].compactMap { $0 }.max()
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
        case .some(let index) where index == swift:
            // The message's own lines, up to the runtime's backtrace (or the backtracer's report).
            let message = lines[(index + 1)...].prefix { line in
                !["Current stack trace:", "💣 Program crashed"].contains { line.hasPrefix($0) }
            }.prefix(10)
            return headOf(([lines[index]] + message).joined(separator: "\n"))
        case .some(let index) where index == terminate:
            let what = lines.indices.contains(index + 1) && lines[index + 1].trimmingCharacters(in: .whitespaces).hasPrefix("what():") ? [lines[index + 1]] : []
            return headOf(([lines[index]] + what).joined(separator: "\n"))
        case .some(let index):
            return headOf(lines[index])
        case .none:
            return finalMessage(in: lines)
        }
    }

    /// Whether `line` is Ruby's line for an uncaught exception (`a.rb:6:in 'sleep': No
    /// live threads left. Deadlock? (fatal)`): its thread list and trace come after it.
    static func isRubyErrorLine(_ line: String) -> Bool {
        line.firstMatch(of: #/^\S+:\d+:in [`'][^`']*': .+ \((fatal|[A-Z][A-Za-z0-9_]*(::[A-Z][A-Za-z0-9_]*)*)\)$/#) != nil
    }

    /// Whether `line` is the Swift runtime's or standard library's line that says what went
    /// wrong (`File.swift:12: Fatal error: …`, `Precondition failed: …`, `Assertion failed: …`).
    static func isSwiftFatalLine(_ line: String) -> Bool {
        line.contains("Fatal error:") || line.contains("Precondition failed") || line.contains("Assertion failed")
    }

    /// The last message in `lines`: its first line is the last that is not indented and
    /// does not continue a line ending in `:`; then the lines that continue it, not indented.
    static func finalMessage(in lines: [String]) -> String? {
        var lines = lines[...]
        // Node (12 and later) ends an uncaught exception's report with its version.
        if let last = lines.last, last.hasPrefix("Node.js v") { lines = lines.dropLast() }
        let isIndented = { (line: String) in line.first?.isWhitespace ?? true }
        // A tool's error often ends with its usage or a hint (`usage: tool FILE`, `Try 'ls
        // --help' for more information.`): the message is the line before them.
        while let hint = lines.indices.last(where: { !isIndented(lines[$0]) }), isHint(lines[hint]),
              lines[..<hint].contains(where: { !isIndented($0) && !isHint($0) }) {
            lines = lines[..<hint]
        }
        // Lua's `stack traceback:` opens its trace; it says nothing of the error. Nor does a
        // numbered stack (Node's `10: gamma (/app/a.js:3:27)` after `process.abort()`, under
        // `----- JavaScript stack trace -----`): its last line was taken for the reason (re-trial 33m, F2).
        let isTraceHeading = { (line: String) in line == "stack traceback:" || isNumberedFrame(line) }
        let continues = { (index: Int) in index > lines.startIndex && lines[index - 1].hasSuffix(":") && !isIndented(lines[index - 1]) }
        guard var start = lines.indices.last(where: { !isIndented(lines[$0]) && !isTraceHeading(lines[$0]) && !continues($0) }) else { return nil }
        // A closing line that states no error after one that does (`hint: run cleanup.sh first` after
        // `error: disk quota exceeded`, an atexit's `cleanup done` after a traceback's `KeyError: …`): the
        // message is the error's, among the last 3 lines that are not indented (re-trial 33n, F9).
        if !statesAnError(lines[start]),
           let error = lines.indices.filter({ $0 < start && !isIndented(lines[$0]) }).suffix(3).last(where: { statesAnError(lines[$0]) && !continues($0) }) {
            start = error
        }
        var kept = [lines[start]]
        var characters = lines[start].count
        for index in (start + 1)..<lines.endIndex where kept.count < 5 {
            let line = lines[index]
            guard continues(index), !isIndented(line), !isTraceHeading(line), characters + line.count + 1 <= limit else { break }
            kept.append(line)
            characters += line.count + 1
        }
        return headOf(kept.joined(separator: "\n"))
    }

    /// Whether `line` says an error happened: the word error, fatal or panic, or an
    /// exception's type (`KeyError`, `RangeError`, `IOException`). Words end at any
    /// character that is not a letter or a digit (simple boundaries: Unicode's join
    /// `ERROR:root:replica` into one word).
    static func statesAnError(_ line: String) -> Bool {
        line.contains(#/\b(error|Error|ERROR|fatal|Fatal|FATAL|panic|PANIC)\b|[A-Z][A-Za-z]*(Error|Exception)\b/#.wordBoundaryKind(.simple))
    }

    /// Whether `line` is a line of a numbered stack trace or its heading, as Node prints
    /// them: `10: gamma (/app/a.js:3:27)`, ` 2: 0xf50bdf v8::internal::… [node]`,
    /// `----- Native stack trace -----`.
    static func isNumberedFrame(_ line: String) -> Bool {
        line.wholeMatch(of: #/\s*\d+: (0x[0-9a-f]+ .*|\S+ \(.+:\d+:\d+\)|\S+ \[[^\]]+\])/#) != nil
            || line.wholeMatch(of: #/-{3,} [A-Za-z ]+ -{3,}/#) != nil
    }

    /// Whether `line` shows how to call the program rather than what went wrong: its
    /// usage, or a pointer to its help.
    static func isHint(_ line: String) -> Bool {
        let lower = line.lowercased()
        return ["usage:", "try '", "try `", "try \"", "see '", "for more information"].contains { lower.hasPrefix($0) }
    }

    /// `words` cut to `limit` characters from their start.
    static func headOf(_ words: String) -> String {
        words.count > limit ? words.prefix(limit - 1) + "…" : words
    }
}
