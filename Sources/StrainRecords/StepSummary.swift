import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// GitHub's step summary, `$GITHUB_STEP_SUMMARY`: appended to only when it is a regular
/// file. The variable is the environment's, so it can name a FIFO no one reads (opening
/// it for writing would wait for a reader for good: `run --github` was still blocked 9
/// minutes after SIGTERM) or a device.
public enum StepSummary {
    /// Why the summary was not appended.
    public struct Refusal: Error, Sendable, CustomStringConvertible {
        /// What the path is, and that nothing was written.
        public var description: String
    }

    /// The bytes the summary holds already; 0 when it is not a regular file.
    public static func heldBytes(_ path: String) -> Int {
        var info = stat()
        guard stat(path, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { return 0 }
        return Int(info.st_size)
    }

    /// Appends `text` to the regular file at `path` (made when it does not exist).
    ///
    /// Opened without blocking (`O_NONBLOCK`: a FIFO with no reader fails at once with
    /// ENXIO), then looked at through the descriptor: anything but a regular file is
    /// refused before a byte is written.
    public static func append(_ text: String, to path: String) throws(Refusal) {
        // The runner shows the summary, and a step may print it: no line of it starts a workflow command.
        let text = OneLine.withoutWorkflowCommands(text)
        let descriptor = open(path, O_WRONLY | O_APPEND | O_CREAT | O_NONBLOCK | O_CLOEXEC | O_NOCTTY, 0o644)
        guard descriptor >= 0 else {
            let code = errno
            throw Refusal(description: code == ENXIO ? "\(path) is a FIFO no one reads; the step summary is written only to a regular file"
                                                     : "\(path) cannot be opened (\(String(cString: strerror(code))))")
        }
        defer { close(descriptor) }
        var info = stat()
        guard fstat(descriptor, &info) == 0, info.st_mode & S_IFMT == S_IFREG else {
            throw Refusal(description: "\(path) is not a regular file (a FIFO, a device or a socket); the step summary is written only to a regular file")
        }
        // A regular file never returns EAGAIN; O_NONBLOCK is kept for the open alone.
        var bytes = Array(text.utf8)[...]
        while !bytes.isEmpty {
            let written = bytes.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
            if written < 0, errno == EINTR { continue }
            guard written > 0 else { throw Refusal(description: "\(path) could not be written (\(String(cString: strerror(errno))))") }
            bytes = bytes.dropFirst(written)
        }
    }
}
