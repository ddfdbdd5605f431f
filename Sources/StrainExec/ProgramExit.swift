internal import CStrainTools

/// How `strain exec` ends when its program ended by a signal.
///
/// The CLI imports no C; this is its one way to end like the program did.
package enum ProgramExit {
    /// Ends this process by `signal`, as its program ended (no core of its own),
    /// so a caller of `strain exec` sees the program's status: 139 for SIGSEGV.
    package static func likeSignal(_ signal: Int32) -> Never {
        strain_exit_like_signal(signal)
    }
}
