import Foundation
import StrainGate
import StrainRecords
import Testing

/// The gate on counted instructions (callgrind): its default tolerance and the functions it names.
struct InstructionGateTests {
    /// A counted trial: `instructions` in all, and each function's (name, inclusive, exclusive).
    static func trial(_ key: TrialKey, repetition: Int, instructions: Int, functions: [(String, Int, Int)] = []) -> TrialRecord {
        var record = Fake.trial(key, repetition: repetition)
        record.metrics.instructions = instructions
        record.instructionCount = InstructionCount(source: "callgrind", instructions: instructions,
                                                   functions: functions.map { FunctionCost(name: $0.0, inclusive: $0.1, exclusive: $0.2) })
        return record
    }

    static func gate(_ old: [TrialRecord], _ new: [TrialRecord]) throws -> GateReport {
        try Gate.compare(baseline: Fake.run(old), candidate: Fake.run(new), options: GateOptions(mode: .interleaved))
    }

    /// A decoder's call chain: the harness, the work closure, the decoder that grew, and a helper.
    static func chain(decoder: Int) -> [(String, Int, Int)] {
        [("TrialHost.runTrial", 100_000 + decoder, 10), ("closure #1 in Scenario.prepare(context:)", 99_000 + decoder, 1_000),
         ("Link.init(from:)", decoder, decoder / 2), ("swift_retain", decoder / 2, decoder / 2)]
    }

    @Test func moreInstructionsNameTheInnermostFunctionHoldingTheGrowthNotTheHarnessAboveIt() throws {
        let key = Fake.key()
        let old = (1...2).map { Self.trial(key, repetition: $0, instructions: 100_010, functions: Self.chain(decoder: 320_000)) }
        let new = (1...2).map { Self.trial(key, repetition: $0, instructions: 138_410, functions: Self.chain(decoder: 358_400)) }
        let report = try Self.gate(old, new)
        let instructions = try #require(report.rows[0].metrics.first { $0.metric == "instructions" })
        #expect(instructions.verdict == .regressed, "\(instructions)")
        #expect(instructions.noise == .counted)
        // Every caller grew by as much; the decoder is the smallest that holds it all.
        #expect(instructions.grewAt?.first == "Link.init(from:) +38.4 k instr a trial, +12.0 %", "\(instructions.grewAt ?? [])")
        #expect(instructions.grewAt?.dropFirst().first == "swift_retain +19.2 k instr a trial in its own code, +12.0 %", "\(instructions.grewAt ?? [])")
        #expect(report.renderText().contains("grew most in Link.init(from:) +38.4 k instr a trial"), "\(report.renderText())")
        #expect(report.exitCode == 1)
    }

    @Test func instructionVerdictsWriteTheirCountsInInstrInTheTextMarkdownAndHTMLOutputs() throws {
        // Spin's row in the fixture: about 1,040 M instructions a trial, 2 % more planted.
        let key = Fake.key()
        let spin = "closure #1 in SpinScenario.prepare(context:)"
        let old = (1...2).map { Self.trial(key, repetition: $0, instructions: 1_040_028_648, functions: [(spin, 1_040_000_000, 1_040_000_000)]) }
        let new = (1...2).map { Self.trial(key, repetition: $0, instructions: 1_060_828_648, functions: [(spin, 1_060_800_000, 1_060_800_000)]) }
        let report = try Self.gate(old, new)
        let instructions = try #require(report.rows[0].metrics.first { $0.metric == "instructions" })
        #expect(instructions.verdict == .regressed, "\(instructions)")
        #expect(instructions.unit == .instructions)
        #expect(instructions.reason.hasPrefix("1040.0 M instr → 1060.8 M instr a trial, beyond the tolerance 2.1 M instr (the larger of 20.0 k instr and 0.2%)"), "\(instructions.reason)")
        #expect(instructions.grewAt?.first == "\(spin) +20.8 M instr a trial, +2.0 %", "\(instructions.grewAt ?? [])")
        // The numbers stay numbers: the unit is how they are written, not what is stored.
        #expect(instructions.baselineMedian == 1_040_028_648 && instructions.candidateMedian == 1_060_828_648)
        for (name, output) in [("text", report.renderText()), ("Markdown", report.renderMarkdown()), ("HTML", GateReportReadingTests.readable(report.renderHTML()))] {
            #expect(output.contains("+20.8 M instr a trial"), "\(name): \(output)")
            #expect(output.contains("20.0 k instr"), "\(name) writes the floor with its unit: \(output)")
        }
    }

    @Test func theFunctionThatGrewIsNamedWithTheFileAndLineItsTrialsRecorded() throws {
        let key = Fake.key()
        func trial(_ repetition: Int, _ instructions: Int, placed: Bool) -> TrialRecord {
            var record = Self.trial(key, repetition: repetition, instructions: instructions)
            record.instructionCount?.functions = [
                FunctionCost(name: "TrialHost.runTrial", inclusive: instructions, exclusive: 10, file: "/src/Sources/StrainHost/TrialHost.swift", line: 210),
                FunctionCost(name: "closure #1 in SpinScenario.prepare(context:)", inclusive: instructions - 1_000, exclusive: instructions - 1_000,
                             file: placed ? "/build/Sources/gate-fixture/main.swift" : nil, line: placed ? 21 : nil),
            ]
            return record
        }
        // The baseline's trials were recorded without places (before file:line): the candidate's place is used.
        let report = try Self.gate((1...2).map { trial($0, 1_040_000_000, placed: false) }, (1...2).map { trial($0, 1_060_800_000, placed: true) })
        let instructions = try #require(report.rows[0].metrics.first { $0.metric == "instructions" })
        #expect(instructions.grewAt?.first == "closure #1 in SpinScenario.prepare(context:) (main.swift:21) +20.8 M instr a trial, +2.0 %", "\(instructions.grewAt ?? [])")
        #expect(report.renderText().contains("grew most in closure #1 in SpinScenario.prepare(context:) (main.swift:21) +20.8 M instr a trial"), "\(report.renderText())")
        #expect(report.renderMarkdown().contains("(main.swift:21) +20.8 M instr a trial"), "\(report.renderMarkdown())")
        // Without a line, no place: a function of a library without debug information.
        #expect(FunctionCost(name: "swift_retain", inclusive: 1, exclusive: 1, file: "/lib/libswiftCore.so", line: nil).place == nil)
        #expect(FunctionCost(name: "f", inclusive: 1, exclusive: 1, file: "/a/b/c.swift", line: 0).place == nil)
    }

    @Test func theFunctionNamedFirstIsTheBinarysOwnCodeWhenTheRuntimeHoldsTheGrowthToo() throws {
        // Across an await callgrind charged the resumed part to the runtime's partial
        // functions: `Task.sleep(_:) [async resume]` held the growth with the smallest
        // baseline, above the scenario's loop. The loop, placed in the binary, is named.
        let key = Fake.key()
        func trial(_ repetition: Int, after: Int) -> TrialRecord {
            var record = Self.trial(key, repetition: repetition, instructions: 10_000_000 + after)
            record.instructionCount?.functions = [
                FunctionCost(name: "closure #1 in AwaitSpinScenario.prepare(context:) [async resume]", inclusive: 10_000_000 + after, exclusive: 150, file: "/src/main.swift", line: 142),
                FunctionCost(name: "spin(_:from:)", inclusive: 9_900_000 + after, exclusive: 7_000_000 + after * 7 / 10, file: "/src/main.swift", line: 158),
                FunctionCost(name: "static Task.sleep(_:) [async resume]", inclusive: after, exclusive: 14),
            ]
            return record
        }
        let report = try Self.gate((1...2).map { trial($0, after: 5_000_000) }, (1...2).map { trial($0, after: 10_000_000) })
        let instructions = try #require(report.rows[0].metrics.first { $0.metric == "instructions" })
        #expect(instructions.grewAt?.first == "spin(_:from:) (main.swift:158) +5.0 M instr a trial, +33.6 %", "\(instructions.grewAt ?? [])")
        // Without places (a binary without debug information) the runtime's function is named, as before.
        func unplaced(_ record: TrialRecord) -> TrialRecord {
            var record = record
            let bare = record.instructionCount?.functions?.map { FunctionCost(name: $0.name, inclusive: $0.inclusive, exclusive: $0.exclusive) }
            record.instructionCount?.functions = bare
            return record
        }
        let bare = try Self.gate((1...2).map { unplaced(trial($0, after: 5_000_000)) }, (1...2).map { unplaced(trial($0, after: 10_000_000)) })
        #expect(bare.rows[0].metrics.first { $0.metric == "instructions" }?.grewAt?.first?.hasPrefix("static Task.sleep(_:) [async resume] +5.0 M instr") == true)
    }

    @Test func strainsOwnFramesAreNeverNamedFirstEvenWhenTheyHoldTheGrowthWithTheSmallestBaseline() throws {
        // An allocation per decoded node, counted: the growth is in the allocations' own
        // path (the runtime's, and the probe's counting malloc), held both by Strain's
        // executor and by the team's decoder. Where the decoder's baseline cost reads the
        // larger (here: as callgrind may count a recursion through other functions), the
        // rule "the smallest baseline holding the growth" named the executor first.
        let key = Fake.key()
        let kit = "/__w/orders/orders/.build/checkouts/strain/Sources/StrainKit/Strategy/StrategyExecutor.swift"
        let probe = "/__w/orders/orders/.build/checkouts/strain/Sources/CStrainProbe/strain_alloc.c"
        func trial(_ repetition: Int, grown: Int) -> TrialRecord {
            var record = Self.trial(key, repetition: repetition, instructions: 10_000_000 + grown)
            record.instructionCount?.functions = [
                FunctionCost(name: "runInstrumented(_:context:)", inclusive: 10_000_000 + grown, exclusive: 40, file: kit, line: 58),
                FunctionCost(name: "CatalogNode.init(from:)", inclusive: 30_000_000 + grown, exclusive: 2_000_000, file: "/__w/orders/orders/Sources/Workloads/Workloads.swift", line: 30),
                FunctionCost(name: "strain_alloc_counted_malloc", inclusive: 1_000_000 + grown / 2, exclusive: 600_000 + grown / 2, file: probe, line: 210),
                FunctionCost(name: "swift_beginAccess", inclusive: 500_000 + grown / 3, exclusive: 500_000 + grown / 3),
            ]
            return record
        }
        let report = try Self.gate((1...2).map { trial($0, grown: 0) }, (1...2).map { trial($0, grown: 600_000) })
        let instructions = try #require(report.rows[0].metrics.first { $0.metric == "instructions" })
        #expect(instructions.verdict == .regressed, "\(instructions)")
        #expect(instructions.grewAt?.first?.hasPrefix("CatalogNode.init(from:) (Workloads.swift:30) +600 k instr a trial") == true, "\(instructions.grewAt ?? [])")
        // Then by own code, the runtime's before Strain's probe.
        #expect(instructions.grewAt?.dropFirst().first?.hasPrefix("swift_beginAccess +200 k instr a trial in its own code") == true, "\(instructions.grewAt ?? [])")
        #expect(instructions.grewAt?.last?.hasPrefix("strain_alloc_counted_malloc (strain_alloc.c:210)") == true, "\(instructions.grewAt ?? [])")
    }

    @Test func workThatMovedBetweenThreadsDoesNotGetTheThreadsRootNamedForTheGrowth() throws {
        // Seen beside two busy loops: an await's resumed half ran on the main thread in the
        // baseline's trials and on GCD's threads in the candidate's, so `clone`, every GCD
        // thread's root, grew twice the row's growth (+19.4 M against +9.6 M) and was named first.
        let key = Fake.key()
        func trial(_ repetition: Int, after: Int, onWorkers: Int) -> TrialRecord {
            var record = Self.trial(key, repetition: repetition, instructions: 10_000_000 + after)
            record.instructionCount?.functions = [
                FunctionCost(name: "main", inclusive: 10_000_000 + after - onWorkers, exclusive: 100),
                FunctionCost(name: "clone", inclusive: onWorkers, exclusive: 0),
                FunctionCost(name: "spin(_:from:)", inclusive: 9_900_000 + after, exclusive: 9_900_000 + after, file: "/src/main.swift", line: 158),
            ]
            return record
        }
        // The baseline: all 15 M under main; the candidate: 5 M more, all 20 M on GCD's threads.
        let report = try Self.gate((1...2).map { trial($0, after: 5_000_000, onWorkers: 0) },
                                   (1...2).map { trial($0, after: 10_000_000, onWorkers: 20_000_000) })
        let instructions = try #require(report.rows[0].metrics.first { $0.metric == "instructions" })
        #expect(instructions.verdict == .regressed, "\(instructions)")
        #expect(instructions.grewAt?.first == "spin(_:from:) (main.swift:158) +5.0 M instr a trial, +33.6 %", "\(instructions.grewAt ?? [])")
    }

    @Test func pmuCountsWithoutAFunctionListAreJudgedByTheirTotalAndNameNoFunction() throws {
        // A perf counter (source `pmu`) has no per-function costs: the gate judges the total alone.
        let key = Fake.key()
        func trial(_ repetition: Int, _ instructions: Int) -> TrialRecord {
            var record = Fake.trial(key, repetition: repetition)
            record.metrics.instructions = instructions
            record.instructionCount = InstructionCount(source: "pmu", instructions: instructions)
            return record
        }
        let report = try Self.gate((1...2).map { trial($0, 1_040_000_000 + $0) }, (1...2).map { trial($0, 1_060_800_000 + $0) })
        let instructions = try #require(report.rows[0].metrics.first { $0.metric == "instructions" })
        #expect(instructions.verdict == .regressed, "\(instructions)")
        #expect(instructions.noise == .counted)
        #expect(instructions.grewAt?.isEmpty ?? true, "\(instructions.grewAt ?? [])")
        #expect(report.exitCode == 1)
        let same = try Self.gate((1...2).map { trial($0, 1_040_000_000 + $0) }, (1...2).map { trial($0, 1_040_000_100 + $0) })
        #expect(same.rows[0].metrics.first { $0.metric == "instructions" }?.verdict == .unchanged)
    }

    @Test func theDefaultToleranceIsTheLargerOfTwentyThousandInstructionsAndTwoPerThousand() throws {
        let key = Fake.key()
        // 19,000 more on a small row: the harness's own spread reached 4,747 between repetitions.
        let small = try Self.gate((1...2).map { Self.trial(key, repetition: $0, instructions: 400_000) },
                                  (1...2).map { Self.trial(key, repetition: $0, instructions: 419_000) })
        #expect(small.rows[0].metrics.first { $0.metric == "instructions" }?.verdict == .unchanged)
        // 0.3 % more of 100 million: beyond 0.2 %.
        let large = try Self.gate((1...2).map { Self.trial(key, repetition: $0, instructions: 100_000_000) },
                                  (1...2).map { Self.trial(key, repetition: $0, instructions: 100_300_000) })
        #expect(large.rows[0].metrics.first { $0.metric == "instructions" }?.verdict == .regressed)
        // A baseline that does not repeat is not judged.
        let varying = try Self.gate([Self.trial(key, repetition: 1, instructions: 100_000_000), Self.trial(key, repetition: 2, instructions: 100_500_000)],
                                    (1...2).map { Self.trial(key, repetition: $0, instructions: 101_000_000) })
        #expect(varying.rows[0].metrics.first { $0.metric == "instructions" }?.verdict == .inconclusive)
    }

    @Test func aRowThatWasNotCountableHasNoInstructionVerdict() throws {
        let key = Fake.key()
        func notCountable(_ repetition: Int) -> TrialRecord {
            var record = Fake.trial(key, repetition: repetition, wall: 0.01)
            record.instructionCount = InstructionCount(source: "callgrind", instructions: nil, notCountable: "not countable: the scenario's work depends on timing")
            return record
        }
        let report = try Self.gate([notCountable(1), notCountable(2)], [notCountable(1), notCountable(2)])
        #expect(report.rows[0].metrics.first { $0.metric == "instructions" } == nil)
    }
}
