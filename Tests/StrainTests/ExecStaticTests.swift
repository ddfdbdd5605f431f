import Foundation
import Glibc
import StrainKit
import StrainRunner
import Testing

/// A statically linked program (a plain `go build`, `gcc -static`) has no dynamic loader
/// to read LD_PRELOAD: it runs without Strain's probe, and nothing said so. strain exec
/// now says it on its standard error as the program starts, and the record keeps it.
@Suite(.serialized, .timeLimit(.minutes(10))) struct ExecStaticTests {
    static let source = """
        #include <stdio.h>
        int main(void) { puts("static hello"); return 3; }
        """

    /// `gcc -static` of `source` (and `-static-pie` when `pie`), or nil with the reason when glibc's static libraries are missing.
    static func build(pie: Bool) async throws -> (program: String?, why: String) {
        let folder = ExecTests.folder() + "-static"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try source.write(toFile: folder + "/hello.c", atomically: true, encoding: .utf8)
        let output = folder + (pie ? "/hello-static-pie" : "/hello-static")
        let built = try await ProgramRun.run("/usr/bin/env", ["gcc", pie ? "-static-pie" : "-static", "-o", output, folder + "/hello.c"], timeout: 180)
        return built.termination == .exited(0) ? (output, "") : (nil, built.stderr)
    }

    @Test(arguments: [false, true])
    func aStaticallyLinkedProgramIsSaidToRunWithoutTheProbe(pie: Bool) async throws {
        let (built, why) = try await Self.build(pie: pie)
        guard let program = built else {
            Issue.record("gcc \(pie ? "-static-pie" : "-static") failed: glibc's static libraries come with libc6-dev, which .ci/setup installs: \(why)")
            return
        }
        defer { try? FileManager.default.removeItem(atPath: (program as NSString).deletingLastPathComponent) }
        let out = ExecTests.folder()
        defer { try? FileManager.default.removeItem(atPath: out) }
        let (result, run) = try await ExecTests.exec(program, [], out: out)
        #expect(result.termination == .exited(3), "\(result.stderr)")
        #expect(result.stdout == "static hello\n")
        #expect(result.stderr.contains("strain: the program is statically linked: LD_PRELOAD cannot load Strain's probe"), "\(result.stderr)")
        let trial = try #require(run?.trials.first)
        #expect(trial.leftOut?.contains { $0.hasPrefix("the program is statically linked") } == true, "\(trial.leftOut ?? [])")
        #expect(run?.environment.allocator == "the program's own (statically linked)", "not glibc's libc.so.6: \(run?.environment.allocator ?? "none")")
    }

    /// A program that defines its own malloc family: its allocator is named as its own
    /// (it was recorded as libc.so.6), and its calls are not counted (re-trial 33m, F3).
    @Test func aProgramThatDefinesItsOwnMallocIsRecordedWithItsOwnAllocator() async throws {
        let folder = ExecTests.folder() + "-ownmalloc"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try """
            #include <stddef.h>
            #include <stdio.h>
            #include <string.h>
            static char arena[1 << 20]; static size_t used;
            void *malloc(size_t n) { n = (n + 15) & ~(size_t)15; if (used + n > sizeof arena) return NULL; void *p = arena + used; used += n; return p; }
            void free(void *p) { (void)p; }
            void *calloc(size_t a, size_t b) { void *p = malloc(a * b); if (p) memset(p, 0, a * b); return p; }
            void *realloc(void *p, size_t n) { void *q = malloc(n); if (p && q) memcpy(q, p, n); return q; }
            int main(void) { puts("own allocator"); return 0; }
            """.write(toFile: folder + "/own.c", atomically: true, encoding: .utf8)
        let program = folder + "/ownmalloc"
        let built = try await ProgramRun.run("/usr/bin/env", [TestPrograms.compiler, "-O1", "-o", program, folder + "/own.c"], timeout: 180)
        try #require(built.termination == .exited(0), "\(built.stderr)")
        let out = ExecTests.folder()
        defer { try? FileManager.default.removeItem(atPath: out) }
        let (result, run) = try await ExecTests.exec(program, [], out: out)
        #expect(result.termination == .exited(0), "\(result.stderr)")
        #expect(result.stdout == "own allocator\n")
        #expect(run?.environment.allocator == "the program's own (ownmalloc defines malloc)", "\(run?.environment.allocator ?? "none")")
        #expect(run?.trials.first?.metrics.allocations == nil, "not counted, never 0")
    }

    @Test func aWrapperThatExecutesAStaticProgramIsSaidToHaveRunItWithoutTheProbe() async throws {
        let (built, why) = try await Self.build(pie: false)
        guard let program = built else {
            Issue.record("gcc -static failed: glibc's static libraries come with libc6-dev, which .ci/setup installs: \(why)")
            return
        }
        defer { try? FileManager.default.removeItem(atPath: (program as NSString).deletingLastPathComponent) }
        let out = ExecTests.folder()
        defer { try? FileManager.default.removeItem(atPath: out) }
        let (result, run) = try await ExecTests.exec("/bin/sh", ["-c", "exec \(program)"], out: out)
        #expect(result.termination == .exited(3), "\(result.stderr)")
        #expect(result.stdout == "static hello\n")
        #expect(result.stderr.contains("strain: the program executed \(program), which ran without Strain's probe (statically linked"), "\(result.stderr)")
        let trial = try #require(run?.trials.first)
        #expect(trial.leftOut?.contains { $0.contains("which ran without Strain's probe") } == true, "\(trial.leftOut ?? [])")
    }

    @Test func aDynamicallyLinkedProgramGetsNoSuchNote() async throws {
        let out = ExecTests.folder()
        defer { try? FileManager.default.removeItem(atPath: out) }
        let (result, run) = try await ExecTests.exec("/bin/true", [], out: out)
        #expect(result.termination == .exited(0), "\(result.stderr)")
        #expect(!result.stderr.contains("without Strain's probe"), "\(result.stderr)")
        #expect(!result.stderr.contains("statically linked"), "\(result.stderr)")
        #expect(run?.trials.first?.leftOut == nil, "\(run?.trials.first?.leftOut ?? [])")
    }
}
