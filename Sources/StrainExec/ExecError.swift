import Foundation

/// Why `strain exec` or `strain dump` could not do its work, with the exit code
/// that says so. `strain exec` otherwise exits with its program's own status, so
/// its own failures use the codes `env(1)` and `timeout(1)` use for theirs.
package struct ExecError: Error, Sendable, CustomStringConvertible {
    /// What went wrong, and the code it exits with.
    package enum Code: Int32, Sendable {
        /// strain's own setup failed (no probe library, an unusable --out): 125.
        case setup = 125
        /// The program exists but could not be run (not executable, a bad format): 126.
        case cannotRun = 126
        /// No such program (not a path, not on PATH): 127.
        case notFound = 127
        /// `strain dump`: a bad PID, or a process not started under `strain exec`: 2.
        case input = 2
        /// `strain dump`: the process did not answer in time: 3.
        case noAnswer = 3
    }

    package var code: Code
    package var message: String

    package init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    package var description: String { message }
}
