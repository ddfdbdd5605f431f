import Foundation
import Testing

/// The smaller findings of a hostile corpus, through the built binary: a step summary
/// that is a FIFO.
@Suite struct HostileInputRefusalTests {
    @Test func aStepSummaryThatIsAFIFOIsRefusedWithAWarningInsteadOfBlockingTheGate() async throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let fifo = folder + "/summary"
        #expect(mkfifo(fifo, 0o600) == 0)
        // No one reads the FIFO: opening it for writing would wait for good.
        let result = try StrainBinary.run(["gate", RecordBoundsTests.fixture, "--baseline", RecordBoundsTests.fixture, "--out", folder + "/gate", "--format", "github"],
                                          timeout: 60, environment: ["GITHUB_STEP_SUMMARY": fifo])
        #expect(result.status == 3, "\(result.stdout)\n\(result.stderr)")  // the fixture holds a harness error
        #expect(result.stderr.contains("warning: could not append to $GITHUB_STEP_SUMMARY (\(fifo)): \(fifo) is a FIFO no one reads"), "\(result.stderr)")
        #expect(result.stdout.contains("::notice title=Strain gate::"), "\(result.stdout)")
    }

    @Test func aStepSummaryThatIsARegularFileIsStillAppendedTo() async throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let summary = folder + "/summary.md"
        try "before\n".write(toFile: summary, atomically: true, encoding: .utf8)
        let result = try StrainBinary.run(["gate", RecordBoundsTests.fixture, "--baseline", RecordBoundsTests.fixture, "--out", folder + "/gate", "--format", "github"],
                                          timeout: 60, environment: ["GITHUB_STEP_SUMMARY": summary])
        #expect(result.status == 3, "\(result.stderr)")
        let text = try String(contentsOfFile: summary, encoding: .utf8)
        #expect(text.hasPrefix("before\n") && text.count > 100, "\(text)")
    }
}
