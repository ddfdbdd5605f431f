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
        #expect(instructions.grewAt?.first == "Link.init(from:) +38,400 instructions a trial, +12.0 %", "\(instructions.grewAt ?? [])")
        #expect(instructions.grewAt?.dropFirst().first == "swift_retain +19,200 instructions a trial in its own code, +12.0 %", "\(instructions.grewAt ?? [])")
        #expect(report.renderText().contains("grew most in Link.init(from:) +38,400 instructions a trial"), "\(report.renderText())")
        #expect(report.exitCode == 1)
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
