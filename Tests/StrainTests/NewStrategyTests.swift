import Foundation
import StrainKit
import Testing

/// `operation-queue(width)` and `task-executor(n, stack)`: parsed, and run for real
/// in children that overflow and stall.
@Suite struct NewStrategyParsingTests {
    @Test func theNewStrategiesParseAndPrintTheirOwnNames() throws {
        #expect(try StrategySpec(parsing: "operation-queue(4)") == .operationQueue(width: 4))
        #expect(try StrategySpec(parsing: "task-executor(2, 8MiB)") == .taskExecutor(count: 2, stackBytes: 8 << 20))
        for name in ["operation-queue(1)", "task-executor(1, 512KiB)", "task-executor(64, 4296KiB)"] {
            #expect(try StrategySpec(parsing: name).description == name)
        }
    }

    @Test func badWidthsCountsAndStacksAreRefusedWithTheFix() {
        let cases: [(String, String)] = [
            ("operation-queue", "needs a width from 1 to 4096"),
            ("operation-queue(0)", "write e.g. operation-queue(4)"),
            ("task-executor(2)", "needs a thread count and a stack size"),
            ("task-executor(0, 8MiB)", "not a thread count from 1 to 4096"),
            ("task-executor(2, 4KiB)", "under 32KiB"),
            ("task-executor(2, 2GiB)", "over 1GiB"),
            ("task-executor(2", "quote this strategy: \"task-executor(2, 8MiB)\""),
        ]
        for (text, message) in cases {
            #expect(throws: StrategySpec.ParseError.self, "\(text)") { try StrategySpec(parsing: text) }
            do {
                _ = try StrategySpec(parsing: text)
            } catch {
                #expect(error.description.contains(message), "\(text): \(error.description)")
            }
        }
    }
}

@Suite(.serialized, .timeLimit(.minutes(10))) struct NewStrategyEndToEndTests {
    @Test func bothReportTheStackTheirThreadsHadAndCatchAnOverflowWithItsTrace() async throws {
        let (result, run, _) = try await StrainBinary.runSuiteLeavingNothing("""
        name: new-strategies-overflow
        timeout: 30s
        profiles: [ios]
        runs:
          - scenario: cyclic-graph
            parameters: {operation: unarchive, shape: chain, size: 3000}
            strategies: [operation-queue(2), "task-executor(1, 512KiB)", "task-executor(2, 8MiB)"]
            expect:
              task-executor(2, 8MiB): completed
              default: stackOverflow
        """, timeout: 90)
        #expect(result.status == 0, "\(result.stdout)\n\(result.stderr)")
        let record = try #require(run)
        for strategy in ["operation-queue(2)", "task-executor(1, 512KiB)"] {
            let trial = try #require(record.trials(strategy, profile: "ios").first)
            #expect(trial.outcome.kind == .stackOverflow, "\(strategy): \(trial.outcome)")
            let trace = try #require(trial.trace, "\(strategy): the handler ran on an alternate signal stack and wrote a trace")
            #expect(trace.isStackOverflow)
            #expect(trace.stackSizeBytes == 512 << 10, "\(strategy)")
            #expect(trace.cycle?.frames.contains { $0.symbol?.contains("ChainNode.init(coder:)") == true } == true, "\(strategy)")
        }
        let large = try #require(record.trials("task-executor(2, 8MiB)", profile: "ios").first)
        #expect(large.outcome.kind == .completed)
        #expect(large.metrics.stackSizeBytes == 8 << 20, "measured from inside the executor's thread, not the ios profile's 512 KiB")
    }

    @Test func bothStarveWithTheirBlockedThreadsDumpedAndABlockedTaskExecutorLeavesTheCooperativePoolFree() async throws {
        let (result, run, _) = try await StrainBinary.runSuiteLeavingNothing("""
        name: new-strategies-stall
        timeout: 20s
        stall: 400ms
        runs:
          - scenario: thread-explosion
            parameters: {items: 50, block: semaphore}
            strategies: [operation-queue(4), "task-executor(4, 512KiB)"]
            expect: starved
          - scenario: cooperative-starvation
            parameters: {blockers: 2, hold-ms: 5000}
            strategies: [task]
            expect: starved
          # The probe runs at once on the free cooperative pool: a threshold of its own, far
          # above a late wake-up on 2 busy cores (the blockers hold for 5 s either way).
          - scenario: cooperative-starvation
            parameters: {blockers: 2, hold-ms: 5000}
            strategies: ["task-executor(2, 512KiB)"]
            stall: 3s
            expect: completed
        """, timeout: 120)
        #expect(result.status == 0, "\(result.stdout)\n\(result.stderr)")
        let record = try #require(run)
        for strategy in ["operation-queue(4)", "task-executor(4, 512KiB)"] {
            let trial = try #require(record.trials.first { $0.scenario == "thread-explosion" && $0.strategy.description == strategy })
            #expect(trial.outcome.kind == .starved, "\(strategy): \(trial.outcome)")
            let dump = try #require(trial.dump)
            let blocked = try #require(dump.groups.first { $0.inWork }, "\(strategy): \(dump.groups.map(\.summary))")
            #expect(blocked.frames.contains { $0.symbol?.contains("ThreadExplosionScenario") == true })
        }
        let executorTrial = try #require(record.trials.first { $0.scenario == "thread-explosion" && $0.strategy.description == "task-executor(4, 512KiB)" })
        #expect(executorTrial.dump?.groups.first { $0.inWork }?.count == 4, "exactly the executor's 4 threads hold the blocked work")

        let free = try #require(record.trials.first { $0.scenario == "cooperative-starvation" && $0.strategy.description == "task-executor(2, 512KiB)" })
        #expect(free.outcome.kind == .completed, "\(free.outcome)")
        #expect(free.metrics.custom["probe ran"] == 1, "the probe Task on the cooperative pool ran while the executor's threads were blocked")
        let pool = try #require(record.trials.first { $0.scenario == "cooperative-starvation" && $0.strategy.description == "task" })
        #expect(pool.outcome.kind == .starved, "the same blockers on the cooperative pool starve it: \(pool.outcome)")
    }
}
