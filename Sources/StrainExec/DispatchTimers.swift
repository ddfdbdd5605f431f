import Foundation
import StrainRecords

/// One-shot libdispatch timers a program armed (`dispatch_after`, `dispatch_after_f`:
/// Swift's `asyncAfter`), read as the probe publishes them: `timers-PID.txt` in the probe
/// folder names the address of the latest deadline in the process's memory (CLOCK_MONOTONIC
/// nanoseconds). A program whose every thread waits while such a timer has not fired may be
/// waiting for it (re-trial 33j's NEW-8: workers waiting for an `asyncAfter` block were called
/// deadlocked, then the verdict withdrawn when it fired), and nothing outside can see it:
/// libdispatch arms one timerfd for its earliest deadline, always its own pool monitor's.
enum DispatchTimers {
    /// The longest wait for a timer: a deadline further off is judged after this (11.6 days).
    static let longestWaitSeconds = 1_000_000.0

    /// Said in the record when the watch waited for a timer before it judged.
    static let note = "--stall found every thread waiting while a Dispatch timer the program armed (asyncAfter, dispatch_after) had not fired: "
        + "it judged only after the timer's deadline"

    /// Seconds until the latest one-shot deadline process `pid` armed, when it is still to
    /// come; nil without one. The file is read as input (at most 64 bytes, one hexadecimal
    /// address); the address is the program's own, read through `/proc/PID/mem`.
    static func pendingSeconds(pid: Int32, folder: String, now: UInt64) -> Double? {
        let path = (folder as NSString).appendingPathComponent("timers-\(pid).txt")
        guard let text = ProgramFile.head(path, limit: 64)?.text,
              let line = text.split(separator: "\n").first, line.hasPrefix("0x"),
              let address = UInt64(line.dropFirst(2), radix: 16), address < UInt64(Int64.max) - 8 else { return nil }
        let descriptor = open("/proc/\(pid)/mem", O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var deadline: UInt64 = 0
        guard pread(descriptor, &deadline, 8, off_t(address)) == 8 else { return nil }
        return remaining(deadline: deadline, now: now)
    }

    /// Seconds from `now` to `deadline` (both CLOCK_MONOTONIC nanoseconds), at most
    /// `longestWaitSeconds`; nil when it has passed.
    static func remaining(deadline: UInt64, now: UInt64) -> Double? {
        guard deadline > now else { return nil }
        return min(Double(deadline - now) / 1e9, longestWaitSeconds)
    }
}
