import Foundation
import Glibc

/// The lines of /proc/PID/status the harness reads.
///
/// Peak RSS comes from `VmHWM`, not getrusage: a child started with
/// posix_spawn (vfork semantics) inherits the parent's `ru_maxrss` across exec,
/// while `VmHWM` belongs to the child's own address space.
package struct ProcessStatus: Equatable {
    package var threads: Int?
    package var peakRSSBytes: Int?
    /// Resident now (`VmRSS`).
    package var residentBytes: Int?

    package init(threads: Int? = nil, peakRSSBytes: Int? = nil, residentBytes: Int? = nil) {
        self.threads = threads
        self.peakRSSBytes = peakRSSBytes
        self.residentBytes = residentBytes
    }

    /// Reads and parses the file with plain `read(2)`: the runner reads a child's
    /// status at every sample and a trial its own at its end, and Foundation's
    /// file reading and character sets cost a copy of the trial server more than
    /// the rest of a `noop` trial's measuring.
    package static func read(_ path: String) -> ProcessStatus? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var bytes = [UInt8](repeating: 0, count: 16384)
        var length = 0
        while length < bytes.count {
            let count = bytes.withUnsafeMutableBytes { buffer in
                Glibc.read(descriptor, buffer.baseAddress! + length, buffer.count - length)
            }
            if count < 0 {
                if errno == EINTR { continue }
                return nil
            }
            if count == 0 { break }
            length += count
        }
        return parse(bytes[0..<length])
    }

    /// The fields of a status file's text (`Threads:`, `VmHWM:` and `VmRSS:`, the
    /// last two in kB).
    package static func parse(_ text: ArraySlice<UInt8>) -> ProcessStatus {
        var status = ProcessStatus()
        var lineStart = text.startIndex
        while lineStart < text.endIndex {
            let lineEnd = text[lineStart...].firstIndex(of: UInt8(ascii: "\n")) ?? text.endIndex
            let line = text[lineStart..<lineEnd]
            if let value = Self.number(after: "Threads:", in: line) {
                status.threads = value
            } else if let value = Self.number(after: "VmHWM:", in: line) {
                status.peakRSSBytes = value * 1024
            } else if let value = Self.number(after: "VmRSS:", in: line) {
                status.residentBytes = value * 1024
            }
            lineStart = lineEnd < text.endIndex ? text.index(after: lineEnd) : lineEnd
        }
        return status
    }

    /// The decimal number after `prefix` and blanks on `line`; nil when the line
    /// has another prefix or no digits there (or more than fit an Int).
    private static func number(after prefix: StaticString, in line: ArraySlice<UInt8>) -> Int? {
        let prefixBytes = UnsafeBufferPointer(start: prefix.utf8Start, count: prefix.utf8CodeUnitCount)
        guard line.count >= prefixBytes.count, line.prefix(prefixBytes.count).elementsEqual(prefixBytes) else { return nil }
        var index = line.startIndex + prefixBytes.count
        while index < line.endIndex, line[index] == UInt8(ascii: " ") || line[index] == UInt8(ascii: "\t") { index += 1 }
        var value = 0
        var digits = 0
        while index < line.endIndex, line[index] >= UInt8(ascii: "0"), line[index] <= UInt8(ascii: "9") {
            let (times, overflowA) = value.multipliedReportingOverflow(by: 10)
            let (sum, overflowB) = times.addingReportingOverflow(Int(line[index] - UInt8(ascii: "0")))
            guard !overflowA, !overflowB else { return nil }
            value = sum
            digits += 1
            index += 1
        }
        return digits > 0 ? value : nil
    }
}
