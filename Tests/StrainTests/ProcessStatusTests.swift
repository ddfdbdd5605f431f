import Foundation
@testable import StrainRunner
@testable import StrainWire
import Testing

/// /proc/PID/status read without Foundation: the fields the harness uses, from
/// a real file and from text with the shapes the kernel writes.
struct ProcessStatusTests {
    @Test func theThreadsPeakAndResidentFieldsAreReadInBytes() {
        let text = "Name:\tstrain\nThreads:\t3\nVmPeak:\t  99 kB\nVmHWM:\t   20480 kB\nVmRSS:\t   10240 kB\nSigQ:\t0/95000\n"
        let status = ProcessStatus.parse(Array(text.utf8)[...])
        #expect(status == ProcessStatus(threads: 3, peakRSSBytes: 20480 * 1024, residentBytes: 10240 * 1024))
    }

    @Test func missingMalformedAndOverlongFieldsAreLeftOut() {
        let text = "Threads:\t\nVmHWM:\tlots kB\nVmRSS:\t99999999999999999999999 kB\nThreadsX: 4"
        #expect(ProcessStatus.parse(Array(text.utf8)[...]) == ProcessStatus())
        #expect(ProcessStatus.parse([][...]) == ProcessStatus())
    }

    @Test func thisProcesssOwnStatusAgreesWithTheKernelsThreadCount() throws {
        let status = try #require(ProcessStatus.read("/proc/self/status"))
        let tasks = try FileManager.default.contentsOfDirectory(atPath: "/proc/self/task").count
        // Threads may come and go between the two reads (the test runner's pool).
        #expect(abs((status.threads ?? 0) - tasks) <= 4)
        #expect((status.peakRSSBytes ?? 0) >= (status.residentBytes ?? 0) && (status.residentBytes ?? 0) > 1 << 20)
        #expect(ProcessStatus.read("/proc/self/no-such-file") == nil)
    }
}
