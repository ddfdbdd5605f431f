import CStrainProbe
import CStrainTools
import Foundation
import Glibc

/// Grandchildren that escaped a trial's process group.
///
/// The runner is the subreaper of its descendants, so a grandchild that called
/// `setsid` (and so outlived the kill of the trial's process group) is re-parented
/// to the runner when the trial's child ends. After each trial the runner kills and
/// reaps every child of its own that sits in another session: the trial's child
/// and the runner's helpers (llvm-symbolizer) share the runner's session, an
/// escaped grandchild does not.
enum AdoptedOrphans {
    /// Becomes the subreaper; false when the kernel refused.
    @discardableResult
    static func adopt() -> Bool { strain_runner_become_subreaper() == 0 }

    /// Kills and reaps the adopted children in another session; returns their pids.
    @discardableResult
    static func killAll() -> [pid_t] {
        let me = getpid()
        let mySession = getsid(0)
        var killed: [pid_t] = []
        for entry in (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? [] {
            guard let pid = pid_t(entry), pid != me,
                  let stat = try? String(contentsOfFile: "/proc/\(entry)/stat", encoding: .utf8),
                  let close = stat.lastIndex(of: ")") else { continue }
            // After the name in parentheses: state, ppid, pgrp, session, …
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            guard fields.count > 3, pid_t(fields[1]) == me, let session = pid_t(fields[3]), session != mySession else { continue }
            kill(pid, SIGKILL)
            killed.append(pid)
        }
        for pid in killed {
            // Bounded: a process in uninterruptible sleep is left to the kernel after a second.
            var status: Int32 = 0
            for _ in 0..<200 where waitpid(pid, &status, WNOHANG) == 0 { usleep(5_000) }
        }
        return killed
    }
}
