import CStrainProbe
import CStrainTools
import Foundation
import Glibc
import StrainKit

/// `strain dump PID`: asks a program started under `strain exec` for a thread
/// dump, without stopping it, and reads the dump its probe writes.
public enum DumpRequest {
    /// The dump and how it was asked for.
    public struct Answer: Sendable {
        public var dump: ThreadDump
        /// `SIGQUIT`, or the other way when the program uses SIGQUIT itself.
        public var method: String
        /// The probe's file, in the run's probe folder.
        public var file: String
    }

    /// Asks process `pid` for a dump and waits up to `timeoutSeconds` for it.
    public static func request(pid: Int32, timeoutSeconds: Double = 5, symbolizer: Symbolizer = Symbolizer()) throws(ExecError) -> Answer {
        guard pid > 0, kill(pid, 0) == 0 || errno == EPERM else {
            throw ExecError(.input, "no process \(pid) is running; give the pid of a program started with `strain exec -- PROGRAM`")
        }
        let maps = Watchdog.contents(of: "/proc/\(pid)/maps")
        guard maps.contains("/" + ProbeLibrary.fileName) else {
            throw ExecError(.input, maps.isEmpty
                ? "cannot read the memory map of process \(pid) (/proc/\(pid)/maps): it has ended, or it is not yours"
                : "process \(pid) was not started under strain exec (no \(ProbeLibrary.fileName) in its memory); start it with `strain exec -- PROGRAM`")
        }
        // The environment the program started with, as the kernel keeps it: the
        // probe removed its variables from the live one, not from this copy.
        let environment = Watchdog.contents(of: "/proc/\(pid)/environ").split(separator: "\0")
        guard let entry = environment.first(where: { $0.hasPrefix("STRAIN_PROBE_DIR=") }) else {
            throw ExecError(.input, "process \(pid) has the probe but no STRAIN_PROBE_DIR in its environment; was it started by another program under strain exec? Dump that program's pid")
        }
        let probe = ProbeFolder(path: String(entry.dropFirst("STRAIN_PROBE_DIR=".count)))
        let before = Set(probe.dumpFiles(pid: pid))
        let method: String
        if probe.programTookDumpSignal(pid: pid) {
            method = "SIGSYS carrying Strain's sigqueue value (the program handles SIGQUIT itself)"
            let status = strain_sigqueue(pid, SIGSYS, STRAIN_DUMP_REQUEST_VALUE)
            guard status == 0 else { throw ExecError(.input, "cannot signal process \(pid): \(String(cString: strerror(status)))") }
        } else {
            method = "SIGQUIT"
            guard kill(pid, SIGQUIT) == 0 else { throw ExecError(.input, "cannot signal process \(pid): \(String(cString: strerror(errno)))") }
        }
        let deadline = strain_monotonic_ns() &+ UInt64(max(0.1, timeoutSeconds) * 1e9)
        while strain_monotonic_ns() < deadline {
            if let file = probe.dumpFiles(pid: pid).last(where: { !before.contains($0) }),
               let text = try? String(contentsOfFile: file, encoding: .utf8), let raw = ProbeFolder.parseDump(text) {
                return Answer(dump: ThreadDumpBuilder(symbolizer: symbolizer).dump(from: raw), method: method, file: file)
            }
            usleep(10_000)
        }
        throw ExecError(.noAnswer, "process \(pid) wrote no dump within \(String(format: "%g", timeoutSeconds))s of \(method) (every thread may block it, or a dump is already under way)")
    }
}
