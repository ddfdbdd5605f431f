import Foundation
import Glibc
import StrainKit
import StrainRunner
import Testing

/// A call through a NULL function pointer faults with the instruction pointer at 0,
/// where there is no unwind information: the trace said "at least 0 frames". The
/// call pushed its return address at the stack pointer (x86-64), and the walk goes on
/// from there, as gdb's `bt` does (`#0 0x0` ← the caller ← …).
@Suite(.serialized, .timeLimit(.minutes(10))) struct ExecNullCallTests {
    static let built = AsyncOnce<String> {
        let output = TestPrograms.folder + "/nullcall"
        try await TestPrograms.compile([TestPrograms.compiler, "-O0", "-g", "-o", output, TestPrograms.sources + "/nullcall.c"])
        return output
    }

    /// gdb's `bt` of `program` run to its fault: each frame's function (`??` for none),
    /// innermost first; nil when gdb is not installed.
    static func gdbFunctions(_ program: String) async throws -> [String]? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
        guard path.split(separator: ":").contains(where: { FileManager.default.isExecutableFile(atPath: "\($0)/gdb") }) else { return nil }
        // A test process's SIGCHLD may be blocked in the thread that spawns, and gdb waits
        // for its inferior through SIGCHLD: env's --default-signal unblocks it (coreutils 8.31+).
        let result = try await ProgramRun.run("/usr/bin/env", ["--default-signal=CHLD", "gdb", "-q", "-batch", "-nx", "-ex", "run", "-ex", "bt", program], timeout: 60)
        // `#0  0x0000000000000000 in ?? ()`, `#1  0x… in dispatch (event=1) at nullcall.c:4`, `#3  main () at …`.
        return result.stdout.split(separator: "\n").filter { $0.hasPrefix("#") }.compactMap { line in
            let words = line.split(separator: " ")
            if let index = words.firstIndex(of: "in"), index + 1 < words.count { return String(words[index + 1]) }
            return words.count > 1 ? String(words[1]) : nil
        }
    }

    @Test func aCallThroughANullDispatchTableEntryIsTracedFromItsCallerAsGDBDoes() async throws {
        let program = try await Self.built.value()
        let out = ExecTests.folder()
        defer { try? FileManager.default.removeItem(atPath: out) }
        let (result, run) = try await ExecTests.exec(program, [], out: out)
        #expect(result.termination == .signaled(SIGSEGV), "\(result.stderr)")
        let trial = try #require(run?.trials.first)
        // A program run with no arguments is named without an empty `arguments=` (re-trial 35p, F18).
        #expect(trial.key.configuration == "exec[program=\(program)]", "\(trial.key)")
        #expect(trial.outcome.kind == .crashed, "\(trial.outcome): \(trial.outcome.message ?? "")")
        let trace = try #require(trial.trace, "\(result.stderr)")
        #expect(trace.faultAddress == 0)
        #expect(trace.walkStoppedShort != true, "the walk reached the thread's entry")
        #expect(!result.stderr.contains("at least 0 frames"), "\(result.stderr)")
        let frames = trace.firstFrames
        #expect(frames.first?.address == 0, "the first frame is where the call went: \(frames.map(\.displayName))")
        let named = frames.dropFirst().prefix(3).map { $0.symbol ?? "?" }
        #expect(named == ["dispatch", "on_request", "main"], "\(frames.map(\.displayName))")
        #expect(frames.dropFirst().first?.line == 4, "the call's line in dispatch: \(frames.map(\.displayName))")
        #expect(result.stderr.contains("#1  dispatch at nullcall.c:4"), "\(result.stderr)")

        guard let gdb = try await Self.gdbFunctions(program) else {
            print("gdb is not installed: the comparison of the trace with gdb's bt is skipped (Debian: apt-get install gdb)")
            return
        }
        // gdb stops at main; the probe's trace goes on to __libc_start_main and _start.
        #expect(gdb.count >= 4, "gdb's bt: \(gdb)")
        #expect(Array(frames.prefix(gdb.count).map { $0.address == 0 ? "??" : ($0.symbol ?? "?") }) == gdb,
                "frame for frame as gdb's bt: \(gdb) against \(frames.map(\.displayName))")
    }
}
