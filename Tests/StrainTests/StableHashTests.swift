import Foundation
import StrainRecords
import StrainRunner
import StrainScenarios
import StrainSuite
import Testing

/// Pinned hashes. `StableHash` (FNV-1a) decides which shard runs a trial key
/// (`--shard K/N`: hash mod N) and names a plan (`plan.hash` in run.json and in the
/// journal's header). If any value here changes, then on the next release:
/// - every `--shard K/N` job runs other trials than it did, so shards run by two
///   Strain versions no longer join (`strain merge`), and CI jobs split by shard move
///   their trials between machines;
/// - `strain run --resume DIR` refuses every journal written before the change
///   ("its journal belongs to another plan"), so a stopped run cannot be continued.
/// Change them only on purpose, saying so in the release notes; never to make a test pass.
/// The values were computed apart from Strain (FNV-1a 64 in a few lines of Python,
/// over the canonical texts below) and agree with it.
@Suite(.serialized) struct StableHashTests {
    @Test func fnv1aGivesTheReferenceValues() {
        // FNV-1a 64-bit test vectors (Fowler, Noll, Vo).
        #expect(StableHash.fnv1a("") == 0xcbf2_9ce4_8422_2325)
        #expect(StableHash.fnv1a("a") == 0xaf63_dc4c_8601_ec8c)
        #expect(StableHash.fnv1a("foobar") == 0x8594_4171_f739_67e8)
    }

    /// The keys of `suite` below, their canonical text, hash and shard of 3.
    static let pinnedKeys: [(key: TrialKey, canonical: String, hash: UInt64, shardOf3: Int)] = {
        func key(_ scenario: String, _ parameters: [(String, String)], _ strategy: String, _ profile: Profile) -> TrialKey {
            TrialKey(scenario: scenario, parameters: parameters.map { TrialKey.Parameter(name: $0.0, value: $0.1) },
                     strategy: try! StrategySpec(parsing: strategy), profile: profile)
        }
        return [
            (key("noop", [], "main", .linux), "noop[] main linux", 0x53fd_79a8_9061_5ac8, 2),
            (key("noop", [], "gcd-global", .linux), "noop[] gcd-global linux", 0xb84f_c6e6_d9ac_7f7b, 2),
            (key("noop", [], "thread(512KiB)", .linux), "noop[] thread(512KiB) linux", 0x3237_102f_019e_c958, 2),
            (key("noop", [], "main", .ios), "noop[] main ios", 0xbd93_9d1f_7ace_61cb, 1),
            (key("noop", [], "gcd-global", .ios), "noop[] gcd-global ios", 0xf955_a992_a08c_ad38, 3),
            (key("noop", [], "thread(512KiB)", .ios), "noop[] thread(512KiB) ios", 0x9f7e_d416_1a9a_9e7b, 3),
            (key("stack-depth", [("frame", "64B"), ("limit", "100")], "thread(8MiB)", .linux), "stack-depth[frame=64B, limit=100] thread(8MiB) linux", 0x6098_4b54_662a_f525, 3),
            (key("stack-depth", [("frame", "256B"), ("limit", "100")], "thread(8MiB)", .linux), "stack-depth[frame=256B, limit=100] thread(8MiB) linux", 0x4ad7_e6da_6ceb_fc8e, 2),
            (key("stack-depth", [("frame", "64B"), ("limit", "100")], "thread(8MiB)", .ios), "stack-depth[frame=64B, limit=100] thread(8MiB) ios", 0x7ee0_9185_e96f_dc8e, 3),
            (key("stack-depth", [("frame", "256B"), ("limit", "100")], "thread(8MiB)", .ios), "stack-depth[frame=256B, limit=100] thread(8MiB) ios", 0x9678_c6d2_0ced_9645, 1),
        ]
    }()

    static let suite = """
        name: pinned
        timeout: 30s
        profiles: [linux, ios]
        runs:
          - scenario: noop
            strategies: [main, gcd-global, thread(512KiB)]
          - scenario: stack-depth
            parameters: {frame: [64B, 256B], limit: 100}
            strategies: [thread(8MiB)]
        """

    /// The plan hash of `suite`, whole: the same for any shard of it.
    static let pinnedPlanHash = "9c7858756b3be842"

    @Test func trialKeyHashesAndTheirShardsArePinned() {
        for pinned in Self.pinnedKeys {
            #expect(pinned.key.canonicalText == pinned.canonical)
            #expect(pinned.key.stableHash == pinned.hash, "\(pinned.canonical): \(String(pinned.key.stableHash, radix: 16))")
            let shards = (1...3).filter { Shard(index: $0, count: 3).contains(pinned.key) }
            #expect(shards == [pinned.shardOf3], "\(pinned.canonical)")
        }
        // Parameters in another order: the same key, the same hash (it hashes them in name order).
        let reordered = TrialKey(scenario: "stack-depth", parameters: [.init(name: "limit", value: "100"), .init(name: "frame", value: "64B")],
                                 strategy: try! StrategySpec(parsing: "thread(8MiB)"), profile: .linux)
        #expect(reordered.stableHash == 0x6098_4b54_662a_f525)
    }

    @Test func thePlanHashOfAFixedSuiteIsPinnedWhateverTheOrderOfItsRuns() throws {
        let parser = SuiteParser(catalog: .builtIn)
        let plan = Plan(suite: try parser.parse(Self.suite, path: "pinned.yaml"))
        #expect(plan.trials.count == 10)
        #expect(plan.identity == Self.pinnedPlanHash)
        #expect(Set(plan.trials.map(\.key.canonicalText)) == Set(Self.pinnedKeys.map(\.canonical)))
        // The same trials listed the other way round: the same plan.
        let reordered = """
            name: pinned
            timeout: 30s
            profiles: [ios, linux]
            runs:
              - scenario: stack-depth
                parameters: {limit: 100, frame: [256B, 64B]}
                strategies: [thread(8MiB)]
              - scenario: noop
                strategies: [thread(512KiB), gcd-global, main]
            """
        #expect(Plan(suite: try parser.parse(reordered, path: "reordered.yaml")).identity == Self.pinnedPlanHash)
    }

    @Test func theBinaryShardsAndNamesThePlanWithThePinnedHashes() async throws {
        let folder = try temporaryFolder()
        let suite = folder + "/pinned.yaml"
        try TestFiles.write(Self.suite, to: suite)
        for index in 1...3 {
            let listed = try await StrainBinary.run(["run", suite, "--list", "--shard", "\(index)/3"], timeout: 30)
            #expect(listed.status == 0, "\(listed.stderr)")
            let wanted = Self.pinnedKeys.filter { $0.shardOf3 == index }.map { "\($0.key.description) #1" }
            #expect(Set(listed.stdout.split(separator: "\n").dropLast().map(String.init)) == Set(wanted), "shard \(index): \(listed.stdout)")
            #expect(listed.stdout.hasSuffix("\(wanted.count) trials (shard \(index)/3 of a plan of 10)\n"), "\(listed.stdout)")
        }
        // Shard 1 is two quick trials: its run.json and journal name the whole plan.
        let out = folder + "/shard1"
        let run = try await StrainBinary.run(["run", suite, "--shard", "1/3", "--out", out, "--format", "json"], timeout: 60)
        #expect(run.status == 0, "\(run.stdout)\(run.stderr)")
        let record = try RunRecordFile.read(from: out + "/run.json")
        #expect(record.plan?.hash == Self.pinnedPlanHash)
        #expect(record.plan?.trialCount == 10 && record.plan?.shard?.trialCount == 2, "\(String(describing: record.plan))")
        let header = try #require(TestFiles.read(out + "/trials.jsonl").split(separator: "\n").first)
        #expect(header.contains("\"plan\":{\"hash\":\"\(Self.pinnedPlanHash)\""), "\(header)")
    }
}
