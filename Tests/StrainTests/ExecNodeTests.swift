import Foundation
import Glibc
import StrainKit
import StrainRunner
import Testing

/// `strain exec` on node: V8 runs each JavaScript function's bytecode in one
/// `Builtins_InterpreterEntryTrampoline` frame, so a chain of ten distinct functions
/// walks as ten frames at one return address, and the trace called it "a cycle of
/// 1 frame × 17 … entered the recursion". There is no recursion: no cycle is named.
@Suite(.serialized, .timeLimit(.minutes(10))) struct ExecNodeTests {
    /// Ten distinct functions, each calling the next; the last aborts (a real SIGABRT
    /// from node's own `abort()`, with the JavaScript frames on the native stack).
    static let chain = """
        function f0() { return f1() + 1; } function f1() { return f2() + 1; } function f2() { return f3() + 1; }
        function f3() { return f4() + 1; } function f4() { return f5() + 1; } function f5() { return f6() + 1; }
        function f6() { return f7() + 1; } function f7() { return f8() + 1; } function f8() { return f9() + 1; }
        function f9() { process.abort(); return 0; }
        f0();
        """

    static func node() -> String? {
        (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":").map { "\($0)/node" }
            .first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    /// Node prints an uncaught exception through its own stdio (issue 33: "Node's uncaught
    /// `RangeError`" was lost): the reason is the exception's line, not its last stack
    /// line or node's closing `Node.js v…` line, and every report shows it.
    @Test func anUncaughtRangeErrorIsRecordedWithItsExceptionLineNotItsLastLine() async throws {
        guard let node = Self.node() else {
            Issue.record("no node on PATH: .ci/setup installs it (Debian: nodejs) to check strain exec's last words of a JavaScript program")
            return
        }
        let out = ExecTests.folder()
        defer { try? FileManager.default.removeItem(atPath: out) }
        let (result, run) = try await ExecTests.exec(node, ["-e", "function deeper() { deeper() } deeper()"], out: out, timeout: 120)
        #expect(result.termination == .exited(1), "\(result.stderr.suffix(500))")
        #expect(result.stderr.contains("RangeError: Maximum call stack size exceeded") && result.stderr.contains("\nNode.js v"), "\(result.stderr.suffix(500))")
        let trial = try #require(run?.trials.first)
        #expect(trial.outcome.kind == .threw, "\(trial.outcome.description): \(trial.outcome.message ?? "")")
        #expect(trial.lastWords == "RangeError: Maximum call stack size exceeded", "\(String(describing: trial.lastWords))")
        let report = try await ProgramRun.run(StrainBinary.path, ["report", (out as NSString).appendingPathComponent("run.json"), "--format", "md", "--out", "-"])
        #expect(report.stdout.contains("RangeError: Maximum call stack size exceeded"), "\(report.stdout.prefix(1500))")
    }

    @Test func aChainOfDistinctJavaScriptFunctionsIsNotCalledARecursionCycle() async throws {
        guard let node = Self.node() else {
            Issue.record("no node on PATH: .ci/setup installs it (Debian: nodejs) to check strain exec's trace of a JavaScript stack")
            return
        }
        let out = ExecTests.folder()
        defer { try? FileManager.default.removeItem(atPath: out) }
        try FileManager.default.createDirectory(atPath: out + "-source", withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: out + "-source") }
        let script = out + "-source/chain.js"
        try Self.chain.write(toFile: script, atomically: true, encoding: .utf8)
        let (result, run) = try await ExecTests.exec(node, [script], out: out, timeout: 120)
        #expect(result.termination == .signaled(SIGABRT), "\(result.stderr.suffix(2000))")
        let trace = try #require(run?.trials.first?.trace, "\(result.stderr.suffix(2000))")
        let named = (trace.firstFrames + (trace.cycle?.frames ?? []) + trace.lastFrames).compactMap(\.symbol)
        guard named.contains("Builtins_InterpreterEntryTrampoline") else {
            // A node whose V8 builtins have no symbols (a stripped build) shows them as
            // addresses: nothing here tells a trampoline from a function.
            print("this node's frames name no Builtins_InterpreterEntryTrampoline (a stripped build): the JavaScript chain cannot be checked here")
            return
        }
        #expect(trace.cycle == nil, "ten distinct functions are no recursion: \(trace.cycle.map { "\($0.frames.map(\.displayName)) × \($0.repetitions)" } ?? "")")
        #expect(!result.stderr.contains("a cycle of"), "\(result.stderr.suffix(3000))")
        #expect(!result.stderr.contains("entered the recursion"), "\(result.stderr.suffix(3000))")
        // Every trampoline frame is listed as itself (17 here: the ten functions and node's module wrappers).
        let trampolines = named.filter { $0 == "Builtins_InterpreterEntryTrampoline" }.count
        #expect(trampolines >= 10, "\(named)")
    }
}
