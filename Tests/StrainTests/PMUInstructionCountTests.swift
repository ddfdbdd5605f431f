import Foundation
import StrainHost
import StrainRecords
import StrainWire
import Testing

/// Instructions counted by perf counters (the `pmu` source), through the binary.
///
/// This VM has no PMU (hardware events fail with ENOENT), so the hardware path cannot
/// run here: these tests check that forcing it is refused, that the default then counts
/// under callgrind, and drive the very same per-thread counter code with a software
/// event (`STRAIN_TEST_PERF_EVENT=task-clock`, nanoseconds of CPU time) through a real
/// `strain run`.
@Suite(.serialized, .timeLimit(.minutes(10))) struct PMUInstructionCountTests {
    /// Whether this machine's kernel opens a counter of user-space instructions.
    static let hasPMU = KernelPerfCounterProbe().failure(opening: .instructions) == nil

    static func folder() throws -> String {
        let folder = TestFolders.root.appendingPathComponent("strain-pmu-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        return folder
    }

    static let noop = """
        name: pmu-noop
        timeout: 30s
        profiles: [linux]
        measure: [instructions]
        runs:
          - scenario: noop
            strategies: [main]
        """

    @Test(.enabled(if: !hasPMU, "this machine has a PMU: forcing pmu works here"))
    func forcingPMUWithoutOneIsRefusedWithExitFourNamingWhyBeforeAnyTrial() async throws {
        let folder = try Self.folder()
        try Self.noop.write(toFile: folder + "/suite.yaml", atomically: true, encoding: .utf8)
        let result = try await StrainBinary.run(["run", folder + "/suite.yaml", "--out", folder + "/run"],
                                          environment: ["STRAIN_INSTRUCTIONS_SOURCE": "pmu"])
        #expect(result.status == 4, "\(result.stdout)\n\(result.stderr)")
        #expect(result.stderr.contains("STRAIN_INSTRUCTIONS_SOURCE=pmu") && result.stderr.contains("PERF_COUNT_HW_INSTRUCTIONS")
                && result.stderr.contains("ENOENT") && result.stderr.contains("callgrind"), "\(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: folder + "/run"), "a run folder was written")
        #expect(!result.stdout.contains("Running"), "\(result.stdout)")
    }

    @Test func theDefaultSourceIsThePMUWhereTheKernelOpensItsCounterElseCallgrind() async throws {
        let folder = try Self.folder()
        try Self.noop.write(toFile: folder + "/suite.yaml", atomically: true, encoding: .utf8)
        let result = try await StrainBinary.run(["run", folder + "/suite.yaml", "--out", folder + "/run", "--format", "json"], timeout: 300)
        #expect(result.status == 0, "\(result.stdout)\n\(result.stderr)")
        let record = try RunRecordFile.read(from: folder + "/run/run.json")
        #expect(record.trials.count == 1)
        for trial in record.trials {
            #expect(trial.instructionCount?.source == (Self.hasPMU ? "pmu" : "callgrind"), "\(trial.instructionCount as Any)")
            #expect((trial.metrics.instructions ?? 0) > 0, "\(trial.instructionCount as Any)")
        }
    }

    static let scaled = """
        name: pmu-software-event
        timeout: 120s
        profiles: [linux]
        measure: [instructions]
        runs:
          - scenario: cyclic-graph
            parameters: {operation: archive, shape: league, size: [25, 200]}
            strategies: [main, gcd-global]
          - scenario: queue-flood
            parameters: {items: 100}
            strategies: [gcd-global]
        """

    @Test func thePMUPathDrivenByASoftwareEventCountsClearlyMoreForEightTimesTheWorkOnEveryThread() async throws {
        let folder = try Self.folder()
        try Self.scaled.write(toFile: folder + "/suite.yaml", atomically: true, encoding: .utf8)
        let result = try await StrainBinary.run(["run", folder + "/suite.yaml", "--repetitions", "3", "--out", folder + "/run", "--format", "json"],
                                          timeout: 300, environment: ["STRAIN_INSTRUCTIONS_SOURCE": "pmu", "STRAIN_TEST_PERF_EVENT": "task-clock"])
        #expect(result.status == 0, "\(result.stdout)\n\(result.stderr)")
        let schema = try await SchemaCheck.validate(folder + "/run/run.json")
        #expect(schema.valid, "run.json does not match Sources/StrainRecords/RunRecord.schema.json: \(schema.output)")
        let record = try RunRecordFile.read(from: folder + "/run/run.json")
        #expect(record.execution?.fallback?.contains("perf counters") == true, "\(record.execution as Any)")
        func counts(size: String, strategy: String) -> [Int] {
            let trials = record.trials.filter {
                $0.scenario == "cyclic-graph" && "\($0.strategy)" == strategy && $0.id.key.parameters.contains { $0.name == "size" && $0.value == size }
            }
            for trial in trials {
                #expect(trial.outcome.kind == .completed, "\(trial.outcome)")
                #expect(trial.instructionCount?.source == "pmu", "\(trial.instructionCount as Any)")
                #expect(trial.instructionCount?.notCountable == nil, "\(trial.instructionCount as Any)")
                // A counter has no per-function costs, and a counted trial's timings are not recorded.
                #expect(trial.instructionCount?.functions == nil)
                #expect(trial.metrics.wallSeconds == nil)
            }
            return trials.compactMap(\.metrics.instructions)
        }
        for strategy in ["main", "gcd-global"] {
            let small = counts(size: "25", strategy: strategy)
            let large = counts(size: "200", strategy: strategy)
            #expect(small.count == 3 && large.count == 3, "\(strategy): \(small) \(large)")
            #expect(small.allSatisfy { $0 > 0 }, "\(strategy): \(small)")
            // Eight times the teams; task-clock is time, so only "clearly larger", with a wide margin.
            if let smallest = large.min(), let largest = small.max() {
                #expect(smallest > 3 * largest, "\(strategy): size 25 counted \(small), size 200 \(large)")
            }
        }
        // A scenario whose work depends on timing runs as usual, and says it was not counted.
        let flood = record.trials.filter { $0.scenario == "queue-flood" }
        #expect(flood.count == 3)
        for trial in flood {
            #expect(trial.outcome.kind == .completed)
            #expect(trial.metrics.instructions == nil)
            #expect(trial.instructionCount?.source == "pmu" && trial.instructionCount?.notCountable?.hasPrefix("not countable") == true, "\(trial.instructionCount as Any)")
        }
    }
}

/// The choice of a source, behind a probe a test can fake.
@Suite struct InstructionSourceTests {
    /// A kernel that opens the events in `opens` and refuses the others with ENOENT.
    struct FakeProbe: PerfCounterProbe {
        var opens: Set<PerfCounterEvent>
        func failure(opening event: PerfCounterEvent) -> String? { opens.contains(event) ? nil : "ENOENT (No such file or directory)" }
    }

    static let noPMU = FakeProbe(opens: [.taskClock, .cpuClock])
    static let withPMU = FakeProbe(opens: [.instructions, .taskClock, .cpuClock])

    @Test func byDefaultThePMUIsChosenWhereItsCounterOpensAndCallgrindWhereItDoesNot() throws {
        #expect(try InstructionSource.choose(environment: [:], probe: Self.withPMU) == .pmu(.instructions))
        #expect(try InstructionSource.choose(environment: [:], probe: Self.noPMU) == .callgrind)
        #expect(try InstructionSource.choose(environment: ["STRAIN_INSTRUCTIONS_SOURCE": ""], probe: Self.noPMU) == .callgrind)
    }

    @Test func aForcedSourceIsTakenAndForcingAMissingPMUIsAnErrorNotAFallback() throws {
        #expect(try InstructionSource.choose(environment: ["STRAIN_INSTRUCTIONS_SOURCE": "callgrind"], probe: Self.withPMU) == .callgrind)
        #expect(try InstructionSource.choose(environment: ["STRAIN_INSTRUCTIONS_SOURCE": "pmu"], probe: Self.withPMU) == .pmu(.instructions))
        let error = #expect(throws: InstructionSourceError.self) {
            try InstructionSource.choose(environment: ["STRAIN_INSTRUCTIONS_SOURCE": "pmu"], probe: Self.noPMU)
        }
        #expect(error?.kind == .unavailable)
        #expect(error?.message.contains("ENOENT") == true && error?.message.contains("PERF_COUNT_HW_INSTRUCTIONS") == true, "\(error as Any)")
    }

    @Test func theTestSwitchSwapsTheEventThatIsProbedAndCounted() throws {
        #expect(try InstructionSource.choose(environment: ["STRAIN_TEST_PERF_EVENT": "task-clock"], probe: Self.noPMU) == .pmu(.taskClock))
        #expect(try InstructionSource.choose(environment: ["STRAIN_TEST_PERF_EVENT": "cpu-clock", "STRAIN_INSTRUCTIONS_SOURCE": "pmu"], probe: Self.noPMU) == .pmu(.cpuClock))
    }

    @Test func aValueThatIsNotASourceOrATestEventIsABadValueNamingTheVariable() {
        let source = #expect(throws: InstructionSourceError.self) {
            try InstructionSource.choose(environment: ["STRAIN_INSTRUCTIONS_SOURCE": "gpu"], probe: Self.withPMU)
        }
        #expect(source?.kind == .badValue && source?.message.contains("STRAIN_INSTRUCTIONS_SOURCE=gpu") == true, "\(source as Any)")
        let event = #expect(throws: InstructionSourceError.self) {
            try InstructionSource.choose(environment: ["STRAIN_TEST_PERF_EVENT": "cycles"], probe: Self.withPMU)
        }
        #expect(event?.kind == .badValue && event?.message.contains("STRAIN_TEST_PERF_EVENT=cycles") == true, "\(event as Any)")
    }

    @Test func aPerfEventCrossesToTheTrialAsTypeAndConfig() {
        #expect(PerfCounterEvent.instructions.environmentValue == "0:1")
        #expect(PerfCounterEvent(environmentValue: "1:1") == .taskClock)
        #expect(PerfCounterEvent(environmentValue: "1") == nil && PerfCounterEvent(environmentValue: "x:1") == nil)
        let trials = PMUTrials(event: .taskClock, timingDependent: ["queue-flood"])
        #expect(trials.environment(of: "noop") == ["STRAIN_INSTRUCTIONS=pmu", "STRAIN_PERF_EVENT=1:1"])
        #expect(trials.environment(of: "queue-flood").isEmpty)
    }
}
