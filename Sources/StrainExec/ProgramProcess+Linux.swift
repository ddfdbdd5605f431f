internal import CStrainTools
import Foundation
import Glibc
import StrainRunner

/// The program `strain exec` runs, started with posix_spawnp on strain's own
/// terminal and in its process group: its standard input, output and error are
/// its own, untouched, and a terminal's Ctrl-C reaches it as it would without Strain.
struct ProgramProcess {
    let pid: pid_t
    /// Polls readable when the program ends; -1 on a kernel without pidfd_open.
    let endDescriptor: Int32

    static func spawn(program: String, arguments: [String], environment: [String]) throws(ExecError) -> ProgramProcess {
        // strain ignores SIGPIPE for itself; its program gets the default back, unless strain
        // was started with it ignored (`trap '' PIPE`), as the program would have been.
        let (status, pid) = ProcessSpawn.start(program, arguments: arguments, environment: environment, actions: nil,
                                               ownGroup: false, searchPath: true, defaultSignals: strain_started_ignoring_signal(SIGPIPE) == 1 ? [] : [SIGPIPE])
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
        guard let ended = ProcessSpawn.reapIfEnded(pid) else { return nil }
        if endDescriptor >= 0 { close(endDescriptor) }
        return ended
    }
}
