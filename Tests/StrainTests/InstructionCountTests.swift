import Foundation
import StrainRecords
import Testing

/// Instructions counted under callgrind, through the binary: `measure: [instructions]`
/// and `--measure instructions`, and the mistakes that must stop a run before it starts.
/// Needs Valgrind (`.ci/setup` installs Debian's `valgrind`).
@Suite(.serialized, .timeLimit(.minutes(10))) struct InstructionCountTests {
    static func folder() throws -> String {
        let folder = TestFolders.root.appendingPathComponent("strain-instr-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        return folder
    }

    static let suite = """
        name: instructions
        timeout: 30s
        profiles: [linux]
        measure: [instructions]
        runs:
          - scenario: noop
            strategies: [main]
          - scenario: nested-json
            parameters: {operation: parse, depth: 20}
            strategies: [main, gcd-global]
          - scenario: queue-flood
            parameters: {items: 100}
            strategies: [gcd-global]
        """

    @Test func aCountedSuiteRecordsInstructionsForDeterministicWorkAndSaysNotCountableForTimedWork() async throws {
        let folder = try Self.folder()
        try Self.suite.write(toFile: folder + "/suite.yaml", atomically: true, encoding: .utf8)
        // Callgrind forced: on a machine with a PMU the default would count by perf counters.
        let result = try await StrainBinary.run(["run", folder + "/suite.yaml", "--repetitions", "2", "--out", folder + "/run", "--format", "json"], timeout: 300,
                                          environment: ["STRAIN_INSTRUCTIONS_SOURCE": "callgrind"])
        #expect(result.status == 0, "\(result.stdout)\n\(result.stderr)")
        let schema = try await SchemaCheck.validate(folder + "/run/run.json")
        #expect(schema.valid, "run.json does not match Sources/StrainRecords/RunRecord.schema.json: \(schema.output)")
        let record = try RunRecordFile.read(from: folder + "/run/run.json")
        let trials = Dictionary(grouping: record.trials) { "\($0.scenario) \($0.strategy)" }
        #expect(trials.count == 4, "\(trials.keys.sorted())")
        for name in ["noop main", "nested-json main", "nested-json gcd-global"] {
            let counts = (trials[name] ?? []).compactMap(\.metrics.instructions)
            #expect(counts.count == 2, "\(name): \(trials[name]?.map { $0.instructionCount as Any } ?? [])")
            for trial in trials[name] ?? [] {
                #expect(trial.instructionCount?.source == "callgrind")
                #expect(trial.instructionCount?.notCountable == nil, "\(name): \(trial.instructionCount?.notCountable ?? "")")
                // Callgrind's timings mean nothing: not recorded.
                #expect(trial.metrics.wallSeconds == nil, "\(name)")
            }
            // Repetitions of one build agree within the gate's default floor.
            if let low = counts.min(), let high = counts.max() { #expect(high - low <= 20_000, "\(name): \(counts)") }
        }
        // The noop's work is a few thousand instructions; parsing 20 levels of JSON is more.
        let noop = (trials["noop main"] ?? []).compactMap(\.metrics.instructions).max() ?? 0
        let parse = (trials["nested-json main"] ?? []).compactMap(\.metrics.instructions).min() ?? 0
        #expect(noop > 0 && noop < 50_000, "\(noop)")
        #expect(parse > noop * 5, "noop \(noop), parse \(parse)")
        // The functions are named, demangled: the scenario's own work closure among them.
        let functions = trials["nested-json main"]?.first?.instructionCount?.functions ?? []
        #expect(functions.contains { $0.name.contains("NestedJSONScenario.prepare(context:)") }, "\(functions.prefix(12).map(\.name))")
        // And placed: callgrind ran a copy without debug information, the name was looked up
        // in strain itself, whose line table puts the closure in NestedJSONScenario.swift.
        let work = functions.filter { $0.name.contains("NestedJSONScenario.prepare(context:)") }
        #expect(work.contains { $0.file?.hasSuffix("Sources/StrainScenarios/NestedJSONScenario.swift") == true && ($0.line ?? 0) > 0 },
                "\(work.map { "\($0.name) \($0.file ?? "no file"):\($0.line ?? 0)" })")
        // A library's function has its name and no file: strain holds no line table for it.
        #expect(functions.contains { $0.name.contains("JSONParser") && $0.file == nil }, "\(functions.prefix(12).map(\.name))")
        // A scenario whose work depends on timing is run, but not counted, and says so.
        for trial in trials["queue-flood gcd-global"] ?? [] {
            #expect(trial.outcome.kind == .completed)
            #expect(trial.metrics.instructions == nil)
            #expect(trial.instructionCount?.notCountable?.hasPrefix("not countable") == true, "\(trial.instructionCount as Any)")
        }
        #expect((trials["queue-flood gcd-global"] ?? []).count == 2)
    }

    @Test func anUnknownMeasureIsAUsageErrorThatRunsNothing() async throws {
        let folder = try Self.folder()
        try Self.suite.replacingOccurrences(of: "measure: [instructions]", with: "measure: [cycles]").write(toFile: folder + "/bad.yaml", atomically: true, encoding: .utf8)
        let fromSuite = try await StrainBinary.run(["run", folder + "/bad.yaml", "--out", folder + "/bad"])
        #expect(fromSuite.status == 2, "\(fromSuite.stdout)\n\(fromSuite.stderr)")
        #expect(fromSuite.stderr.contains("bad.yaml:4:"), "\(fromSuite.stderr)")
        #expect(fromSuite.stderr.contains("unknown measure 'cycles'") && fromSuite.stderr.contains("valid measures: instructions"), "\(fromSuite.stderr)")
        #expect(!FileManager.default.fileExists(atPath: folder + "/bad"))

        try Self.suite.replacingOccurrences(of: "measure: [instructions]\n", with: "").write(toFile: folder + "/plain.yaml", atomically: true, encoding: .utf8)
        let fromFlag = try await StrainBinary.run(["run", folder + "/plain.yaml", "--measure", "cycles", "--out", folder + "/flag"])
        #expect(fromFlag.status == 2, "\(fromFlag.stdout)\n\(fromFlag.stderr)")
        #expect(fromFlag.stderr.contains("--measure") && fromFlag.stderr.contains("instructions"), "\(fromFlag.stderr)")
        #expect(!FileManager.default.fileExists(atPath: folder + "/flag"))
    }

    @Test func countingWithoutValgrindIsRefusedWithItsOwnExitCodeBeforeAnyTrial() async throws {
        let folder = try Self.folder()
        try Self.suite.write(toFile: folder + "/suite.yaml", atomically: true, encoding: .utf8)
        // A PATH with no valgrind on it.
        try FileManager.default.createDirectory(atPath: folder + "/empty-path", withIntermediateDirectories: true)
        let result = try await StrainBinary.run(["run", folder + "/suite.yaml", "--out", folder + "/run"], environment: ["PATH": folder + "/empty-path", "STRAIN_INSTRUCTIONS_SOURCE": "callgrind"])
        #expect(result.status == 4, "\(result.stdout)\n\(result.stderr)")
        #expect(result.stderr.contains("no `valgrind` on PATH") && result.stderr.contains("apt-get install valgrind"), "\(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: folder + "/run"), "a run folder was written")
        #expect(!result.stdout.contains("Running"), "\(result.stdout)")
    }
}
