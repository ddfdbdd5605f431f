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
            guard let stat = smallFile("/proc/\(pid)/stat"), let close = stat.lastIndex(of: ")") else { continue }
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
    ///
    /// Read with `readdir` and `read(2)`: this runs after every trial, inside its
    /// `trialSeconds`, and Foundation's directory listing and file reading cost a
    /// `noop` trial about 0.1 ms (a CPU profile of 300 trials).
    static func children() -> [pid_t] {
        guard let directory = opendir("/proc/self/task") else { return [] }
        defer { closedir(directory) }
        var pids: [pid_t] = []
        while let entry = readdir(directory) {
            let task = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            guard task.first?.isNumber == true, let text = smallFile("/proc/self/task/\(task)/children") else { continue }
            pids += text.split(whereSeparator: { $0 == " " || $0 == "\n" }).compactMap { pid_t($0) }
        }
        return pids
    }

    /// A /proc file of at most 4 KiB (a stat line, a children list), nil when it cannot be read.
    private static func smallFile(_ path: String) -> String? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 4096) { buffer -> String? in
            var length = 0
            while length < buffer.count {
                let count = read(descriptor, buffer.baseAddress! + length, buffer.count - length)
                if count < 0, errno == EINTR { continue }
                if count < 0 { return nil }
                if count == 0 { break }
                length += count
            }
            return String(decoding: buffer[0..<length], as: UTF8.self)
        }
    }
}
