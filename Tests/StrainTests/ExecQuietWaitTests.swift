import Foundation
import StrainKit
import Testing

/// `strain exec --stall` asks a quiet program for its stacks; a dump asked with a signal
/// ends a wait in poll, select, epoll or a sleep with EINTR whatever SA_RESTART says, and
/// a program that does not retry fails (Foundation's FileHandle dies of a fatal error on
/// EINTR, as it did when Strain's own `swift test` ran under `strain exec --stall 60s`).
/// Such a program's dump is taken with ptrace, and the program runs as it does alone.
@Suite(.serialized, .timeLimit(.minutes(10))) struct ExecQuietWaitTests {
    static let built = AsyncOnce<String> {
        let program = TestPrograms.folder + "/quietwaits"
        try await TestPrograms.compile([TestPrograms.compiler, "-O0", "-g", "-o", program, TestPrograms.sources + "/quietwaits.c"])
        return program
    }

    @Test func aProgramPollingQuietlyForItsChildRunsAsAloneUnderTheStallWatch() async throws {
        let program = try await Self.built.value()
        let alone = try await ProgramRun.run(program, ["poll"], timeout: 30)
        #expect(alone.termination == .exited(0) && alone.stdout == "got x\n", "alone: \(alone.stdout)")

        // The program and its child are quiet for 3 s: the watch asks for a dump after 0.5 s
        // (with a signal, the program printed "poll failed: Interrupted system call" and exited 1).
        let out = ExecTests.folder()
        defer { try? FileManager.default.removeItem(atPath: out) }
        let result = try await ProgramRun.run(StrainBinary.path, ["exec", "--stall", "500ms", "--out", out, "--", program, "poll"], timeout: 60)
        #expect(result.termination == .exited(0), "as alone: \(result.stdout) \(result.stderr.suffix(1500))")
        #expect(result.stdout == "got x\n", "the program's own output, as alone: \(result.stdout)")
    }
}
