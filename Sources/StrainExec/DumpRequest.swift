internal import CStrainProbe
internal import CStrainTools
import Foundation
import Glibc
import StrainKit
import StrainSymbols
import StrainWire

/// `strain dump PID`: asks a program started under `strain exec` for a thread
/// dump, without stopping it, and reads the dump its probe writes.
package enum DumpRequest {
    /// The dump and how it was asked for.
    package struct Answer: Sendable {
        package var dump: ThreadDump
        /// `SIGQUIT`, or the other way when the program uses SIGQUIT itself.
        package var method: String
        /// The probe's file, in the run's probe folder.
        package var file: String
        /// The process that answered: the program, also when asked with strain exec's own pid.
        package var pid: Int32 = 0
    }

    /// Asks process `pid` for a dump and waits up to `timeoutSeconds` for it.
    package static func request(pid: Int32, timeoutSeconds: Double = 5, symbolizer: Symbolizer = Symbolizer()) throws(ExecError) -> Answer {
        guard pid > 0, kill(pid, 0) == 0 || errno == EPERM else {
            throw ExecError(.input, "no process \(pid) is running; give the pid of a program started with `strain exec -- PROGRAM`")
        }
        if let program = execProgram(of: pid) {
            // `strain exec -- PROGRAM &` makes $! strain's own pid: dump the program it runs,
            // also when that strain exec runs under another (its probe is then the outer's).
            var answer = try request(pid: program, timeoutSeconds: timeoutSeconds, symbolizer: symbolizer)
            answer.method += " (process \(pid) is strain exec; asked the program it runs, process \(program))"
            return answer
        }
        if ProcFile.contents(of: "/proc/\(pid)/comm") == witnessName + "\n", let parent = parentPID(of: pid), let program = execProgram(of: parent) {
            // `pgrep -P STRAIN` lists strain exec's witness beside its program (a script
            // that dumped the first child asked the witness, which has no probe).
            var answer = try request(pid: program, timeoutSeconds: timeoutSeconds, symbolizer: symbolizer)
            answer.method += " (process \(pid) is strain exec's witness; asked the program it runs, process \(program))"
            return answer
        }
        if let program = programAbove(descendant: pid) {
            // A descendant has the probe's fault handlers but not its dump handler: SIGQUIT
            // would end it (it ended Strain's own test process, run under strain exec).
            throw ExecError(.input, "process \(pid) runs under strain exec as a descendant of its program, process \(program); only the program answers a dump request (SIGQUIT would end process \(pid)): dump process \(program)")
        }
        let maps = ProcFile.contents(of: "/proc/\(pid)/maps")
        guard maps.contains("/" + ProbeLibrary.fileName) else {
            throw ExecError(.input, maps.isEmpty
                ? "cannot read the memory map of process \(pid) (/proc/\(pid)/maps): it has ended, or it is not yours"
                : "process \(pid) was not started under strain exec (no \(ProbeLibrary.fileName) in its memory); start it with `strain exec -- PROGRAM`")
        }
        // The environment the program started with, as the kernel keeps it: the
        // probe removed its variables from the live one, not from this copy.
        let environment = ProcFile.contents(of: "/proc/\(pid)/environ").split(separator: "\0")
        guard let entry = environment.first(where: { $0.hasPrefix(ProbeEnvironment.folder + "=") }) else {
            throw ExecError(.input, "process \(pid) has the probe but no STRAIN_PROBE_DIR in its environment; was it started by another program under strain exec? Dump that program's pid")
        }
        let probe = ProbeFolder(path: String(entry.dropFirst(ProbeEnvironment.folder.count + 1)))
        let before = Set(probe.dumpFiles(pid: pid))
        let method: String
        if probe.programTookDumpSignal(pid: pid) {
            // Ignored (a script's background job starts so), or caught by a handler of its own.
            let ignored = OutsideWake.statusSignals("/proc/\(pid)/status", field: "SigIgn:")?.contains(SIGQUIT) == true
            method = "SIGSYS carrying Strain's sigqueue value (the program "
                + (ignored ? "ignores SIGQUIT: it started with SIGQUIT ignored, as a script's background job does, so kill -QUIT does nothing)"
                           : "handles SIGQUIT itself)")
            let status = strain_sigqueue(pid, SIGSYS, STRAIN_DUMP_REQUEST_VALUE)
            guard status == 0 else { throw ExecError(.input, "cannot signal process \(pid): \(String(cString: strerror(status)))") }
        } else {
            method = "SIGQUIT"
            guard kill(pid, SIGQUIT) == 0 else { throw ExecError(.input, "cannot signal process \(pid): \(String(cString: strerror(errno)))") }
        }
        let deadline = strain_monotonic_ns() &+ UInt64(max(0.1, timeoutSeconds) * 1e9)
        var cuts = ProbeFolder.Cuts()
        while strain_monotonic_ns() < deadline {
            if let file = probe.dumpFiles(pid: pid).last(where: { !before.contains($0) }),
               let raw = ProbeFolder.readDump(file, cuts: &cuts) {
                return Answer(dump: ThreadDumpBuilder(symbolizer: symbolizer).dump(from: raw), method: method, file: file, pid: pid)
            }
            usleep(10_000)
        }
        throw ExecError(.noAnswer, "process \(pid) wrote no dump within \(String(format: "%g", timeoutSeconds))s of \(method) (every thread may block it, or a dump is already under way)")
    }

    /// When `pid` has the probe but is not the program of a `strain exec` (its parent is
    /// not that `strain exec`), and an ancestor of it is: that program's pid. Nil for the
    /// program itself, and for a process no `strain exec` is above (it may have ended:
    /// the request then goes ahead as before).
    static func programAbove(descendant pid: Int32) -> Int32? {
        guard hasProbe(pid) else { return nil }
        var child = pid
        // At most 64 levels: a tree deeper than that is not walked.
        for _ in 0..<64 {
            guard let parent = parentPID(of: child), parent > 1 else { return nil }
            if execProgram(of: parent) == child { return child == pid ? nil : child }
            child = parent
        }
        return nil
    }

    /// The parent pid in `/proc/PID/stat` (field 4), nil when it cannot be read.
    static func parentPID(of pid: Int32) -> Int32? {
        let stat = ProcFile.contents(of: "/proc/\(pid)/stat")
        guard let close = stat.lastIndex(of: ")") else { return nil }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        return fields.count > 1 ? Int32(fields[1]) : nil
    }

    /// The name `strain exec`'s witness gives itself.
    static let witnessName = STRAIN_WITNESS_NAME

    static func hasProbe(_ pid: Int32) -> Bool {
        ProcFile.contents(of: "/proc/\(pid)/maps").contains("/" + ProbeLibrary.fileName)
    }

    /// When `pid` is a `strain exec` supervisor, the pid of the one program it runs
    /// (its child with the probe and Strain's probe folder in its environment; not its
    /// witness, `exec-witness`, which a `strain exec` run under another inherits both from).
    static func execProgram(of pid: Int32) -> Int32? {
        let arguments = ProcFile.contents(of: "/proc/\(pid)/cmdline").split(separator: "\0")
        guard arguments.count >= 2, arguments[1] == "exec" else { return nil }
        let children = ProcFile.contents(of: "/proc/\(pid)/task/\(pid)/children").split(separator: " ").compactMap { Int32($0) }
        let programs = children.filter { child in
            ProcFile.contents(of: "/proc/\(child)/comm") != witnessName + "\n" && hasProbe(child) && ProcFile.contents(of: "/proc/\(child)/environ").split(separator: "\0").contains { $0.hasPrefix(ProbeEnvironment.folder + "=") }
        }
        return programs.count == 1 ? programs[0] : nil
    }
}
