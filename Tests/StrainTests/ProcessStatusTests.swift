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

    @Test func aRealProcesssStatusAgreesWithTheKernelsThreadCount() async throws {
        // A quiet process of a known shape (a shell waiting on sleep: one thread), not the
        // test runner itself, whose parallel suites start and end threads between the two
        // reads (24 apart in a CI run beside other suites).
        let child = Process()
        child.executableURL = URL(fileURLWithPath: "/bin/sleep")
        child.arguments = ["30"]
        try child.run()
        defer { kill(child.processIdentifier, SIGKILL); child.waitUntilExit() } // off the pool: the reap of a child just killed
        let pid = child.processIdentifier
        // The exec may not have happened yet: wait (bounded) until the kernel names it sleep.
        for _ in 0..<200 where ((try? String(contentsOfFile: "/proc/\(pid)/comm", encoding: .utf8)) ?? "") != "sleep\n" { await pause(10_000) }
        let status = try #require(ProcessStatus.read("/proc/\(pid)/status"))
        let tasks = try FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task").count
        #expect(status.threads == 1 && tasks == 1, "\(status), \(tasks) tasks")
        #expect((status.peakRSSBytes ?? 0) >= (status.residentBytes ?? 0) && (status.residentBytes ?? 0) > 0)
        let own = try #require(ProcessStatus.read("/proc/self/status"))
        #expect((own.threads ?? 0) >= 1 && (own.residentBytes ?? 0) > 1 << 20)
        #expect(ProcessStatus.read("/proc/self/no-such-file") == nil)
    }
}
