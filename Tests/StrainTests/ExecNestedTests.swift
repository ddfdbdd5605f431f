import Foundation
import StrainKit
import Testing

/// A `strain exec` inside a program under `strain exec` (a test suite of Strain's own run
/// under `strain exec --stall`, a tool that calls strain exec) probes its own program: the
/// outer probe leaves the inner strain's program as the inner strain started it. Before,
/// the outer probe rewrote that program's probe variables to its own folder, and the
/// inner strain called its program's overflow "a fault in a process Strain did not probe".
@Suite(.serialized, .timeLimit(.minutes(10))) struct ExecNestedTests {
    @Test func aStrainExecInsideAProgramUnderStrainExecTracesItsOwnProgramsOverflow() async throws {
        let programs = try await TestPrograms.c()
        let outer = ExecTests.folder()
        let inner = ExecTests.folder()
        defer {
            try? FileManager.default.removeItem(atPath: outer)
            try? FileManager.default.removeItem(atPath: inner)
        }
        let (result, _) = try await ExecTests.exec(StrainBinary.path, ["exec", "--out", inner, "--", programs.faults, "thread-overflow"], out: outer)
        let record = try RunRecordFile.read(from: (inner as NSString).appendingPathComponent("run.json"))
        let trial = try #require(record.trials.first)
        #expect(trial.outcome.kind == .stackOverflow, "the inner strain's program: \(trial.outcome): \(result.stderr.suffix(1500))")
        #expect(trial.trace?.firstFrames.isEmpty == false, "with its trace")
        // The inner program's probe wrote its fault record into the inner strain's folder.
        let innerProbe = (try? FileManager.default.contentsOfDirectory(atPath: (inner as NSString).appendingPathComponent("probe"))) ?? []
        #expect(innerProbe.contains { $0.hasPrefix("fault-") }, "\(innerProbe)")
    }
}
