import Glibc

/// posix_spawn for every process the runner starts, written once: a trial, the trial
/// server, and `strain exec`'s program. The attributes (a process group of the child's
/// own, or the runner's for a program that owns the terminal; no signal blocked; the
/// default action back for the signals the runner handles or ignores itself), the
/// argument and environment marshalling, and the reaping.
package enum ProcessSpawn {
    /// The signals the runner handles or ignores itself, which a trial gets back at their default.
    package static let runnersSignals = [SIGPIPE, SIGTERM, SIGINT, SIGSEGV, SIGBUS, SIGILL, SIGABRT, SIGFPE, SIGTRAP]

    /// Starts `executable` (looked up on PATH when `searchPath`); the status is posix_spawn's.
    package static func start(_ executable: String, arguments: [String], environment: [String], actions: UnsafeMutablePointer<posix_spawn_file_actions_t>?,
                      ownGroup: Bool, searchPath: Bool = false, defaultSignals: [Int32]) -> (status: Int32, pid: Int32) {
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var flags = POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF
        if ownGroup {
            posix_spawnattr_setpgroup(&attributes, 0)
            flags |= POSIX_SPAWN_SETPGROUP
        }
        var noSignals = sigset_t()
        sigemptyset(&noSignals)
        posix_spawnattr_setsigmask(&attributes, &noSignals)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for signal in defaultSignals { sigaddset(&defaults, signal) }
        defaultGlibcsOwnSignals(in: &defaults)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(flags))

        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        let envp = environment.map { strdup($0) } + [nil]
        defer {
            argv.forEach { free($0) }
            envp.forEach { free($0) }
        }
        var pid: Int32 = 0
        let fileActions = actions.map { UnsafePointer($0) }
        let status = searchPath
            ? posix_spawnp(&pid, executable, fileActions, &attributes, argv, envp)
            : posix_spawn(&pid, executable, fileActions, &attributes, argv, envp)
        return (status, pid)
    }

    /// Reaps `pid` if it has ended, without waiting: its status and resource use, or
    /// nil while it runs (or is only stopped by a ptrace walk).
    package static func reapIfEnded(_ pid: Int32) -> (TerminationStatus, rusage)? {
        var status: Int32 = 0
        var usage = rusage()
        guard wait4(pid, &status, WNOHANG, &usage) == pid else { return nil }
        return TerminationStatus(waitStatus: status).map { ($0, usage) }
    }
}
