import Foundation
import Glibc
import StrainKit
import StrainRunner
import Testing

/// A frame larger than the guard under a stack (300 KiB on a 2 MiB thread, 3 MiB on
/// the main thread) moves the stack pointer past the guard before it touches
/// anything, so the fault lands far under the stack: the probe called it
/// `crashed(SIGSEGV)`, a bad memory access, and on a thread it did not prepare said
/// "stack bounds unknown". The stack pointer under the stack is what tells it.
@Suite(.serialized, .timeLimit(.minutes(10))) struct ExecBigFrameTests {
    static let built = AsyncOnce<String> {
        let output = TestPrograms.folder + "/bigframes"
        try await TestPrograms.compile([TestPrograms.compiler, "-O0", "-g", "-o", output, TestPrograms.sources + "/bigframes.c", "-lpthread"])
        return output
    }

    @Test(arguments: [("thread", "deep"), ("main", "eat")])
    func recursionInFramesLargerThanTheGuardIsAStackOverflowNotABadAccess(where place: String, function: String) async throws {
        let program = try await Self.built.value()
        let out = ExecTests.folder()
        defer { try? FileManager.default.removeItem(atPath: out) }
        let (result, run) = try await ExecTests.exec(program, [place], out: out)
        #expect(result.termination == .signaled(SIGSEGV), "\(result.stderr)")
        let trial = try #require(run?.trials.first, "\(result.stderr)")
        #expect(trial.outcome.kind == .stackOverflow, "\(trial.outcome): \(result.stderr)")
        let trace = try #require(trial.trace, "\(result.stderr)")
        #expect(trace.isStackOverflow)
        #expect(trace.stackLow != nil, "the stack's bounds are known: \(result.stderr)")
        #expect(trace.firstFrames.first?.symbol == function, "\(trace.firstFrames.map(\.displayName))")
        #expect(!result.stderr.contains("bad memory access"), "\(result.stderr)")
        #expect(!result.stderr.contains("stack bounds unknown"), "\(result.stderr)")
    }
}
