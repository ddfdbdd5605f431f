import Foundation
import StrainKit
@testable import StrainRunner
@testable import StrainWire
import Testing

/// A probe runner whose probes past a value fail the way the test says: an overflow
/// that moves with the stack, or an error the code throws at a fixed depth.
final class LimitedProbeRunner: BisectProbeRunner {
    /// The largest value that completes, by the probe's stack.
    let largest: (_ stackBytes: Int) -> Int
    let failure: TrialOutcome

    init(failure: TrialOutcome, largest: @escaping (Int) -> Int) {
        self.failure = failure
        self.largest = largest
    }

    func run(_ spec: TrialSpec) -> TrialRecord {
        let value = Int(spec.parameters["depth"]!)!
        let outcome = value <= largest(spec.strategy.chosenStackBytes!) ? TrialOutcome(kind: .completed) : failure
        return TrialRecord(id: spec.id, index: spec.index, seed: spec.seed, outcome: outcome, expected: true,
                           expectedOutcomes: spec.expected.map(\.description), metrics: TrialMetrics(), startedAt: "")
    }
}

/// `bisect --over`'s bytes-per-level slope comes from two overflow boundaries only.
@Suite struct BisectSlopeTests {
    func request(stack: Int) -> BisectRequest {
        BisectRequest(scenario: "nested-json", parameters: ["operation": "decode", "depth": "1"], question: .parameter("depth"),
                      strategy: .thread(stackBytes: stack), profile: .linux, low: 1, high: 100_000,
                      repetitions: 1, timeoutSeconds: 10, stallSeconds: 2, exhaustive: false, seed: 1)
    }

    func searches(_ runner: LimitedProbeRunner) throws -> ([BisectSearch], [BisectRequest]) {
        let requests = [request(stack: 512 << 10), request(stack: 1 << 20)]
        return (try requests.map { try Bisector(runner: runner).search($0) }, requests)
    }

    /// JSONDecoder throws past depth 512 whatever the stack: the line through that
    /// boundary reported 2,289 B a level and predicted ~3,717 levels on 8 MiB.
    @Test func aBoundaryWhereTheCodeThrowsGivesNoSlopeAndSaysItIsALimitOfTheCode() throws {
        let runner = LimitedProbeRunner(failure: TrialOutcome(kind: .threw, message: "too deep")) { _ in 512 }
        let (searches, requests) = try searches(runner)
        #expect(searches.map(\.passing) == [512, 512])
        #expect(BisectController.slope(parameter: "depth", searches: searches, requests: requests) == nil)
        let section = BisectSection(searches: searches, slope: nil, wallSeconds: 1)
        let reason = try #require(section.noSlopeReason)
        #expect(reason.contains("did not move with the stack"), "\(reason)")
        #expect(reason.contains("threw: too deep"), "\(reason)")
        #expect(reason.contains("a limit of the code, not of the stack"))
    }

    @Test func twoOverflowBoundariesGiveTheSlope() throws {
        // 772 levels on 512 KiB, 1,571 on 1 MiB: about 656 bytes a level.
        let runner = LimitedProbeRunner(failure: TrialOutcome(kind: .stackOverflow, signal: SIGSEGV)) { $0 == 512 << 10 ? 772 : 1571 }
        let (searches, requests) = try searches(runner)
        let slope = try #require(BisectController.slope(parameter: "depth", searches: searches, requests: requests))
        #expect(abs(slope.bytesPerUnit - 656.2) < 1)
        #expect(BisectSection(searches: searches, slope: slope, wallSeconds: 1).noSlopeReason == nil)
    }

    /// One overflow and one throw: a line through a point that is not an overflow is no slope either.
    @Test func anOverflowBesideAThrowGivesNoSlope() throws {
        let overflow = LimitedProbeRunner(failure: TrialOutcome(kind: .stackOverflow, signal: SIGSEGV)) { _ in 300 }
        let thrown = LimitedProbeRunner(failure: TrialOutcome(kind: .threw, message: "too deep")) { _ in 512 }
        let requests = [request(stack: 512 << 10), request(stack: 1 << 20)]
        let searches = [try Bisector(runner: overflow).search(requests[0]), try Bisector(runner: thrown).search(requests[1])]
        #expect(BisectController.slope(parameter: "depth", searches: searches, requests: requests) == nil)
        let reason = try #require(BisectSection(searches: searches, slope: nil, wallSeconds: 1).noSlopeReason)
        #expect(reason.contains("is not where the stack ran out"), "\(reason)")
    }
}

/// A bisect's answer holds for a program of its own: probes are spawned by default
/// (a copy of the trial server completed one level more of nested-json than a spawned
/// trial or a standalone program), and every answer names its build and its probes.
@Suite(.serialized, .timeLimit(.minutes(10))) struct BisectIsolationEndToEndTests {
    @Test func theLargestDepthABisectFindsCompletesInSpawnedTrialsAndOneMoreOverflows() async throws {
        let (result, run, _) = try await BisectEndToEndTests.bisect(["nested-json", "-p", "operation=serialize", "--over", "depth",
                                                               "--strategy", "thread(512KiB)", "--no-slope", "--repetitions", "2"])
        #expect(result.status == 0, "\(result.stdout)\n\(result.stderr)")
        let record = try #require(run)
        #expect(record.execution?.isolation == .spawn)
        #expect(record.execution?.serverTrials == 0, "every probe spawned")
        let search = try #require(record.bisect?.searches.first)
        #expect(search.verdict == .boundary, "\(search.explanation)")
        let deepest = try #require(search.passing)
        #expect(search.explanation.contains("Measured on a \(record.environment.buildConfiguration ?? "?") build, in spawned trials"), "\(search.explanation)")
        #expect(result.stdout.contains("in spawned trials"), "the terminal says it too")

        // The independent answer: plain spawned trials at the boundary and one past it, each twice.
        let folder = try temporaryFolder()
        let suite = (folder as NSString).appendingPathComponent("cross.yaml")
        try """
        name: cross-check-depth
        repetitions: 2
        runs:
          - scenario: nested-json
            parameters: {operation: serialize, depth: [\(deepest), \(deepest + 1)]}
            strategies: [thread(512KiB)]
            expect: [completed, stackOverflow]
        """.write(toFile: suite, atomically: true, encoding: .utf8)
        let out = (folder as NSString).appendingPathComponent("out")
        let plain = try await StrainBinary.run(["run", suite, "--isolation", "spawn", "--out", out, "--format", "json"], timeout: 120)
        #expect(plain.status == 0, "\(plain.stdout)\n\(plain.stderr)")
        let trials = try RunRecordFile.read(from: (out as NSString).appendingPathComponent("run.json")).trials
        let at = trials.filter { $0.parameters["depth"] == String(deepest) }
        let past = trials.filter { $0.parameters["depth"] == String(deepest + 1) }
        #expect(at.count == 2 && past.count == 2)
        #expect(at.allSatisfy { $0.outcome.kind == .completed }, "\(at.map(\.outcome.description))")
        #expect(past.allSatisfy { $0.outcome.kind == .stackOverflow }, "\(past.map(\.outcome.description))")
    }
}

/// A spawned probe's answer holds for a program linked as strain is: the release
/// bundle's strain (Foundation linked in) fitted 360 levels of nested-json serialize
/// on 512 KiB where `swift build -c release`'s and a standalone program fitted 358.
@Suite struct BisectLinkingTests {
    @Test func aStaticallyLinkedStrainSaysItsAnswerHoldsForAProgramLinkedSo() {
        let statically = BisectController.measuredOn(isolation: .spawn, build: "release", foundationLinkedStatically: true)
        #expect(statically.contains("when it links Swift's runtime and Foundation statically, as this strain does"), "\(statically)")
        #expect(statically.contains("bisect with a strain built as your program is"), "\(statically)")
        let dynamically = BisectController.measuredOn(isolation: .spawn, build: "release", foundationLinkedStatically: false)
        #expect(dynamically == "Measured on a release build, in spawned trials, as a program of its own starts.", "\(dynamically)")
    }

    @Test func thisTestBinaryLoadsFoundationAsASharedLibrary() {
        // The same check the bundle's strain answers the other way (BundleTests).
        #expect(!BisectController.foundationLinkedStatically)
    }
}
