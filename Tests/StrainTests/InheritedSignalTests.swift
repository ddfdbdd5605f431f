import Foundation
import StrainRecords
import Testing

/// Strain started with SIGCHLD ignored (the disposition survives exec; a Python or
/// a daemon launcher may leave it so): the kernel would reap every child before
/// strain read its status. Each run is bounded by `timeout -s KILL`.
@Suite(.timeLimit(.minutes(10))) struct InheritedSignalTests {
    /// Runs strain through a Python launcher that ignores SIGCHLD first.
    static func launchIgnoringChildSignal(_ arguments: [String], seconds: Int = 60) async throws -> (status: Int32, output: String) {
        let script = "import os, signal, sys; signal.signal(signal.SIGCHLD, signal.SIG_IGN); os.execv(sys.argv[1], sys.argv[1:])"
        return try await Tool.run(["timeout", "-s", "KILL", "\(seconds)", "python3", "-c", script, StrainBinary.path] + arguments,
                            timeout: Double(seconds + 30))
    }

    @Test func aRunStartedWithChildSignalIgnoredStillReapsAndRecordsItsTrials() async throws {
        let folder = try temporaryFolder()
        let suite = (folder as NSString).appendingPathComponent("suite.yaml")
        try "name: reaped\nruns:\n  - scenario: noop\n    strategies: [main, gcd-global]\n".write(toFile: suite, atomically: true, encoding: .utf8)
        let out = (folder as NSString).appendingPathComponent("out")
        let (status, output) = try await Self.launchIgnoringChildSignal(["run", suite, "--out", out])
        #expect(status == 0, "\(output)")
        let record = try RunRecordFile.read(from: (out as NSString).appendingPathComponent("run.json"))
        #expect(record.trials.count == 2 && record.trials.allSatisfy { $0.outcome.kind == .completed }, "\(output)")
    }

    @Test func strainExecStartedWithChildSignalIgnoredSeesTheStatusAndTheProgramKeepsTheIgnore() async throws {
        let folder = try temporaryFolder()
        let out = (folder as NSString).appendingPathComponent("out")
        let program = "import signal, sys; print('SIGCHLD ignored', signal.getsignal(signal.SIGCHLD) == signal.SIG_IGN); sys.exit(3)"
        let (status, output) = try await Self.launchIgnoringChildSignal(["exec", "--out", out, "--", "/usr/bin/env", "python3", "-c", program])
        #expect(status == 3, "the program's own status: \(output)")
        #expect(output.contains("SIGCHLD ignored True"), "the program still has SIGCHLD ignored, as it was given: \(output)")
        let record = try RunRecordFile.read(from: (out as NSString).appendingPathComponent("run.json"))
        #expect(record.trials.first?.outcome.message?.contains("status 3") == true, "\(String(describing: record.trials.first?.outcome))")
    }
}
