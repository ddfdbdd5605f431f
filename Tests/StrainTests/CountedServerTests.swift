import Foundation
import Glibc
import StrainRecords
import Testing

/// The counted trial server, through the binary: Valgrind started once per run, each
/// counted trial a copy of the server under callgrind. Its counts are a spawned counted
/// trial's, a copy that crashes is recorded and the next copies still count, and a
/// runner stopped or killed mid-run leaves no valgrind process and no folder.
/// Needs Valgrind (`.ci/setup` installs Debian's `valgrind`).
@Suite(.serialized, .timeLimit(.minutes(10))) struct CountedServerTests {
    static let environment = ["STRAIN_INSTRUCTIONS_SOURCE": "callgrind"]

    static let rows = """
        name: counted-server
        timeout: 30s
        profiles: [linux]
        measure: [instructions]
        runs:
          - scenario: noop
            strategies: [main]
          - scenario: nested-json
            parameters: {operation: parse, depth: 20}
            strategies: [main, gcd-global]
        """

    /// The medians of each row's instruction counts, by scenario and strategy.
    static func medians(_ record: RunRecord) -> [String: Int] {
        Dictionary(grouping: record.trials) { "\($0.scenario) \($0.strategy)" }.compactMapValues { trials in
            let counts = trials.compactMap(\.metrics.instructions).sorted()
            return counts.count == trials.count && !counts.isEmpty ? counts[counts.count / 2] : nil
        }
    }

    @Test func copiesOfTheCountedServerCountWhatSpawnedCountedTrialsCountWithinTheGatesTolerance() async throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try Self.rows.write(toFile: folder + "/suite.yaml", atomically: true, encoding: .utf8)
        let copied = try await StrainBinary.run(["run", folder + "/suite.yaml", "--repetitions", "3", "--out", folder + "/server", "--format", "json"],
                                                timeout: 300, environment: Self.environment)
        #expect(copied.status == 0, "\(copied.stdout)\n\(copied.stderr)")
        let spawned = try await StrainBinary.run(["run", folder + "/suite.yaml", "--repetitions", "3", "--out", folder + "/spawn", "--format", "json",
                                                  "--isolation", "spawn"], timeout: 300, environment: Self.environment)
        #expect(spawned.status == 0, "\(spawned.stdout)\n\(spawned.stderr)")
        let server = try RunRecordFile.read(from: folder + "/server/run.json")
        let spawn = try RunRecordFile.read(from: folder + "/spawn/run.json")
        // Every counted trial was a copy of one server, started once.
        let execution = try #require(server.execution)
        #expect(execution.serverTrials == 9 && execution.serverRestarts == 0 && execution.fallback == nil, "\(execution)")
        for trial in server.trials {
            #expect(trial.instructionCount?.source == "callgrind" && trial.instructionCount?.notCountable == nil,
                    "\(trial.scenario) \(trial.strategy): \(trial.instructionCount as Any)")
        }
        let byServer = Self.medians(server)
        let bySpawn = Self.medians(spawn)
        #expect(byServer.count == 3 && bySpawn.count == 3, "server \(byServer), spawn \(bySpawn)")
        for (row, spawned) in bySpawn {
            let copied = byServer[row] ?? 0
            // The gate's tolerance for a counted row: the larger of 20,000 instructions and 0.2 %.
            let tolerance = max(20_000, spawned / 500)
            #expect(abs(copied - spawned) <= tolerance, "\(row): a copy counted \(copied), a spawned trial \(spawned) (tolerance \(tolerance))")
        }
        // The work is named as before: the scenario's own closure among the functions.
        let functions: [FunctionCost] = server.trials.first { $0.scenario == "nested-json" && "\($0.strategy)" == "main" }?.instructionCount?.functions ?? []
        #expect(functions.contains { $0.name.contains("NestedJSONScenario.prepare(context:)") }, "\(functions.prefix(12).map { $0.name })")
    }

    @Test func aCrashInACountedCopyIsRecordedAndTheNextCopiesOfTheSameServerStillCount() async throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try """
        name: counted-crash
        timeout: 30s
        profiles: [linux]
        measure: [instructions]
        runs:
          - scenario: crash
            parameters: {kind: null-dereference}
            strategies: [main, gcd-global]
            expect: crashed
          - scenario: noop
            strategies: [main]
        """.write(toFile: folder + "/suite.yaml", atomically: true, encoding: .utf8)
        let result = try await StrainBinary.run(["run", folder + "/suite.yaml", "--repetitions", "2", "--out", folder + "/run", "--format", "json"],
                                                timeout: 300, environment: Self.environment)
        #expect(result.status == 0, "\(result.stdout)\n\(result.stderr)")
        let record = try RunRecordFile.read(from: folder + "/run/run.json")
        let crashes = record.trials.filter { $0.scenario == "crash" }
        #expect(crashes.count == 4)
        for trial in crashes {
            #expect(trial.outcome.kind == .crashed, "\(trial.strategy): \(trial.outcome)")
            // Recorded as a spawned trial's: the signal and the faulting frames.
            #expect(trial.trace?.signalName == "SIGSEGV" && trial.trace?.firstFrames.isEmpty == false, "\(trial.strategy): \(trial.trace as Any)")
            #expect(trial.instructionCount?.notCountable?.hasPrefix("not countable: the trial did not complete") == true, "\(trial.instructionCount as Any)")
        }
        let noops = record.trials.filter { $0.scenario == "noop" }
        #expect(noops.count == 2)
        for trial in noops {
            #expect(trial.outcome.kind == .completed)
            #expect((trial.metrics.instructions ?? 0) > 0, "\(trial.instructionCount as Any)")
        }
        // The server outlived every crash of its copies: one server for all six trials.
        let execution = try #require(record.execution)
        #expect(execution.serverTrials == 6 && execution.serverRestarts == 0 && execution.fallback == nil, "\(execution)")
        #expect(!result.stderr.contains("trial server"), "\(result.stderr)")
    }

    /// Processes whose command line names the counted trials' folder of runner `pid`
    /// (the counted server, its copies and their watchers, all under Valgrind).
    static func valgrindProcesses(of pid: Int32) -> [Int32] {
        Processes.running(commandLineContaining: "strain-callgrind-\(pid)-")
    }

    /// The counted trials' folders runner `pid` left in the temporary folder.
    static func folders(of pid: Int32) -> [String] {
        let temporary = FileManager.default.temporaryDirectory.path
        return ((try? FileManager.default.contentsOfDirectory(atPath: temporary)) ?? []).filter { $0.hasPrefix("strain-callgrind-\(pid)-") }
    }

    @Test(arguments: [SIGTERM, SIGKILL])
    func aRunnerStoppedMidCountedRunLeavesNoValgrindProcessAndNoFolder(signal: Int32) async throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try """
        name: counted-stopped
        timeout: 30s
        profiles: [linux]
        measure: [instructions]
        repetitions: 200
        runs:
          - scenario: nested-json
            parameters: {operation: parse, depth: 20}
            strategies: [main]
        """.write(toFile: (folder as NSString).appendingPathComponent("suite.yaml"), atomically: true, encoding: .utf8)
        let runner = try BackgroundStrain(["run", "suite.yaml", "--out", "out"], in: folder,
                                          shellPrefix: "export STRAIN_INSTRUCTIONS_SOURCE=callgrind")
        let pid = runner.pid
        defer { runner.signal(SIGKILL); Self.valgrindProcesses(of: pid).forEach { kill($0, SIGKILL) } }
        // Mid-run: the counted server is up and has served a trial, and another copy runs.
        #expect(await runner.waitForOutput("  2/200]", seconds: 180), "two counted trials ended")
        let counted = Self.valgrindProcesses(of: pid)
        #expect(!counted.isEmpty, "the counted server runs under valgrind")
        #expect(Self.folders(of: pid).count == 1, "the counted trials' folder is there")
        runner.signal(signal)
        let result = await runner.finish(timeout: 60)
        if signal == SIGTERM { #expect(result.status != 0, "\(result.stderr)") }
        let gone = await eventually(within: 15) { Self.valgrindProcesses(of: pid).isEmpty && Self.folders(of: pid).isEmpty }
        #expect(gone, "left behind: processes \(Self.valgrindProcesses(of: pid)), folders \(Self.folders(of: pid))")
        // Nor Valgrind's gdbserver FIFOs (vgdb-pipe-…-PID-by-…), which a killed process leaves.
        let temporary = FileManager.default.temporaryDirectory.path
        let fifos = ((try? FileManager.default.contentsOfDirectory(atPath: temporary)) ?? []).filter { name in
            name.hasPrefix("vgdb-pipe-") && counted.contains { name.contains("-\($0)-by-") }
        }
        #expect(fifos.isEmpty, "left in \(temporary): \(fifos)")
    }

    /// A runner killed while its spawned counted trial is still starting under
    /// Valgrind (a second or more before the trial can ask for its parent-death
    /// stand-in): the trial finds its runner gone and ends, with the trial in it that
    /// would otherwise sleep to its 120 s deadline. It ran on before: Valgrind refuses
    /// the parent-death signal, the watcher process standing in for it asked for a
    /// pidfd, which Valgrind 3.19 does not know, and Valgrind's warning about that went
    /// to the trial's standard error, a pipe whose reader was the dead runner: the
    /// SIGPIPE killed the watcher.
    @Test func aSpawnedCountedTrialWhoseRunnerIsKilledWhileValgrindStartsEndsToo() async throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try """
        name: counted-orphan
        timeout: 120s
        profiles: [linux]
        measure: [instructions]
        runs:
          - scenario: crash
            parameters: {kind: hang}
            strategies: [main]
        """.write(toFile: (folder as NSString).appendingPathComponent("suite.yaml"), atomically: true, encoding: .utf8)
        let runner = try BackgroundStrain(["run", "suite.yaml", "--out", "out", "--isolation", "spawn"], in: folder,
                                          shellPrefix: "export STRAIN_INSTRUCTIONS_SOURCE=callgrind")
        let pid = runner.pid
        defer { runner.signal(SIGKILL); Self.valgrindProcesses(of: pid).forEach { kill($0, SIGKILL) } }
        // Valgrind itself (not objcopy making the stripped copy, whose arguments name the same folder).
        let started = await eventually(within: 120, every: 5_000) {
            Self.valgrindProcesses(of: pid).contains { candidate in
                FileManager.default.contents(atPath: "/proc/\(candidate)/cmdline").map { String(decoding: $0, as: UTF8.self).contains("--tool=callgrind") } == true
            }
        }
        try #require(started, "no trial under valgrind")
        runner.signal(SIGKILL)
        _ = await runner.finish(timeout: 60)
        let gone = await eventually(within: 30) { Self.valgrindProcesses(of: pid).isEmpty }
        #expect(gone, "a counted trial outlived its killed runner: \(Self.valgrindProcesses(of: pid))")
    }
}
