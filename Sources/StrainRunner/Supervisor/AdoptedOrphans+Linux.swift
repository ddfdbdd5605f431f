internal import CStrainProbe
internal import CStrainTools
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
        for pid in children() {
            guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
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
            for _ in 0..<200 {
                guard waitpid(pid, &status, WNOHANG) == 0 else { break }
                usleep(5_000)
            }
        }
        return killed
    }

    /// The runner's children: each of its threads lists its own in
    /// /proc/self/task/TID/children (an adopted orphan among them), far cheaper
    /// than reading the stat of every process on the machine.
    static func children() -> [pid_t] {
        var pids: [pid_t] = []
        for task in (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? [] {
            guard let text = try? String(contentsOfFile: "/proc/self/task/\(task)/children", encoding: .utf8) else { continue }
            pids += text.split(separator: " ").compactMap { pid_t($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
        }
        return pids
    }
}
