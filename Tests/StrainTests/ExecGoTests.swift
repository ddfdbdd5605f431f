import Foundation
import StrainKit
import Testing

/// `strain exec` on a Go program built with cgo (dynamically linked, so the probe loads):
/// Go's runtime writes a panic's message to standard error with raw system calls, not
/// through libc's `write`, so the probe never sees it. The record had no last words and
/// nothing said why (re-trial 33l, N1); it now says so in `leftOut` and on the terminal.
@Suite(.serialized, .timeLimit(.minutes(10))) struct ExecGoTests {
    /// Panics on a nil map with `panic` as its argument, else prints and exits 0; the cgo
    /// import makes it dynamically linked against libc.
    static let source = """
        package main

        // #include <stdlib.h>
        import "C"

        import (
        \t"fmt"
        \t"os"
        )

        func main() {
        \tC.free(C.malloc(16))
        \tfmt.Println("before")
        \tif len(os.Args) > 1 && os.Args[1] == "panic" {
        \t\tvar counts map[string]int
        \t\tcounts["boom"] = 1
        \t}
        }
        """

    static func go() -> String? {
        (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":").map { "\($0)/go" }
            .first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    @Test func aGoPanicsMissingLastWordsAreExplainedInTheRecordAndOnTheTerminal() async throws {
        guard let go = Self.go() else {
            Issue.record("no go on PATH: .ci/setup installs it (Debian: golang-go) to check strain exec's record of a Go program")
            return
        }
        let work = ExecTests.folder()
        try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)
        defer {
            // Go's caches are written read-only: made writable to be removed.
            _ = try? FileManager.default.subpathsOfDirectory(atPath: work).forEach { chmod(work + "/" + $0, 0o755) }
            try? FileManager.default.removeItem(atPath: work)
        }
        let source = work + "/main.go"
        let program = work + "/gopanic"
        try Self.source.write(toFile: source, atomically: true, encoding: .utf8)
        try await TestPrograms.compile(["GOCACHE=\(work)/cache", "GOPATH=\(work)/path", "CGO_ENABLED=1", go, "build", "-o", program, source])

        let (result, run) = try await ExecTests.exec(program, ["panic"], out: work + "/panic", timeout: 120)
        #expect(result.termination == .exited(2), "\(result.stderr.suffix(800))")
        #expect(result.stdout == "before\n")
        #expect(result.stderr.contains("panic: assignment to entry in nil map"), "Go's message still reaches the terminal: \(result.stderr.suffix(800))")
        let trial = try #require(run?.trials.first)
        #expect(trial.outcome.kind == .threw && trial.lastWords == nil, "\(trial.outcome)")
        #expect(trial.leftOut?.contains { $0.contains("a Go program") && $0.contains("raw system calls") } == true, "\(trial.leftOut ?? [])")
        #expect(result.stderr.contains("strain: the program is a Go program"), "\(result.stderr.suffix(800))")
        #expect(!(trial.leftOut ?? []).contains { $0.contains("statically linked") || $0.contains("without Strain's probe") }, "the cgo program was probed: \(trial.leftOut ?? [])")

        // A Go program that exits 0 has nothing to miss: no note.
        let (quiet, quietRun) = try await ExecTests.exec(program, [], out: work + "/quiet", timeout: 120)
        #expect(quiet.termination == .exited(0), "\(quiet.stderr.suffix(800))")
        #expect(quietRun?.trials.first?.leftOut?.contains { $0.contains("a Go program") } != true, "\(quietRun?.trials.first?.leftOut ?? [])")
    }
}
