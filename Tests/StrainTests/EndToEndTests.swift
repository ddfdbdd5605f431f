import Foundation
import StrainKit
import Testing

/// The built binary on small suites: real children, real overflows, real libunwind.
@Suite(.serialized, .timeLimit(.minutes(10))) struct EndToEndTests {
    @Test func unarchivingAChainPastA512KiBThreadOverflowsWithTheCycleNamedAndCompletesOn8MiB() async throws {
        let (result, run, out) = try await StrainBinary.runSuite("""
        name: overflow
        runs:
          - scenario: cyclic-graph
            parameters: {operation: unarchive, shape: chain, size: 3000}
            strategies: [thread(512KiB), thread(8MiB)]
            expect:
              thread(512KiB): stackOverflow
              thread(8MiB): completed
        """)
        #expect(result.status == 0, "\(result.stdout)\n\(result.stderr)")
        let record = try #require(run)
        let small = try #require(record.trials("thread(512KiB)").first)
        #expect(small.outcome.kind == .stackOverflow)
        #expect(small.outcome.signal == SIGSEGV)
        let trace = try #require(small.trace)
        #expect(trace.isStackOverflow)
        #expect(trace.stackSizeBytes == 512 * 1024)
        #expect(trace.totalFrames > 1000)
        let cycle = try #require(trace.cycle)
        let names = cycle.frames.compactMap(\.symbol)
        #expect(names.contains { $0.contains("NSKeyedUnarchiver") && $0.contains("decodeObject(forKey:)") }, "\(names)")
        #expect(names.contains { $0.contains("ChainNode.init(coder:)") }, "\(names)")
        #expect(cycle.repetitions > 300)
        #expect(trace.lastFrames.contains { $0.symbol?.contains("runInstrumented") == true }, "the outermost frames reach the harness's thread entry")
        #expect(small.metrics.depth ?? 0 > 300)

        let large = try #require(record.trials("thread(8MiB)").first)
        #expect(large.outcome.kind == .completed)
        #expect(large.metrics.stackSizeBytes == 8 << 20, "the thread measured the stack it really had")
        #expect((large.metrics.stackHighWaterBytes ?? 0) > 512 * 1024, "the chain needed more than 512 KiB")
        #expect(large.metrics.depth == 3000)
        #expect(result.stdout.contains("ChainNode.init(coder:)"), "the terminal shows the cycle")

        let summary = try String(contentsOfFile: (out as NSString).appendingPathComponent("summary.md"), encoding: .utf8)
        #expect(summary.contains("| thread(512KiB) | stackOverflow |"))
        #expect(summary.contains("Deep but finite"))
        let schema = try await SchemaCheck.validate((out as NSString).appendingPathComponent("run.json"))
        #expect(schema.valid, "run.json does not match Sources/StrainRecords/RunRecord.schema.json: \(schema.output)")
    }

    @Test func aGCDWorkerOverflowsUnderTheIOSProfileWhereItSurvivesOnLinux() async throws {
        let (result, run, _) = try await StrainBinary.runSuiteLeavingNothing("""
        name: profiles
        profiles: [linux, ios]
        runs:
          - scenario: cyclic-graph
            parameters: {operation: archive, shape: chain, size: 2000}
            strategies: [gcd-global]
            expect: [completed, stackOverflow]
        """)
        #expect(result.status == 0, "\(result.stdout)\n\(result.stderr)")
        let record = try #require(run)
        let linux = try #require(record.trials("gcd-global", profile: "linux").first)
        let ios = try #require(record.trials("gcd-global", profile: "ios").first)
        #expect(linux.outcome.kind == .completed)
        #expect(linux.metrics.stackSizeBytes == 8 << 20)
        #expect(ios.outcome.kind == .stackOverflow)
        #expect(ios.metrics.stackSizeBytes == 512 * 1024, "the ios profile reached GCD's worker before it started")
        #expect(ios.trace?.lastFrames.contains { $0.module?.contains("libdispatch") == true } == true, "the overflow happened on a GCD worker")
    }

    @Test func expectVariesByProfileSoOneRunHoldsBothPlatformsVerdicts() async throws {
        // The run above had to accept either outcome on both profiles; per profile, each is exact.
        let (result, run, _) = try await StrainBinary.runSuiteLeavingNothing("""
        name: per-profile-expect
        profiles: [linux, ios]
        runs:
          - scenario: cyclic-graph
            parameters: {operation: archive, shape: chain, size: 2000}
            strategies: [gcd-global]
            expect: {ios: [stackOverflow], linux: [completed]}
        """)
        #expect(result.status == 0, "\(result.stdout)\n\(result.stderr)")
        let record = try #require(run)
        let linux = try #require(record.trials("gcd-global", profile: "linux").first)
        let ios = try #require(record.trials("gcd-global", profile: "ios").first)
        #expect(linux.outcome.kind == .completed && linux.expected)
        #expect(linux.expectedOutcomes == ["completed"])
        #expect(ios.outcome.kind == .stackOverflow && ios.expected)
        #expect(ios.expectedOutcomes == ["stackOverflow"])
        #expect(record.suite.runs.first?.expect == ["ios/default": ["stackOverflow"], "linux/default": ["completed"]])
    }

    @Test func aNullDereferenceIsACrashNotAnOverflowAndTheRunnerKeepsEveryOtherTrial() async throws {
        let (result, run, out) = try await StrainBinary.runSuite("""
        name: crash
        runs:
          - scenario: noop
            strategies: [gcd-global]
          - scenario: crash
            parameters: {kind: [null-dereference, abort]}
            strategies: [gcd-global, thread(1MiB)]
            expect: crashed
          - scenario: crash
            parameters: {kind: hang}
            strategies: [thread(1MiB)]
            timeout: 1s
            expect: timedOut
          - scenario: noop
            strategies: [main]
        """)
        #expect(result.status == 0, "\(result.stdout)\n\(result.stderr)")
        let record = try #require(run)
        #expect(record.trials.count == 7)
        let nulls = record.trials.filter { $0.parameters["kind"] == "null-dereference" }
        #expect(nulls.count == 2)
        for trial in nulls {
            #expect(trial.outcome.kind == .crashed)
            #expect(trial.outcome.description == "crashed(SIGSEGV)")
            #expect(trial.trace?.isStackOverflow == false)
            #expect(trial.trace?.faultAddress == 0)
            #expect(trial.trace?.firstFrames.first?.symbol == "strain_crash_null_dereference")
        }
        let aborts = record.trials.filter { $0.parameters["kind"] == "abort" }
        #expect(aborts.allSatisfy { $0.outcome.description == "crashed(SIGABRT)" })
        // Counted as it faulted, on a worker or a thread of its own beside the main thread: a crash
        // within the parent's first 5 ms sample showed its start's 1 thread (re-trial 35o, F4).
        for trial in nulls + aborts {
            #expect((trial.metrics.peakThreads ?? 0) >= 2, "\(trial.key): \(trial.metrics.peakThreads ?? 0) threads")
        }
        let hang = try #require(record.trials.first { $0.parameters["kind"] == "hang" })
        #expect(hang.outcome.kind == .timedOut)
        // Ended by the runner at its deadline (it never ends by itself; the run's bound
        // catches a runner that fails to stop it). How soon after is a benchmark's business.
        #expect((hang.metrics.trialSeconds ?? 0) >= 1, "it ran to its 1 s deadline: \(hang.metrics.trialSeconds ?? 0)")
        #expect(hang.outcome.message?.contains("the child was stopped") == true, "\(hang.outcome)")
        #expect(record.trials.filter { $0.scenario == "noop" }.allSatisfy { $0.outcome.kind == .completed })
        let journal = try String(contentsOfFile: (out as NSString).appendingPathComponent("trials.jsonl"), encoding: .utf8)
        #expect(journal.split(separator: "\n").count == 8, "the plan's header and every trial reached the journal")
    }

    @Test func anUnexpectedOutcomeExitsOneAndABadSuiteExitsTwoWithThePlace() async throws {
        let (unexpected, run, _) = try await StrainBinary.runSuiteLeavingNothing("""
        name: unexpected
        runs:
          - scenario: crash
            parameters: {kind: throw}
            strategies: [main]
        """)
        #expect(unexpected.status == 1)
        #expect(run?.trials.first?.outcome.kind == .threw)
        #expect(run?.trials.first?.expected == false)

        let (bad, _, _) = try await StrainBinary.runSuiteLeavingNothing("name: bad\nruns:\n  - scenario: noop\n    strategies: [thread(4KiB)]\n")
        #expect(bad.status == 2)
        #expect(bad.stderr.contains("suite.yaml:4:18: error: stack size 4KiB"), "\(bad.stderr)")

        let missing = try await StrainBinary.run(["run", "/nonexistent.yaml"])
        #expect(missing.status == 2)
        #expect(missing.stderr.contains("/nonexistent.yaml: error: no such file; give the path of a .yaml suite"))
    }

    @Test func listNamesEveryScenarioStrategyAndProfile() async throws {
        let result = try await StrainBinary.run(["list"])
        #expect(result.status == 0)
        for name in ["noop", "stack-depth", "cyclic-graph", "nested-json", "thread-queue(stack)", "gcd-global(qos)", "ios"] {
            #expect(result.stdout.contains(name))
        }
    }
}
