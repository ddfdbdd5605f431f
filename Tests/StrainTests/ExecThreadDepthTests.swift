import Foundation
import StrainKit
import StrainRunner
import Testing

/// A thread started through the probe's pthread_create ran its start routine under the
/// probe's own frame: 176 bytes deeper (a 64 KiB pthread overflowed at 1,092 frames under
/// strain exec against 1,094 alone). The start routine now runs where it runs alone.
@Suite(.serialized, .timeLimit(.minutes(10))) struct ExecThreadDepthTests {
    static let built = AsyncOnce<String> {
        let output = TestPrograms.folder + "/threaddepth"
        try await TestPrograms.compile([TestPrograms.compiler, "-O0", "-g", "-o", output, TestPrograms.sources + "/threaddepth.c", "-lpthread"])
        return output
    }

    @Test func aThreadStartedThroughTheProbeBeginsAsDeepInItsStackAsAlone() async throws {
        let program = try await Self.built.value()
        let alone = try await ProgramRun.run(program, [])
        let out = ExecTests.folder()
        defer { try? FileManager.default.removeItem(atPath: out) }
        let (probed, _) = try await ExecTests.exec(program, [], out: out)
        #expect(alone.termination == .exited(0) && probed.termination == .exited(0), "\(probed.stderr)")
        #expect(alone.stdout.hasPrefix("used "), "\(alone.stdout)")
        #expect(probed.stdout == alone.stdout, "bytes of the thread's stack in use at its start: under strain exec \(probed.stdout), alone \(alone.stdout)")
    }
}
