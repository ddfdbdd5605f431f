import Foundation
import StrainHelpers
import StrainKit
import StrainReports
@testable import StrainScenarios
import Testing
import StrainText

/// The measuring parts of the contention scenarios, in process.
@Suite struct ContentionMeasurementTests {
    @Test func fairnessIsOneWhenEvenAndFallsTowardOneOverNWhenOneWorkerDoesEverything() {
        let even = Fairness(operationsPerWorker: [250, 250, 250, 250])
        #expect(even.jainIndex == 1)
        #expect(even.spread == 0)
        let lopsided = Fairness(operationsPerWorker: [1000, 0, 0, 0])
        #expect(abs(lopsided.jainIndex - 0.25) < 1e-9)
        #expect(lopsided.spread == 4)
    }

    @Test func latencySummaryReadsPercentilesFromTheRecorder() {
        var recorder = LatencyRecorder()
        for value in 1...1000 { recorder.record(nanoseconds: UInt64(value * 100)) }
        let summary = recorder.summary
        #expect(summary.count == 1000)
        #expect(abs(summary.p50Nanoseconds - 50_000) <= 500, "\(summary.p50Nanoseconds)")
        #expect(abs(summary.p99Nanoseconds - 99_000) <= 1_000, "\(summary.p99Nanoseconds)")
        #expect(summary.maxNanoseconds >= 99_000)
        #expect(summary.curve.first?.percentile == 0 && summary.curve.last?.percentile == 100)
    }

    @Test func theBudgetHandsOutExactlyItsOperationsInChunksAcrossThreads() {
        let budget = OperationBudget(100_003)
        let taken = Countdown()
        let total = AtomicCounter()
        DispatchQueue.concurrentPerform(iterations: 8) { _ in
            while case let chunk = budget.take(), chunk > 0 {
                for _ in 0..<chunk { total.add() }
            }
            taken.add()
        }
        #expect(total.value == 100_003)
    }

    @Test func everyGuardButNoneKeepsAllAppendsFromEightThreads() throws {
        for kind in GuardKind.allCases where kind != .unguarded && kind != .actor {
            let check = AppendCheck()
            _ = try kind.open(check)
            #expect(check.count == 8 * 2_000, "\(kind.rawValue) kept \(check.count) of \(8 * 2_000)")
        }
    }

    @Test func theEndCheckCatchesLostDuplicatedForeignAndReorderedElements() throws {
        let parameters = ParameterValues(["workers": "1", "operations": "3", "reads": "0", "clear-every": "0"], for: ContendedCollectionScenario.self)
        let scenario = ContendedCollectionScenario(parameters: parameters)
        #expect(parameters.problems.isEmpty, "\(parameters.problems)")
        let context = ScenarioContext(parameters: parameters, seed: 1, profile: .linux)
        var worker = WorkerResult(worker: 0)
        worker.operations = 3
        func array(_ ids: [Int]) -> ArrayCollection<Int> {
            var value = ArrayCollection<Int>()
            for id in ids { value.write(.append(id)) }
            return value
        }
        func problem(_ ids: [Int]) -> String? {
            do {
                try scenario.check(array(ids), results: [worker], appendedBy: [0: 3], context: context)
                return nil
            } catch {
                return "\(error)"
            }
        }
        #expect(problem([0, 1, 2]) == nil)
        #expect(problem([0, 1])?.contains("1 lost") == true)
        #expect(problem([0, 1, 1])?.contains("duplicated") == true)
        #expect(problem([0, 1, 7])?.contains("never appended") == true)
        #expect(problem([0, 2, 1])?.contains("out of order") == true)
    }

    @Test func guardsAreRankedByMedianThroughputWithTheCrashedLast() {
        func trial(_ guardName: String, _ throughput: Double?, _ outcome: TrialOutcome = .completed, repetition: Int = 1) -> TrialRecord {
            let key = TrialKey(scenario: "contended-collection", parameters: [.init(name: "guard", value: guardName), .init(name: "workers", value: "8")],
                               strategy: .gcdGlobal(.default), profile: .linux)
            var metrics = TrialMetrics()
            metrics.throughputPerSecond = throughput
            return TrialRecord(id: TrialID(key: key, repetition: repetition), index: 0, seed: 1, outcome: outcome,
                               expected: outcome.kind == .completed, expectedOutcomes: ["completed"], metrics: metrics, startedAt: "")
        }
        let run = RunRecord(
            suite: ResolvedSuite(name: "t", description: nil, path: "t.yaml", repetitions: 1, timeoutSeconds: 10, stallSeconds: 1, profiles: ["linux"], runs: []),
            environment: EnvironmentRecord(host: "h", cores: 2, memoryBytes: 0, kernel: "k", architecture: "x86_64", swiftVersion: "6", rlimits: [:], gitCommit: nil),
            startedAt: "", finishedAt: "", runnerPeakRSSBytes: 0,
            trials: [
                trial("NSLock", 10e6), trial("NSLock", 30e6, repetition: 2), trial("NSLock", 20e6, repetition: 3),
                trial("unguarded", nil, TrialOutcome(kind: .crashed, signal: 6)),
                trial("unguarded", 90e6, TrialOutcome(kind: .invariantViolated), repetition: 2),
                trial("unguarded", 80e6, repetition: 3),
                trial("Mutex", 25e6),
            ]
        )
        let tables = GuardComparison(run).tables
        #expect(tables.count == 1)
        let rows = tables[0].rows
        #expect(rows.map(\.value) == ["Mutex", "NSLock", "unguarded"])
        #expect(rows[1].medianThroughput == 20e6)
        #expect(rows[2].outcomes == "1 crashed(SIGABRT), 1 invariantViolated, 1 completed")
        #expect(rows[2].medianThroughput == 80e6, "only completed trials are measured")
        #expect(GuardComparison.cells(rows[2], rank: 3)[0] == "–", "a guard that failed a repetition is not ranked, however fast")
        #expect(Format.rate(26.4e6) == "26.4 M/s" && Format.rate(358e3) == "358 k/s")
        // Three digits, as times have (`82 k/s` sat beside `423 k/s`).
        #expect(Format.rate(82_440) == "82.4 k/s" && Format.rate(1_500) == "1.50 k/s" && Format.rate(2_345_000) == "2.35 M/s" && Format.rate(999_700) == "1.00 M/s" && Format.rate(420) == "420 /s")
        #expect(Format.nanoseconds(120) == "120 ns" && Format.nanoseconds(1_400) == "1.40 µs")
        // Three digits, as every other time has (`126.0 µs` and `1.1 ms` sat beside `1.10 ms`).
        #expect(Format.nanoseconds(126_000) == "126 µs" && Format.nanoseconds(12_640) == "12.6 µs" && Format.nanoseconds(1_100_000) == "1.10 ms")
    }
}

/// Eight threads append 2,000 elements each through a concrete guard.
// `@unchecked Sendable`: `count` is written once, by `visit`, after every worker has finished, and read after `open` returns.
private final class AppendCheck: GuardVisitor, @unchecked Sendable {
    typealias Value = ArrayCollection<Int>
    var count = 0

    func visit<Guard: StateGuard>(_ state: Guard) throws where Guard.Value == ArrayCollection<Int> {
        DispatchQueue.concurrentPerform(iterations: 8) { worker in
            for index in 0..<2_000 {
                _ = state.perform(.append(worker << OperationPicker.idShift | index))
                if index % 10 == 0 { _ = state.perform(.count) }
            }
        }
        count = state.settled().ids.count
    }
}

/// The built binary on small contention suites.
@Suite(.serialized, .timeLimit(.minutes(10))) struct ContentionEndToEndTests {
    @Test func guardedCollectionsKeepEveryElementAndReportThroughputLatencyAndFairness() async throws {
        let (result, run, out) = try await StrainBinary.runSuite("""
        name: contention
        timeout: 30s
        runs:
          - scenario: contended-collection
            parameters: {guard: [NSLock, Mutex, rw-queue-async-barrier, actor], workers: 4, operations: 20000}
            strategies: [gcd-global]
        """, timeout: 120)
        #expect(result.status == 0, "\(result.stdout)\n\(result.stderr)")
        let record = try #require(run)
        #expect(record.trials.count == 4)
        for trial in record.trials {
            #expect(trial.outcome.kind == .completed, "\(trial.parameters["guard"]!): \(trial.outcome)")
            #expect((trial.metrics.throughputPerSecond ?? 0) > 0)
            let latency = try #require(trial.metrics.latency)
            #expect(latency.count > 0 && latency.p99Nanoseconds >= latency.p50Nanoseconds)
            let fairness = try #require(trial.metrics.fairness)
            #expect(fairness.operationsPerWorker.count == 4)
            #expect(fairness.operationsPerWorker.reduce(0, +) == 20000)
            #expect(trial.metrics.custom["elements at the end"].map { $0 > 0 } == true)
        }
        #expect(result.stdout.contains("guards by throughput"))
        let schema = try await SchemaCheck.validate((out as NSString).appendingPathComponent("run.json"))
        #expect(schema.valid, "run.json does not match the schema: \(schema.output)")
    }

    /// A data race is a matter of scheduling: on a loaded two-core machine three
    /// trials once all completed (CI), and a wild pointer once landed under a
    /// worker's stack. So the race gets up to four batches of three trials to
    /// show itself, and whatever it ends in must be a crash or a broken
    /// invariant, never an overflow.
    @Test func eightThreadsAppendingToAnUnguardedArrayCrashOrLoseElementsAndNeverCountAsAnOverflow() async throws {
        var outcomes: [String] = []
        for _ in 0..<4 {
            let (result, run, _) = try await StrainBinary.runSuiteLeavingNothing("""
            name: unguarded
            timeout: 30s
            runs:
              - scenario: contended-collection
                parameters: {guard: unguarded, workers: 8, operations: 100000}
                strategies: [gcd-global]
                repetitions: 3
                expect: [completed, crashed, invariantViolated]
            """, timeout: 120)
            #expect(result.status == 0, "\(result.stdout)\n\(result.stderr)")
            let record = try #require(run)
            for trial in record.trials {
                #expect([.completed, .crashed, .invariantViolated].contains(trial.outcome.kind), "\(trial.outcome)")
                if trial.outcome.kind == .crashed { #expect(trial.trace != nil, "a crash comes with its trace") }
            }
            outcomes += record.trials.map(\.outcome.description)
            if record.trials.contains(where: { $0.outcome.kind != .completed }) { break }
        }
        #expect(outcomes.contains { $0 != "completed" },
                "eight threads appending to a plain array without a guard: \(outcomes)")
    }

    @Test func reenteringALockDeadlocksNSLockTrapsMutexAndIsFineForNSRecursiveLock() async throws {
        let (result, run, _) = try await StrainBinary.runSuiteLeavingNothing("""
        name: reentrant
        timeout: 10s
        stall: 400ms
        runs:
          - scenario: reentrant-guard
            parameters: {guard: [NSLock, Mutex, NSRecursiveLock]}
            strategies: [thread(512KiB)]
            expect: [deadlocked, crashed, completed]
        """, timeout: 60)
        #expect(result.status == 0, "\(result.stdout)\n\(result.stderr)")
        let record = try #require(run)
        let outcome = { (name: String) in record.trials.first { $0.parameters["guard"] == name }?.outcome }
        #expect(outcome("NSLock")?.kind == .deadlocked)
        #expect(outcome("Mutex") == TrialOutcome(kind: .crashed, signal: 4))
        #expect(outcome("NSRecursiveLock")?.kind == .completed)
        let nsLock = try #require(record.trials.first { $0.parameters["guard"] == "NSLock" })
        #expect(nsLock.dump?.waitCycle?.links.count == 1, "the thread waits for the lock it holds")
        #expect(nsLock.dump?.groups.first?.summary.hasPrefix("futex wait") == true)
    }

    @Test func subscriptionsStoredThroughALockAllHearTheValueSentAfter() async throws {
        let (result, run, _) = try await StrainBinary.runSuiteLeavingNothing("""
        name: combine
        timeout: 30s
        runs:
          - scenario: combine-store
            parameters: {guard: NSLock, workers: 4, subscriptions: 4000}
            strategies: [gcd-global]
        """, timeout: 60)
        #expect(result.status == 0, "\(result.stdout)\n\(result.stderr)")
        let trial = try #require(run?.trials.first)
        #expect(trial.outcome.kind == .completed, "\(trial.outcome)")
        #expect(trial.metrics.custom["subscriptions stored"] == 4000)
        #expect(trial.metrics.custom["subscribers that heard the value"] == 4000)
    }
}
