import Foundation
import StrainRecords
import Testing

/// Allocation counting through the binary: trials (spawned and server copies) and `strain exec`.
@Suite(.serialized, .timeLimit(.minutes(10))) struct AllocationCountTests {
    static func folder() throws -> String {
        let folder = TestFolders.root.appendingPathComponent("strain-alloc-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        return folder
    }

    static let suite = """
        name: allocations
        timeout: 30s
        profiles: [linux]
        runs:
          - scenario: noop
            strategies: [main]
          - scenario: nested-json
            parameters: {operation: decode, depth: 200}
            strategies: [main, gcd-global]
        """

    /// Runs the suite and returns the trials by "scenario strategy".
    static func run(_ folder: String, _ extra: [String]) async throws -> [String: [TrialRecord]] {
        try Self.suite.write(toFile: folder + "/suite.yaml", atomically: true, encoding: .utf8)
        let out = folder + "/run-\(extra.joined(separator: "-"))"
        let result = try await StrainBinary.run(["run", folder + "/suite.yaml", "--repetitions", "2", "--out", out, "--format", "json"] + extra)
        #expect(result.status == 0, "\(result.stdout)\n\(result.stderr)")
        let record = try RunRecordFile.read(from: out + "/run.json")
        return Dictionary(grouping: record.trials) { "\($0.scenario) \($0.strategy)" }
    }

    @Test func spawnedTrialsAndServerCopiesCountTheSameAllocationsAndNameWhereTheyWereMade() async throws {
        let folder = try Self.folder()
        let copies = try await Self.run(folder, [])
        let spawned = try await Self.run(folder, ["--isolation", "spawn"])
        for runs in [copies, spawned] {
            #expect(runs.count == 3, "\(runs.keys.sorted())")
            // A noop's work allocates next to nothing: the harness's own thread report, and in a
            // spawned trial first uses (type metadata, the harness thread's pthread attributes, a
            // one-time initializer): 12–20 over 12 spawned noops on main here, 8–14 as copies; a
            // bound of 16 failed a fresh-clone .ci/run at 18.
            for trial in runs["noop main"] ?? [] { #expect((trial.metrics.allocations ?? -1) >= 0 && (trial.metrics.allocations ?? 99) < 32, "\(trial.metrics)") }
            for (name, trials) in runs where name.hasPrefix("nested-json") {
                for trial in trials {
                    // 200 levels decoded: at least one allocation a level.
                    #expect((trial.metrics.allocations ?? 0) >= 200, "\(name): \(trial.metrics)")
                    #expect((trial.metrics.allocatedBytes ?? 0) > 0)
                    #expect((trial.metrics.frees ?? -1) >= 0)
                    // Named in the parent: the scenario's own decoder, with its file.
                    let sites = trial.allocationSites ?? []
                    #expect(sites.contains { $0.frame.symbol?.contains("NestedArray.init(from:)") == true && $0.frame.file?.hasSuffix("NestedJSONScenario.swift") == true },
                            "\(name): \(sites.prefix(5).map(\.place))")
                }
            }
        }
        // The same work counts the same, however the child was started (within the gate's floor of 16).
        let a = copies["nested-json main"]?.compactMap(\.metrics.allocations) ?? []
        let b = spawned["nested-json main"]?.compactMap(\.metrics.allocations) ?? []
        #expect(!a.isEmpty && !b.isEmpty)
        if let low = (a + b).min(), let high = (a + b).max() { #expect(high - low <= 16, "copies \(a), spawned \(b)") }
    }

    @Test func execCountsTheProgramsAllocationsFromItsStartToItsExit() async throws {
        let folder = try Self.folder()
        let source = folder + "/allocate.c"
        try """
            #include <stdlib.h>
            int main(int argc, char **argv) {
                int count = atoi(argv[1]);
                for (int index = 0; index < count; index++) {
                    void *volatile block = malloc(48);
                    free(block);
                }
                return 0;
            }
            """.write(toFile: source, atomically: true, encoding: .utf8)
        let program = folder + "/allocate"
        let built = try await Tool.run([TestPrograms.compiler, "-O0", "-o", program, source])
        #expect(built.status == 0, "\(built.output)")
        func counted(_ count: Int) async throws -> TrialMetrics {
            let out = folder + "/exec-\(count)"
            let result = try await StrainBinary.run(["exec", "--out", out, "--", program, String(count)])
            #expect(result.status == 0, "\(result.stdout)\n\(result.stderr)")
            return try #require(RunRecordFile.read(from: out + "/run.json").trials.first).metrics
        }
        let small = try await counted(1000)
        let large = try await counted(3000)
        // Exactly the program's own: 2,000 more malloc(48) and free pairs, whatever libc's start-up allocates.
        #expect((large.allocations ?? 0) - (small.allocations ?? 0) == 2000, "\(small) \(large)")
        #expect((large.frees ?? 0) - (small.frees ?? 0) == 2000)
        #expect((large.allocatedBytes ?? 0) - (small.allocatedBytes ?? 0) == 2000 * 48)
    }
}
