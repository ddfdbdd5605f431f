import Foundation

/// The runtime's or the C library's last words before a crash, read from the
/// child's standard error: Swift's `Fatal error: …`, glibc's `double free or
/// corruption (!prev)`, an assertion's text.
package enum CrashReason {
    /// The trial's reason: what the child said on standard error, or else the
    /// runtime's name for the trap it hit, which an -O build prints nowhere but
    /// keeps in its debug information as an inlined frame
    /// (`Swift runtime failure: arithmetic overflow`).
    package static func message(for trial: TrialRecord) -> String? {
        // What the probe read in the process itself (glibc's abort message, the Swift
        // runtime's fatal error): the only words a program under `strain exec` leaves,
        // whose standard error strain never reads.
        if let words = trial.lastWords, let line = line(of: words) { return line }
        if let said = message(stderr: trial.stderr) { return said }
        guard let fault = trial.trace?.firstFrames.first else { return nil }
        return fault.inlined?.lazy.compactMap(\.symbol).first { $0.hasPrefix("Swift runtime failure: ") }
    }

    /// The line of a runtime's last words (several lines: SwiftNIO's precondition
    /// messages, a Rust panic, a JVM's causes) that says what went wrong: Swift's
    /// `Fatal error: …` (`Precondition failed`, `Assertion failed`) line, else the
    /// first, which continues onto the next when it ends with `:` (Rust's `panicked at
    /// src/main.rs:4:5:`, and a message of its own that ends with one, `invalid
    /// configuration:`, up to three lines in all) or when the next is libstdc++'s
    /// `what():` line.
    package static func line(of words: String) -> String? {
        let lines = words.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        if let fatal = lines.last(where: { $0.contains("Fatal error:") || $0.contains("Precondition failed") || $0.contains("Assertion failed") }) {
            return fatal
        }
        guard var said = lines.first else { return nil }
        for next in lines.dropFirst().prefix(2) {
            guard said.hasSuffix(":") || next.hasPrefix("what():") else { break }
            said += " " + next
        }
        return said
    }

    /// The message, or nil when the child said nothing recognisable.
    package static func message(stderr: String?) -> String? {
        guard let stderr else { return nil }
        let lines = stderr.split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        // Swift: "Swift/Array.swift:123: Fatal error: Index out of range" (or "Fatal error: …" alone).
        if let fatal = lines.last(where: { $0.contains("Fatal error:") || $0.contains("Precondition failed") || $0.contains("Assertion failed") }) {
            return fatal
        }
        // glibc's malloc checks and abort messages: the last line that is not the harness's own.
        let glibc = ["double free", "corrupted", "free(): ", "malloc(): ", "realloc(): ", "munmap_chunk(): ", "malloc_consolidate(): ",
                     "*** stack smashing detected", "*** buffer overflow detected", "Assertion `", "terminate called", "pure virtual method called"]
        return lines.last { line in glibc.contains { line.contains($0) } }
    }
}
