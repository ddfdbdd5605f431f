internal import CStrainTools
import Foundation
import Glibc

/// The program `strain exec` runs, started with posix_spawnp on strain's own
/// terminal and in its process group: its standard input, output and error are
/// its own, untouched, and a terminal's Ctrl-C reaches it as it would without Strain.
struct ProgramProcess {
    let pid: pid_t
    /// Polls readable when the program ends; -1 on a kernel without pidfd_open.
    let endDescriptor: Int32

    static func spawn(program: String, arguments: [String], environment: [String]) throws(ExecError) -> ProgramProcess {
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var noSignals = sigset_t()
        sigemptyset(&noSignals)
        posix_spawnattr_setsigmask(&attributes, &noSignals)
        // strain ignores SIGPIPE for itself; its program gets the default back.
        var defaults = sigset_t()
        sigemptyset(&defaults)
        sigaddset(&defaults, SIGPIPE)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

        let argv = ([program] + arguments).map { strdup($0) } + [nil]
        let envp = environment.map { strdup($0) } + [nil]
        defer {
            argv.forEach { free($0) }
            envp.forEach { free($0) }
        }
        var pid: pid_t = 0
        let status = posix_spawnp(&pid, program, nil, &attributes, argv, envp)
        guard status == 0 else {
            let reason = String(cString: strerror(status))
            switch status {
            case ENOENT: throw ExecError(.notFound, "cannot run \(program): \(reason) (not a path to a program, and not found on PATH)")
            default: throw ExecError(.cannotRun, "cannot run \(program): \(reason)")
            }
        }
        let descriptor = strain_pidfd_open(pid)
        return ProgramProcess(pid: pid, endDescriptor: descriptor >= 0 ? descriptor : -1)
    }

    /// Waits up to `milliseconds` for the program to end: its status and resource
    /// use, or nil while it runs.
    func waitForEnd(milliseconds: Int32) -> (TerminationStatus, rusage)? {
        if endDescriptor >= 0 {
            var descriptor = pollfd(fd: endDescriptor, events: Int16(POLLIN), revents: 0)
            _ = poll(&descriptor, 1, milliseconds)
        } else {
            usleep(UInt32(max(1, min(milliseconds, 10))) * 1000)
        }
        var status: Int32 = 0
        var usage = rusage()
        let reaped = wait4(pid, &status, WNOHANG, &usage)
        guard reaped == pid, let termination = TerminationStatus(waitStatus: status) else { return nil }
        if endDescriptor >= 0 { close(endDescriptor) }
        return (termination, usage)
    }
}
