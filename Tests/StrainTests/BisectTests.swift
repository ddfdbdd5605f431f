import Foundation
import StrainKit
import StrainReports
import StrainRunner
import StrainText
import StrainWire
import Testing

/// A probe runner with a known boundary: no child, for the search's logic alone.
final class FakeProbeRunner: BisectProbeRunner {
    /// Whether a probe at this value (stack bytes or parameter value) completes, per repetition.
    let completes: (_ value: Int, _ repetition: Int) -> Bool
    let valueOf: (TrialSpec) -> Int
    private(set) var probed: [Int] = []

    init(valueOf: @escaping (TrialSpec) -> Int, completes: @escaping (Int, Int) -> Bool) {
        self.valueOf = valueOf
        self.completes = completes
    }

    func run(_ spec: TrialSpec) -> TrialRecord {
        let value = valueOf(spec)
        probed.append(value)
        let outcome = completes(value, spec.repetition) ? TrialOutcome.completed : TrialOutcome(kind: .stackOverflow, signal: SIGSEGV)
        return TrialRecord(id: spec.id, index: spec.index, seed: spec.seed, outcome: outcome, expected: true,
                           expectedOutcomes: spec.expected.map(\.description), metrics: TrialMetrics(), startedAt: "")
    }

    static func stack(_ spec: TrialSpec) -> Int { spec.strategy.chosenStackBytes! }
    static func size(_ spec: TrialSpec) -> Int { Int(spec.parameters["size"]!)! }
}

@Suite struct BisectorTests {
    func request(_ question: BisectRequest.Question, low: Int, high: Int, repetitions: Int = 3) -> BisectRequest {
        BisectRequest(scenario: "cyclic-graph", parameters: ["shape": "chain", "size": "2000"], question: question,
                      strategy: .thread(stackBytes: 512 * 1024), profile: .linux, low: low, high: high,
                      repetitions: repetitions, timeoutSeconds: 10, stallSeconds: 2, exhaustive: false, seed: 1)
    }

    @Test func aStackSearchFindsTheSmallestCompletingStackToOnePage() throws {
        let needed = 1_331_200 // 1300 KiB
        let runner = FakeProbeRunner(valueOf: FakeProbeRunner.stack) { value, _ in value >= needed }
        let search = try Bisector(runner: runner).search(request(.stack, low: 16 << 10, high: 1 << 30))
        #expect(search.verdict == .boundary)
        #expect(search.passing == needed)
        #expect(search.failing == needed - 4096)
        #expect(runner.probed.allSatisfy { $0 % 4096 == 0 }, "every probe is a whole number of pages")
        #expect(runner.probed.count < 30, "a bisection, not a scan: \(runner.probed.count) probes")
        #expect(search.probes.count == runner.probed.count)
    }

    @Test func aParameterSearchFindsTheLargestCompletingValue() throws {
        let runner = FakeProbeRunner(valueOf: FakeProbeRunner.size) { value, _ in value <= 772 }
        let search = try Bisector(runner: runner).search(request(.parameter("size"), low: 1, high: 1_000_000))
        #expect(search.verdict == .boundary)
        #expect(search.passing == 772)
        #expect(search.failing == 773)
        #expect(runner.probed.max()! <= 2048, "doubling stops at the first failure instead of probing the top of the range")
    }

    @Test func repetitionsThatDisagreeNearTheBoundaryAreReportedAsNondeterministicWithTheMixedRange() throws {
        // Below 700 always completes, from 710 never; between, only odd repetitions complete.
        let runner = FakeProbeRunner(valueOf: FakeProbeRunner.size) { value, repetition in
            value < 700 || (value < 710 && repetition % 2 == 1)
        }
        let search = try Bisector(runner: runner).search(request(.parameter("size"), low: 1, high: 100_000))
        #expect(search.verdict == .nondeterministic)
        #expect(search.passing == 699, "every repetition completes up to 699")
        #expect(search.failing == 710, "every repetition fails from 710")
        #expect((search.mixedLow ?? 0) >= 700 && (search.mixedHigh ?? 0) <= 709)
        #expect(search.explanation.hasPrefix("Not deterministic"))
    }

    @Test func aScenarioThatFailsAtTheBottomOfTheRangeNeverCompletes() throws {
        let runner = FakeProbeRunner(valueOf: FakeProbeRunner.size) { _, _ in false }
        let search = try Bisector(runner: runner).search(request(.parameter("size"), low: 1, high: 100))
        #expect(search.verdict == .neverCompletes)
        #expect(search.failing == 1)
        #expect(runner.probed == [1])
    }

    @Test func aStackSearchWhoseProbesAllThrowSaysItIsNotAMatterOfStack() throws {
        final class Throwing: BisectProbeRunner {
            func run(_ spec: TrialSpec) -> TrialRecord {
                TrialRecord(id: spec.id, index: spec.index, seed: spec.seed, outcome: TrialOutcome(kind: .threw, message: "too deep"),
                            expected: false, expectedOutcomes: [], metrics: TrialMetrics(), startedAt: "")
            }
        }
        let search = try Bisector(runner: Throwing()).search(request(.stack, low: 16 << 10, high: 1 << 30))
        #expect(search.verdict == .neverCompletes)
        #expect(search.probes.count == 5, "512KiB, 8MiB, 64MiB, 512MiB and 1GiB: no unbounded verdict without overflows")
        #expect(search.explanation.contains("threw: too deep"))
        #expect(search.explanation.hasSuffix("this is not a matter of stack."))
    }

    @Test func aStackThatCompletesEvenOnTheSmallestStackIsReportedAsSuch() throws {
        let runner = FakeProbeRunner(valueOf: FakeProbeRunner.stack) { _, _ in true }
        let search = try Bisector(runner: runner).search(request(.stack, low: 32 << 10, high: 1 << 30))
        #expect(search.verdict == .alwaysCompletes)
        #expect(search.passing == 32 << 10)
    }

    @Test func theSlopeThroughTwoBoundaryPointsPredictsWhatPlatformStacksTake() throws {
        let slope = try #require(StackSlope.fit(parameter: "size", BoundaryPoint(value: 772, stackBytes: 512 << 10), BoundaryPoint(value: 1571, stackBytes: 1 << 20)))
        #expect(abs(slope.bytesPerUnit - 656.2) < 1)
        #expect(slope.capacities.map(\.largestValue) == [772, 1571, 12757])
    }
}

/// The built binary's `bisect` against real children: real overflows, real NSKeyedUnarchiver.
/// A probe's time is the work's wall time, as `run`'s trial lines and the tables show it
/// (a re-trial saw 19.9 ms on a probe line whose table said 1.08 ms: the whole trial's).
@Suite struct ProbeLineTests {
    @Test func aProbeLineShowsTheWorksWallTimeAsRunsTrialLinesDo() throws {
        let record = try ReportTests.fixture()
        let trial = try #require(record.trials.first { trial in
            trial.metrics.wallSeconds != nil && Format.duration(trial.metrics.wallSeconds) != Format.duration(trial.metrics.trialSeconds)
        }, "the fixture has a trial whose work took less than the whole trial")
        let probe = TerminalReport(color: false).probeLine(trial, index: 1)
        #expect(probe.hasSuffix("  " + Format.duration(trial.metrics.wallSeconds)), "\(probe)")
        #expect(!probe.hasSuffix(Format.duration(trial.metrics.trialSeconds)), "\(probe)")
    }
}

@Suite(.serialized, .timeLimit(.minutes(10))) struct BisectEndToEndTests {
    static func bisect(_ arguments: [String]) async throws -> (StrainBinary.Result, RunRecord?, String) {
        let out = TestFolders.root.appendingPathComponent("strain-bisect-\(UUID().uuidString)").path
        let result = try await StrainBinary.run(["bisect"] + arguments + ["--out", out], timeout: 240)
        return (result, try? RunRecordFile.read(from: (out as NSString).appendingPathComponent("run.json")), out)
    }

    @Test func theLongestChainA512KiBThreadUnarchivesAgreesWithPlainTrialsAroundIt() async throws {
        let (result, run, out) = try await Self.bisect(["cyclic-graph", "-p", "operation=unarchive", "-p", "shape=chain",
                                                  "--over", "size", "--strategy", "thread(512KiB)", "--no-slope", "--repetitions", "2"])
        #expect(result.status == 0, "\(result.stdout)\n\(result.stderr)")
        let record = try #require(run)
        let search = try #require(record.bisect?.searches.first)
        #expect(search.verdict == .boundary, "\(search.explanation)")
        let longest = try #require(search.passing)
        #expect((600...950).contains(longest), "\(longest)")
        #expect(record.trials.count == search.probes.count, "every probe is a trial in run.json")
        #expect(result.stdout.contains("size ≤ \(Format.count(Double(longest)))"), "\(result.stdout)")
        let schema = try await SchemaCheck.validate((out as NSString).appendingPathComponent("run.json"))
        #expect(schema.valid, "run.json does not match the schema: \(schema.output)")

        // The independent answer: plain trials on sizes around the boundary.
        let sizes = (longest - 2)...(longest + 3)
        let (plain, plainRun, _) = try await StrainBinary.runSuiteLeavingNothing("""
        name: cross-check
        repetitions: 2
        runs:
          - scenario: cyclic-graph
            parameters: {operation: unarchive, shape: chain, size: [\(sizes.map(String.init).joined(separator: ", "))]}
            strategies: [thread(512KiB)]
            expect: [completed, stackOverflow]
        """, timeout: 120)
        #expect(plain.status == 0, "\(plain.stdout)\n\(plain.stderr)")
        let trials = try #require(plainRun).trials
        let completedEverywhere = sizes.filter { size in
            trials.filter { $0.parameters["size"] == String(size) }.allSatisfy { $0.outcome.kind == .completed }
        }
        let plainLongest = try #require(completedEverywhere.max())
        #expect(abs(plainLongest - longest) <= 1, "plain trials: longest completing chain \(plainLongest); bisect: \(longest)")
        let above = trials.filter { Int($0.parameters["size"]!)! > longest + 1 }
        #expect(above.count == 2 * sizes.filter { $0 > longest + 1 }.count && !above.isEmpty, "the sizes above the boundary ran: \(trials.map(\.id.description))")
        #expect(above.allSatisfy { $0.outcome.kind == .stackOverflow })
    }

    @Test func theSmallestStackForAChainAgreesWithPlainTrialsOnAPageEitherSide() async throws {
        let (result, run, _) = try await Self.bisect(["cyclic-graph", "-p", "operation=unarchive", "-p", "shape=chain", "-p", "size=1000", "--repetitions", "2"])
        #expect(result.status == 0, "\(result.stdout)\n\(result.stderr)")
        let search = try #require(run?.bisect?.searches.first)
        #expect(search.verdict == .boundary, "\(search.explanation)")
        let stack = try #require(search.passing)
        #expect(stack % 4096 == 0)
        let (plain, plainRun, _) = try await StrainBinary.runSuiteLeavingNothing("""
        name: cross-check-stack
        repetitions: 2
        runs:
          - scenario: cyclic-graph
            parameters: {operation: unarchive, shape: chain, size: 1000}
            strategies: [thread(\(ByteSize.exact(stack - 8192))), thread(\(ByteSize.exact(stack + 4096)))]
            expect: [completed, stackOverflow]
        """, timeout: 120)
        #expect(plain.status == 0, "\(plain.stdout)\n\(plain.stderr)")
        let trials = try #require(plainRun).trials
        let below = trials.filter { $0.strategy.description == "thread(\(ByteSize.exact(stack - 8192)))" }
        let above = trials.filter { $0.strategy.description == "thread(\(ByteSize.exact(stack + 4096)))" }
        // Matched by the strategy's text: a drift in how a stack size is written would
        // match nothing and pass, so each side must hold both repetitions.
        #expect(below.count == 2 && above.count == 2, "\(trials.map(\.id.description))")
        #expect(below.allSatisfy { $0.outcome.kind == .stackOverflow }, "two pages below the bisect's answer overflows")
        #expect(above.allSatisfy { $0.outcome.kind == .completed }, "a page above completes")
    }

    @Test func theCyclicLeagueIsReportedUnboundedWithoutSearchingTo1GiB() async throws {
        let (result, run, _) = try await Self.bisect(["cyclic-graph", "-p", "operation=unarchive", "-p", "shape=league", "-p", "size=4"])
        #expect(result.status == 0, "\(result.stdout)\n\(result.stderr)")
        let search = try #require(run?.bisect?.searches.first)
        #expect(search.verdict == .unbounded)
        #expect(search.overflows.map(\.stackBytes) == [512 << 10, 8 << 20, 64 << 20])
        let frames = search.overflows.compactMap(\.frames)
        #expect(frames == frames.sorted() && Set(frames).count == 3, "frames grow with the stack: \(frames)")
        #expect(Set(search.overflows.map { Set($0.cycle ?? []) }).count == 1, "the same cycle at every size")
        #expect(result.stdout.contains("unbounded: no stack is enough"))
    }

    @Test func badInputIsRefusedWithTheOptionAndTheFixAndNoProbeRuns() async throws {
        let cases: [([String], String)] = [
            (["no-such-scenario"], "unknown scenario 'no-such-scenario'; valid scenarios: "),
            // A near miss is suggested, as a suite's and `explain`'s are (re-trial 35m, N7: bisect had no suggestion).
            (["cyclic-grph"], "unknown scenario 'cyclic-grph' (did you mean 'cyclic-graph'?); valid scenarios: "),
            (["cyclic-graph", "--low", "8KiB"], "--low 8KiB is outside 32KiB to 1GiB"),
            (["cyclic-graph", "--high", "2GiB"], "--high 2GiB is outside 32KiB to 1GiB"),
            (["cyclic-graph", "--low", "40000"], "not a whole number of 4KiB pages"),
            (["cyclic-graph", "--over", "shape"], "'shape' is not an integer parameter"),
            (["cyclic-graph", "--over", "size", "--high", "2000000"], "use a whole number from 1 to 1000000"),
            (["cyclic-graph", "-p", "size=0"], "'0' is not a valid value for size"),
            (["cyclic-graph", "--repetitions", "0"], "use 1 to 20"),
            (["cyclic-graph", "--over", "size", "--strategy", "thread(1KiB)"], "under 32KiB"),
            (["cyclic-graph", "--timeout", "0s"], "from 100ms to 10m"),
        ]
        for (arguments, message) in cases {
            let (result, run, out) = try await Self.bisect(arguments)
            #expect(result.status == 2, "\(arguments): \(result.stderr)")
            #expect(result.stderr.contains(message), "\(arguments): \(result.stderr)")
            #expect(run == nil && !FileManager.default.fileExists(atPath: out), "\(arguments): no probe ran")
        }
    }
}
