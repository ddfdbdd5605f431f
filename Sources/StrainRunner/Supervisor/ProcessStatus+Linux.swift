import Foundation

/// The lines of /proc/PID/status the harness reads.
///
/// Peak RSS comes from `VmHWM`, not getrusage: a child started with
/// posix_spawn (vfork semantics) inherits the parent's `ru_maxrss` across exec,
/// while `VmHWM` belongs to the child's own address space.
struct ProcessStatus {
    var threads: Int?
    var peakRSSBytes: Int?
    /// Resident now (`VmRSS`).
    var residentBytes: Int?

    static func read(_ path: String) -> ProcessStatus? {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return nil }
        var status = ProcessStatus()
        for line in text.split(separator: "\n") {
            if line.hasPrefix("Threads:") {
                status.threads = Int(line.dropFirst("Threads:".count).trimmingCharacters(in: .whitespaces))
            } else if line.hasPrefix("VmHWM:") {
                let value = line.dropFirst("VmHWM:".count).trimmingCharacters(in: .whitespaces).split(separator: " ").first
                status.peakRSSBytes = value.flatMap { Int($0) }.map { $0 * 1024 }
            } else if line.hasPrefix("VmRSS:") {
                let value = line.dropFirst("VmRSS:".count).trimmingCharacters(in: .whitespaces).split(separator: " ").first
                status.residentBytes = value.flatMap { Int($0) }.map { $0 * 1024 }
            }
        }
        return status
    }
}
