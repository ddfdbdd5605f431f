#if canImport(Glibc)
// Alone in this file, and without Foundation: Swift 6 refuses a reference to C's
// `stdout`, a mutable global, unless the module that declares it is imported
// `@preconcurrency`, and Foundation's import of Glibc here would not be.
@preconcurrency import Glibc
#endif

/// Strain's own standard output, as stdio holds it.
enum StandardOutput {
    /// Writes standard output a line at a time, as at a terminal. Written to a file or a
    /// pipe it was block-buffered, so where output and errors share one log (CI's
    /// `2>&1`) a notice on standard error landed before the report's last lines, mid-line.
    /// Called once, before anything is printed.
    static func bufferLines() {
        setvbuf(stdout, nil, _IOLBF, 0)
    }
}
