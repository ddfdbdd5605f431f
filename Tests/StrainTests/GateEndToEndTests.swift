import Foundation
import StrainRecords
import Synchronization
import Testing

/// The gate through the built binary: real runs, real children, real builds of a
/// user package with a planted regression.
@Suite(.serialized, .timeLimit(.minutes(10))) struct GateEndToEndTests {
    static func folder() throws -> String {
        let folder = TestFolders.root.appendingPathComponent("strain-gate-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        return folder
    }

    static func write(_ text: String, _ path: String) throws {
        try text.write(toFile: path, atomically: true, encoding: .utf8)
    }

    static let twoRows = """
        name: gate-e2e
        timeout: 30s
        profiles: [linux]
        runs:
          - scenario: noop
            strategies: [main, thread(512KiB)]
          - scenario: stack-depth
            parameters: {frame: 256B, limit: 500}
            strategies: [thread(8MiB)]
        """

    /// Timing thresholds no run of one binary can cross: a median 3× worse and 50 ms
    /// (256 MiB of RSS) apart. With them an A/A gate cannot fail on load, and only a
    /// planted change far beyond them can (the gate's statistical power on small
    /// changes is a benchmark's question, measured by Scenarios/bench-gate.yaml).
    static let wideTimingThresholds = """
        gate:
          wall: {delta: 200%, floor: 50ms}
          cpu: {delta: 200%, floor: 50ms}
          rss: {delta: 200%, floor: 256MiB}
        """

    /// The rows of `gate.json`, by "scenario strategy".
    static func rows(_ gateJSON: String) throws -> [String: [String: Any]] {
        let report = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: gateJSON))) as? [String: Any]
        var rows: [String: [String: Any]] = [:]
        for row in report?["rows"] as? [[String: Any]] ?? [] {
            let key = row["key"] as? [String: Any]
            rows["\(key?["scenario"] ?? "?") \(key?["strategy"] ?? "?")"] = row
        }
        return rows
    }

    /// The verdict of `metric` in `row`, nil when the row has no such metric.
    static func metricVerdict(_ row: [String: Any]?, _ metric: String) -> String? {
        (row?["metrics"] as? [[String: Any]])?.first { $0["metric"] as? String == metric }?["verdict"] as? String
    }

    @Test func anInterleavedAAGateOfOneBinaryPassesJudgesItsDeterministicRowsAndWritesItsVerdictFiles() async throws {
        let folder = try Self.folder()
        let suite = folder + "/suite.yaml"
        try Self.write(Self.twoRows.replacingOccurrences(of: "profiles: [linux]\n", with: "profiles: [linux]\n" + Self.wideTimingThresholds + "\n"), suite)
        let result = try await StrainBinary.run(["gate", "--baseline-binary", StrainBinary.path, suite, "--repetitions", "6", "--out", folder + "/gate"], timeout: 300)
        #expect(result.status == 0, "\(result.stdout)\n\(result.stderr)")
        let gate = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: folder + "/gate/gate.json"))) as? [String: Any]
        #expect(gate?["exitCode"] as? Int == 0)
        #expect(gate?["mode"] as? String == "interleaved")
        // Judged, not waved through: every row's stack high-water (deterministic: the
        // same binary, the same stack) was compared and found unchanged; a gate that left
        // everything inconclusive would pass the exit code alone.
        let rows = try Self.rows(folder + "/gate/gate.json")
        #expect(rows.count == 3, "\(rows.keys.sorted())")
        for (name, row) in rows {
            #expect(["unchanged", "inconclusive"].contains(row["verdict"] as? String ?? ""), "\(name): \(row["verdict"] ?? "none")")
            #expect(Self.metricVerdict(row, "stack-high-water") == "unchanged", "\(name): \(row["metrics"] ?? "none")")
        }
        let rounds = try FileManager.default.contentsOfDirectory(atPath: folder + "/gate/rounds").filter { !$0.hasSuffix(".log") }
        #expect(rounds.count == 12, "6 rounds of A and B, each a run of its own: \(rounds.sorted())")
        let junit = folder + "/gate/junit.xml"
        let check = try await XMLSchemaCheck.validate(junit, schema: ReportTests.fixtures.appendingPathComponent("junit-jenkins-xunit.xsd").path)
        #expect(check.valid, "\(check.output)")
    }

    /// A counted gate starts Valgrind once per build: each build runs all its
    /// repetitions in one `run`; a scenario whose work depends on timing (`queue-flood`:
    /// not countable) is timed in interleaved rounds, as a plain gate times it, and both
    /// rows are judged.
    @Test func aCountedGateRunsEachBuildOnceForItsCountsAndTimesTheUncountableRowInInterleavedRounds() async throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let suite = folder + "/counted.yaml"
        try Self.write("""
            name: counted-and-timed
            timeout: 60s
            profiles: [linux]
            \(Self.wideTimingThresholds)
            runs:
              - scenario: noop
                strategies: [main]
              - scenario: queue-flood
                parameters: {items: 200}
                strategies: [gcd-global]
            """, suite)
        let result = try await StrainBinary.run(["gate", "--baseline-binary", StrainBinary.path, suite, "--repetitions", "3", "--measure", "instructions",
                                                 "--out", folder + "/gate"], timeout: 600, environment: ["STRAIN_INSTRUCTIONS_SOURCE": "callgrind"])
        #expect(result.status == 0, "\(result.stdout)\n\(result.stderr)")
        #expect(result.stdout.contains("3 repetitions a build, each build's in one counted run"), "said before the counted runs: \(result.stdout)")
        #expect(result.stdout.contains("3 repetitions counted in one run a build") && result.stdout.contains("not countable, so timed in interleaved rounds: queue-flood"),
                "\(result.stdout)")
        let rounds = try FileManager.default.contentsOfDirectory(atPath: folder + "/gate/rounds").filter { !$0.hasSuffix(".log") }
        #expect(Set(rounds) == ["A", "B", "timed-A1", "timed-B1", "timed-A2", "timed-B2", "timed-A3", "timed-B3"], "one counted run a build: \(rounds.sorted())")
        for side in ["A", "B"] {
            let run = try RunRecordFile.read(from: folder + "/gate/rounds/\(side)/run.json")
            #expect(run.execution?.serverRestarts == 0 && run.trials.filter { $0.scenario == "noop" }.count == 3, "\(side): \(run.execution.map { "\($0)" } ?? "none")")
        }
        let rows = try Self.rows(folder + "/gate/gate.json")
        #expect(Self.metricVerdict(rows["noop main"], "instructions") == "unchanged", "\(rows["noop main"] ?? [:])")
        let baseline = try RunRecordFile.read(from: folder + "/gate/baseline-run.json")
        let timed = baseline.trials.filter { $0.scenario == "queue-flood" }
        #expect(timed.count == 3 && timed.allSatisfy { $0.metrics.wallSeconds != nil }, "the timed row's trials come from the interleaved rounds, with their times")
        #expect(rows["queue-flood gcd-global"] != nil, "\(rows.keys.sorted())")
        // Every output's header says what ran: each build once, counted, the uncountable scenario in rounds.
        for file in ["gate.html", "gate.md"] {
            let text = try TestFiles.readable(String(contentsOfFile: folder + "/gate/" + file, encoding: .utf8))
            #expect(text.contains("Counted A/B: both builds ran in one job, each its 3 repetitions in one run, "), "\(file): \(text.prefix(900))")
            #expect(!text.contains("repetitions alternating") && text.contains("Not countable, so timed in alternating rounds: queue-flood."), "\(file): \(text.prefix(900))")
        }
        #expect(result.stdout.contains("Gate (counted A/B, each build's repetitions in one run) on counted-and-timed: "), "\(result.stdout)")
    }

    @Test func aMissingBaselineIsAnInputError() async throws {
        let folder = try Self.folder()
        let result = try await StrainBinary.run(["gate", folder + "/nothing/run.json", "--baseline", "main", "--baselines", folder + "/baselines"])
        #expect(result.status == 2)
        #expect(result.stderr.contains("no baseline named 'main'"), "\(result.stderr)")
    }

    @Test func aReorderedSuiteJoinsItsBaselineAndARowItLostIsIncomplete() async throws {
        let folder = try Self.folder()
        let suite = folder + "/suite.yaml"
        try Self.write(Self.twoRows, suite)
        let first = try await StrainBinary.run(["run", suite, "--out", folder + "/a", "--format", "json"])
        #expect(first.status == 0, "\(first.stderr)")
        let saved = try await StrainBinary.run(["baseline", "save", folder + "/a", "--name", "base", "--baselines", folder + "/baselines"])
        #expect(saved.status == 0, "\(saved.stderr)")
        // The same trials, listed the other way round: runs, strategies and parameters.
        try Self.write("""
            name: gate-e2e
            timeout: 30s
            profiles: [linux]
            runs:
              - scenario: stack-depth
                parameters: {limit: 500, frame: 256B}
                strategies: [thread(8MiB)]
              - scenario: noop
                strategies: [thread(512KiB), main]
            """, suite)
        let second = try await StrainBinary.run(["run", suite, "--out", folder + "/b", "--format", "json"])
        #expect(second.status == 0)
        let gate = try await StrainBinary.run(["gate", folder + "/b", "--baseline", "base", "--baselines", folder + "/baselines"])
        #expect(gate.status == 0, "\(gate.stdout)\n\(gate.stderr)")
        let report = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: folder + "/b/gate/gate.json"))) as? [String: Any]
        let rows = report?["rows"] as? [[String: Any]] ?? []
        #expect(rows.count == 3)
        #expect(!rows.contains { ["missing", "new"].contains($0["verdict"] as? String) }, "every row joined: \(rows.map { $0["verdict"] ?? "" })")

        let filtered = try await StrainBinary.run(["run", suite, "--out", folder + "/c", "--format", "json", "--skip", "scenario=noop"])
        #expect(filtered.status == 0)
        let incomplete = try await StrainBinary.run(["gate", folder + "/c", "--baseline", "base", "--baselines", folder + "/baselines"])
        #expect(incomplete.status == 3, "\(incomplete.stdout)")
        #expect(incomplete.stdout.contains("MISSING noop"))
    }

    @Test func shardsOneTwoAndThreeOfThreeMergeIntoTheUnshardedPlan() async throws {
        let folder = try Self.folder()
        let suite = folder + "/suite.yaml"
        try Self.write("""
            name: shards
            timeout: 30s
            profiles: [linux, ios]
            runs:
              - scenario: noop
                strategies: [main, gcd-global, thread(512KiB)]
              - scenario: stack-depth
                parameters: {frame: [64B, 256B], limit: 100}
                strategies: [thread(8MiB), main]
            """, suite)
        let whole = try await StrainBinary.run(["run", suite, "--list"])
        let planned = Set(whole.stdout.split(separator: "\n").dropLast().map(String.init))
        #expect(planned.count == 14)
        var shardIDs: [Set<String>] = []
        for index in 1...3 {
            let run = try await StrainBinary.run(["run", suite, "--shard", "\(index)/3", "--out", folder + "/shard\(index)", "--format", "json"])
            #expect(run.status == 0, "\(run.stderr)")
            let record = try RunRecordFile.read(from: folder + "/shard\(index)/run.json")
            shardIDs.append(Set(record.trials.map(\.id.description)))
        }
        #expect(shardIDs[0].isDisjoint(with: shardIDs[1]) && shardIDs[1].isDisjoint(with: shardIDs[2]) && shardIDs[0].isDisjoint(with: shardIDs[2]))
        let missing = try await StrainBinary.run(["merge", folder + "/shard1", folder + "/shard3", "--out", folder + "/partial"])
        #expect(missing.status == 3)
        #expect(missing.stderr.contains("2/3"))
        let merged = try await StrainBinary.run(["merge", folder + "/shard1", folder + "/shard2", folder + "/shard3", "--out", folder + "/merged"])
        #expect(merged.status == 0, "\(merged.stderr)")
        let record = try RunRecordFile.read(from: folder + "/merged/run.json")
        #expect(Set(record.trials.map(\.id.description)) == planned)
        #expect(record.shards?.count == 3)
    }

    /// The exit-code contract's row 1 holds for `merge` as for `run`: a merged run with a trial
    /// the suite does not expect exits 1, and says how many; `baseline save` saves it with
    /// exit 0 and says so. Before, `merge` exited 0 with "8 trials, 7 unexpected" in its
    /// summary, and `baseline save` said nothing (re-trial 35m, N2).
    @Test func aMergeWithAnUnexpectedOutcomeExitsOneAndABaselineOfItSaysSo() async throws {
        let folder = try Self.folder()
        let suite = folder + "/suite.yaml"
        try Self.write("""
            name: shards-unexpected
            timeout: 30s
            profiles: [linux]
            runs:
              - scenario: noop
                strategies: [main, gcd-global]
              - scenario: crash
                parameters: {kind: null-dereference}
                strategies: [gcd-global]
                expect: completed
            """, suite)
        for index in 1...2 {
            let run = try await StrainBinary.run(["run", suite, "--shard", "\(index)/2", "--out", folder + "/shard\(index)", "--format", "json"])
            #expect([0, 1].contains(run.status), "\(run.stderr)")
        }
        let merged = try await StrainBinary.run(["merge", folder + "/shard1", folder + "/shard2", "--out", folder + "/merged", "--format", "md"])
        #expect(merged.status == 1, "\(merged.stdout)\n\(merged.stderr)")
        #expect(merged.stdout.contains("3 trials of shards-unexpected (1 unexpected)"), "\(merged.stdout)")
        // At 80 columns its line is fitted between words (it was one line of 155 columns: re-trial 35m, N5).
        let narrow = try await StrainBinary.run(["merge", folder + "/shard1", folder + "/shard2", "--out", folder + "/merged80", "--format", "md"],
                                                environment: ["COLUMNS": "80"])
        // A path longer than the window is one word: it gets a line of its own, unbroken.
        let wide = narrow.stdout.split(separator: "\n").filter { $0.count > 80 && $0.trimmingCharacters(in: .whitespaces).contains(" ") }
        #expect(narrow.status == 1 && wide.isEmpty, "\(narrow.stdout)")
        let saved = try await StrainBinary.run(["baseline", "save", folder + "/merged", "--name", "unexpected", "--baselines", folder + "/baselines"])
        #expect(saved.status == 0, "\(saved.stderr)")
        #expect(saved.stdout.contains("1 trial of it ended in an outcome the suite does not expect"), "\(saved.stdout)")
    }
}

/// A user package over Strain in four builds: the base, one whose `spin` does ten
/// times the work, one whose `frames` keeps a 25 % larger frame, one whose `nodes`
/// makes one extra allocation per node.
@Suite(.serialized, .timeLimit(.minutes(60))) struct PlantedRegressionTests {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The variants this process built in the default folder, each kept once in
    /// `.build/gate-fixture-variants` (cleared at the first build of a process, so a later
    /// change to Strain is built again): the base alone was built 7 times a run, each a
    /// relink of the fixture. A fixture built in a folder of its own (`package`) is not kept.
    private static let variants = AsyncLock()
    private static let variantFolder = repository.appendingPathComponent(".build/gate-fixture-variants").path
    private static let variantsCleared = Mutex(false)

    /// Builds the fixture with the planted constants (once a process) and returns a copy of its binary.
    /// `package`: the folder the fixture is built in (by default one under `.build`).
    static func build(workPercent: Int, frameBytes: Int, allocationsPerNode: Int = 0, afterAwaitPercent: Int = 100, package: String? = nil,
                      into folder: String, name: String) async throws -> String {
        let binary = folder + "/" + name
        try FileManager.default.createDirectory(atPath: (binary as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        if package != nil {
            try await buildVariant(workPercent: workPercent, frameBytes: frameBytes, allocationsPerNode: allocationsPerNode,
                                   afterAwaitPercent: afterAwaitPercent, package: package, to: binary)
            return binary
        }
        let kept = variantFolder + "/w\(workPercent)-f\(frameBytes)-a\(allocationsPerNode)-aw\(afterAwaitPercent)"
        try await variants.withLock {
            let fileManager = FileManager.default
            if variantsCleared.withLock({ cleared in defer { cleared = true }; return !cleared }) {
                try? fileManager.removeItem(atPath: variantFolder)
            }
            if !fileManager.fileExists(atPath: kept) {
                try fileManager.createDirectory(atPath: variantFolder, withIntermediateDirectories: true)
                try await buildVariant(workPercent: workPercent, frameBytes: frameBytes, allocationsPerNode: allocationsPerNode,
                                       afterAwaitPercent: afterAwaitPercent, package: nil, to: kept)
            }
        }
        try FileManager.default.copyItem(atPath: kept, toPath: binary)
        return binary
    }

    private static func buildVariant(workPercent: Int, frameBytes: Int, allocationsPerNode: Int, afterAwaitPercent: Int, package: String?,
                                     to binary: String) async throws {
        let source = repository.appendingPathComponent("Tests/GateFixture").path
        let package = package ?? repository.appendingPathComponent(".build/gate-fixture-package").path
        let fileManager = FileManager.default
        if !fileManager.fileExists(atPath: package) {
            try fileManager.createDirectory(atPath: package + "/Sources", withIntermediateDirectories: true)
            try fileManager.copyItem(atPath: source + "/Sources/gate-fixture", toPath: package + "/Sources/gate-fixture")
        }
        let template = try String(contentsOfFile: source + "/Package.swift.template", encoding: .utf8)
        let manifest = template.replacingOccurrences(of: "@STRAIN_PATH@", with: repository.path)
        if (try? String(contentsOfFile: package + "/Package.swift", encoding: .utf8)) != manifest {
            try manifest.write(toFile: package + "/Package.swift", atomically: true, encoding: .utf8)
        }
        try fileManager.removeItem(atPath: package + "/Sources/gate-fixture/main.swift")
        try fileManager.copyItem(atPath: source + "/Sources/gate-fixture/main.swift", toPath: package + "/Sources/gate-fixture/main.swift")
        try """
            let plantedWorkPercent = \(workPercent)
            let plantedFrameBytes = \(frameBytes)
            let plantedAllocationsPerNode = \(allocationsPerNode)
            let plantedAfterAwaitPercent = \(afterAwaitPercent)
            """.write(toFile: package + "/Sources/gate-fixture/Planted.swift", atomically: true, encoding: .utf8)
        try await FixturePackage.build(package) { built in
            try FileManager.default.copyItem(atPath: built + "/gate-fixture", toPath: binary)
        }
    }

    static let suite = repository.appendingPathComponent("Tests/GateFixture/gate-fixture.yaml").path

    static func gate(_ old: String, _ new: String, repetitions: Int, folder: String, suite: String = suite) async throws -> (StrainBinary.Result, [String: String]) {
        let result = try await StrainBinary.run(["gate", "--baseline-binary", old, "--candidate-binary", new, suite,
                                           "--repetitions", "\(repetitions)", "--out", folder], timeout: 300)
        let data = try Data(contentsOf: URL(fileURLWithPath: folder + "/gate.json"))
        let rows = (try JSONSerialization.jsonObject(with: data) as? [String: Any])?["rows"] as? [[String: Any]] ?? []
        var verdicts: [String: String] = [:]
        for row in rows {
            let key = row["key"] as? [String: Any]
            verdicts["\(key?["scenario"] ?? "?") \(key?["strategy"] ?? "?")"] = row["verdict"] as? String
        }
        return (result, verdicts)
    }

    /// The fixture's suite with thresholds no load can cross (`wideTimingThresholds`).
    static func wideSuite(in folder: String) throws -> String {
        let text = try String(contentsOfFile: suite, encoding: .utf8)
        let wide = text.replacingOccurrences(of: "profiles: [linux]\n", with: "profiles: [linux]\n" + GateEndToEndTests.wideTimingThresholds + "\n")
        #expect(wide != text)
        let path = folder + "/gate-fixture.yaml"
        try wide.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    @Test func aPlantedTenfoldSlowdownFailsTheInterleavedGateOnExactlyThatRow() async throws {
        // Ten times the work against thresholds of 3× and 50 ms: CPU time, which load
        // barely moves, cannot miss it, and no other row can cross them. A 30 % slowdown
        // was caught in most gates, not all (the Benchmarks article, StrainCLI.docc): a benchmark's figure.
        let folder = try GateEndToEndTests.folder()
        let base = try await Self.build(workPercent: 100, frameBytes: 512, into: folder, name: "base")
        let slower = try await Self.build(workPercent: 1000, frameBytes: 512, into: folder, name: "slower")
        let (result, verdicts) = try await Self.gate(base, slower, repetitions: 8, folder: folder + "/gate", suite: Self.wideSuite(in: folder))
        #expect(result.status == 1, "\(result.stdout)\n\(result.stderr)")
        #expect(verdicts["spin main"] == "regressed", "\(verdicts)\n\(result.stdout)")
        let rows = try GateEndToEndTests.rows(folder + "/gate/gate.json")
        #expect(GateEndToEndTests.metricVerdict(rows["spin main"], "cpu") == "regressed", "\(rows["spin main"]?["metrics"] ?? "none")")
        #expect(verdicts.count == 5, "\(verdicts)")
        #expect(verdicts.filter { $0.key != "spin main" }.values.allSatisfy { $0 == "unchanged" || $0 == "inconclusive" }, "\(verdicts)")
    }

    @Test func aPlantedTwentyFivePercentLargerFrameFailsOnExactlyThatRowWithOneRepetition() async throws {
        let folder = try GateEndToEndTests.folder()
        let base = try await Self.build(workPercent: 100, frameBytes: 512, into: folder, name: "base")
        let larger = try await Self.build(workPercent: 100, frameBytes: 640, into: folder, name: "larger")
        let (result, verdicts) = try await Self.gate(base, larger, repetitions: 1, folder: folder + "/gate")
        #expect(result.status == 1, "\(result.stdout)\n\(result.stderr)")
        #expect(verdicts["frames thread(8MiB)"] == "regressed", "\(verdicts)")
        #expect(verdicts.filter { $0.key != "frames thread(8MiB)" }.values.allSatisfy { !["regressed", "outcomeChanged", "missing", "harnessError"].contains($0) }, "\(verdicts)")
        #expect(result.stdout.contains("stack-high-water"))
    }

    /// The line, from 1, of the first line of `file` (in this repository) that contains `text`.
    static func line(of text: String, in file: String) throws -> Int {
        let lines = try String(contentsOfFile: repository.appendingPathComponent(file).path, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false)
        return try #require(lines.firstIndex { $0.contains(text) }) + 1
    }

    /// The number right after `marker` in `text` (`21` in `… (main.swift:21) …`), nil without one.
    static func line(after marker: String, in text: String) -> Int? {
        guard let range = text.range(of: marker) else { return nil }
        return Int(text[range.upperBound...].prefix { $0.isNumber })
    }

    /// The metrics of `row` in gate.json, by name.
    static func metrics(_ row: [String: Any]?) -> [String: [String: Any]] {
        var byName: [String: [String: Any]] = [:]
        for metric in row?["metrics"] as? [[String: Any]] ?? [] { byName[metric["metric"] as? String ?? "?"] = metric }
        return byName
    }

    @Test func aPlantedAllocationPerNodeFailsTheInterleavedGateByAllocationsOnExactlyThatRowAndNamesTheCallSite() async throws {
        // Counted, not timed: three repetitions are enough whatever the machine's load,
        // and no timing can decide it (the suite's timing thresholds are 3×).
        let folder = try GateEndToEndTests.folder()
        let base = try await Self.build(workPercent: 100, frameBytes: 512, into: folder, name: "base")
        let tagged = try await Self.build(workPercent: 100, frameBytes: 512, allocationsPerNode: 1, into: folder, name: "tagged")
        let (result, verdicts) = try await Self.gate(base, tagged, repetitions: 3, folder: folder + "/gate", suite: Self.wideSuite(in: folder))
        #expect(result.status == 1, "\(result.stdout)\n\(result.stderr)")
        #expect(verdicts["nodes main"] == "regressed", "\(verdicts)\n\(result.stdout)")
        #expect(verdicts.count == 5, "\(verdicts)")
        #expect(verdicts.filter { $0.key != "nodes main" }.values.allSatisfy { $0 == "unchanged" || $0 == "inconclusive" }, "\(verdicts)")
        let rows = try GateEndToEndTests.rows(folder + "/gate/gate.json")
        let nodes = Self.metrics(rows["nodes main"])
        #expect(nodes["allocations"]?["verdict"] as? String == "regressed", "\(nodes["allocations"] ?? [:])")
        #expect(nodes["allocations"]?["noise"] as? String == "counted")
        // Judged by allocations alone: nothing timed failed.
        let failedTimings = nodes.values.filter { $0["noise"] as? String == "timing" && $0["verdict"] as? String == "regressed" }
        #expect(failedTimings.isEmpty, "\(failedTimings)")
        // 1,000 nodes, one more allocation each.
        let before = nodes["allocations"]?["baselineMedian"] as? Double ?? 0
        let after = nodes["allocations"]?["candidateMedian"] as? Double ?? 0
        #expect(abs(after - before - 1000) <= 16, "\(before) → \(after)")
        // The call site: the planted array in the fixture's buildNodes, +1,000 a trial.
        let grew = nodes["allocations"]?["grewAt"] as? [String] ?? []
        let line = try Self.line(of: "node.tags = [value]", in: "Tests/GateFixture/Sources/gate-fixture/main.swift")
        #expect(grew.first?.hasPrefix("main.swift:\(line) (buildNodes(_:))") == true, "\(grew)")
        #expect(grew.first?.hasSuffix("+1,000 allocs a trial") == true, "\(grew)")
        #expect(result.stdout.contains("grew at main.swift:"), "\(result.stdout)")
        // Counted rows are listed first.
        let order = (rows["nodes main"]?["metrics"] as? [[String: Any]] ?? []).map { $0["noise"] as? String ?? "" }
        #expect(order.first == "counted", "\(order)")
    }

    /// The fixture's `nodes` row beside a `noop` row, with `wideTimingThresholds`.
    static func nodesSuite(in folder: String, measure: String = "") throws -> String {
        let path = folder + "/nodes.yaml"
        try GateEndToEndTests.write("""
            name: nodes
            timeout: 60s
            profiles: [linux]
            \(measure)
            \(GateEndToEndTests.wideTimingThresholds)
            runs:
              - scenario: nodes
                parameters: {count: 1000}
                strategies: [main]
              - scenario: noop
                strategies: [main]
            """, path)
        return path
    }

    @Test func inTheCIRecipesTwoFolderLayoutThePlantedAllocationIsNamedAtItsOwnLineAndTheCommentShowsNoRunnerFolder() async throws {
        // strain-ci.sh builds the base in a worktree under $RUNNER_TEMP and the head in the
        // workspace, copies each binary aside and gates them from the workspace: each build's
        // debug information names its files under its own folder. Joined by the absolute path,
        // no site of the fixture's main.swift matched, and the comment named unchanged lines.
        let folder = try GateEndToEndTests.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let temp = folder + "/runner/temp", workspace = folder + "/runner/workspace"
        let base = try await Self.build(workPercent: 100, frameBytes: 512, package: temp + "/strain-base", into: temp + "/strain-base-bin", name: "gate-fixture")
        let head = try await Self.build(workPercent: 100, frameBytes: 512, allocationsPerNode: 1, package: workspace,
                                        into: temp + "/strain-head-bin", name: "gate-fixture")
        let out = workspace + "/strain-reports/gate"
        let ended = try await BoundedProcess.run(StrainBinary.path, ["gate", "--baseline-binary", base, "--candidate-binary", head,
                                                                     try Self.nodesSuite(in: folder), "--repetitions", "3", "--format", "github", "text", "--out", out],
                                                 directory: workspace, timeout: 300)
        #expect(ended.status == 1, "\(ended.stdout)\n\(ended.stderr)")
        let rows = try GateEndToEndTests.rows(out + "/gate.json")
        let allocations = Self.metrics(rows["nodes main"])["allocations"] ?? [:]
        #expect(allocations["verdict"] as? String == "regressed", "\(allocations)")
        #expect(Self.metrics(rows["noop main"])["allocations"]?["verdict"] as? String == "unchanged", "\(rows["noop main"] ?? [:])")
        // Named: the planted line, +1,000 a trial, and no other line of the fixture's file.
        let line = try Self.line(of: "node.tags = [value]", in: "Tests/GateFixture/Sources/gate-fixture/main.swift")
        let grew = allocations["grewAt"] as? [String] ?? []
        #expect(grew.first == "main.swift:\(line) (buildNodes(_:)) +1,000 allocs a trial", "\(grew)")
        #expect(grew.dropFirst().allSatisfy { !$0.hasPrefix("main.swift:") }, "only the planted line of main.swift grew: \(grew)")
        // The comment (gate.md) names the binaries without the runner's folders.
        let comment = try String(contentsOfFile: out + "/gate.md", encoding: .utf8)
        #expect(comment.contains("grew most at main.swift:\(line) (buildNodes(\\_:)) +1,000 allocs a trial")
                    || comment.contains("main.swift:\(line)"), "\(comment)")
        #expect(!comment.contains(folder), "no absolute folder of the runner in the comment: \(comment)")
        #expect(comment.contains("`strain-base-bin/gate-fixture`") && comment.contains("`strain-head-bin/gate-fixture`"), "\(comment)")
    }

    /// The fixture's wide suite with every trial counted under callgrind (`measure: [instructions]`).
    static func countedSuite(in folder: String) throws -> String {
        let path = try wideSuite(in: folder)
        let text = try String(contentsOfFile: path, encoding: .utf8)
        let counted = text.replacingOccurrences(of: "profiles: [linux]\n", with: "profiles: [linux]\nmeasure: [instructions]\n")
        #expect(counted != text)
        try counted.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    @Test func aPlantedTwoPercentMoreWorkFailsTheCountedGateByInstructionsOnExactlyThatRowAndNamesTheFunction() async throws {
        // 2 % more iterations of spin's loop: far inside any timing's noise on this
        // machine, and 20 million instructions a trial to callgrind, whose repetitions
        // of one build agree to a few thousand. Two repetitions a side: a counted metric
        // is judged once two baseline repetitions agree.
        let folder = try GateEndToEndTests.folder()
        let base = try await Self.build(workPercent: 100, frameBytes: 512, into: folder, name: "base")
        let more = try await Self.build(workPercent: 102, frameBytes: 512, into: folder, name: "more")
        let (result, verdicts) = try await Self.gate(base, more, repetitions: 2, folder: folder + "/gate", suite: Self.countedSuite(in: folder))
        #expect(result.status == 1, "\(result.stdout)\n\(result.stderr)")
        #expect(verdicts["spin main"] == "regressed", "\(verdicts)\n\(result.stdout)")
        #expect(verdicts.count == 5, "\(verdicts)")
        #expect(verdicts.filter { $0.key != "spin main" }.values.allSatisfy { $0 == "unchanged" }, "\(verdicts)\n\(result.stdout)")
        let rows = try GateEndToEndTests.rows(folder + "/gate/gate.json")
        let spin = Self.metrics(rows["spin main"])
        #expect(spin["instructions"]?["verdict"] as? String == "regressed", "\(spin["instructions"] ?? [:])")
        #expect(spin["instructions"]?["noise"] as? String == "counted")
        let before = spin["instructions"]?["baselineMedian"] as? Double ?? 0
        let after = spin["instructions"]?["candidateMedian"] as? Double ?? 0
        #expect(before > 0 && abs(after / before - 1.02) < 0.002, "\(before) → \(after)")
        // Every other row's instructions were judged, and unchanged.
        for (name, row) in rows where name != "spin main" {
            #expect(Self.metrics(row)["instructions"]?["verdict"] as? String == "unchanged", "\(name): \(Self.metrics(row)["instructions"] ?? [:])")
        }
        // Named: the loop's closure in the fixture's SpinScenario, with the growth.
        let grew = spin["instructions"]?["grewAt"] as? [String] ?? []
        #expect(grew.first?.contains("SpinScenario.prepare(context:)") == true, "\(grew)")
        #expect(grew.first?.contains("+2.0 %") == true, "\(grew)")
        #expect(grew.first?.contains(" M instr a trial") == true, "\(grew)")
        // Placed through the binary: callgrind ran a copy without debug information, and
        // the name was looked up in the fixture's own binary, whose line table puts the
        // closure inside SpinScenario.prepare in the fixture's main.swift.
        let fixture = "Tests/GateFixture/Sources/gate-fixture/main.swift"
        let first = try Self.line(of: "func prepare(context: ScenarioContext) throws -> Workload", in: fixture)
        let last = try Self.line(of: "context.record(Self.hash", in: fixture)
        let placed = Self.line(after: "(main.swift:", in: grew.first ?? "")
        #expect(placed.map { (first...last).contains($0) } == true, "\(grew): expected main.swift:\(first)–\(last)")
        #expect(result.stdout.contains("grew most in closure #1 in closure #1 in SpinScenario.prepare(context:) (main.swift:"), "\(result.stdout)")
    }

    @Test func underCountedInstructionsThePlantedAllocationIsNamedAtItsLineAndTheInstructionGrowthByTheFixturesOwnCode() async throws {
        // Callgrind runs a stripped copy of the binary: the allocation sites of its trials
        // were named `buildNodes(_:) (strain-stripped)`, without their line, and the
        // instructions the planted allocations add were named first by Strain's executor
        // (`runInstrumented(_:context:) (StrategyExecutor.swift:58)`) in a decoding workload.
        let folder = try GateEndToEndTests.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let base = try await Self.build(workPercent: 100, frameBytes: 512, into: folder, name: "base")
        let tagged = try await Self.build(workPercent: 100, frameBytes: 512, allocationsPerNode: 1, into: folder, name: "tagged")
        let suite = try Self.nodesSuite(in: folder, measure: "measure: [instructions]")
        let (result, verdicts) = try await Self.gate(base, tagged, repetitions: 2, folder: folder + "/gate", suite: suite)
        #expect(result.status == 1, "\(result.stdout)\n\(result.stderr)")
        #expect(verdicts == ["nodes main": "regressed", "noop main": "unchanged"], "\(verdicts)\n\(result.stdout)")
        let nodes = Self.metrics(try GateEndToEndTests.rows(folder + "/gate/gate.json")["nodes main"])
        let line = try Self.line(of: "node.tags = [value]", in: "Tests/GateFixture/Sources/gate-fixture/main.swift")
        let sites = nodes["allocations"]?["grewAt"] as? [String] ?? []
        #expect(sites.first == "main.swift:\(line) (buildNodes(_:)) +1,000 allocs a trial", "\(sites)")
        let functions = nodes["instructions"]?["grewAt"] as? [String] ?? []
        #expect(nodes["instructions"]?["verdict"] as? String == "regressed", "\(nodes["instructions"] ?? [:])")
        // The fixture's own code first, placed in its main.swift; none of Strain's frames nor the runtime's.
        let first = functions.first ?? ""
        #expect((first.hasPrefix("buildNodes(_:) (main.swift:") || first.contains("NodesScenario.prepare(context:)")) && first.contains("(main.swift:"),
                "\(functions)")
        for harness in ["runInstrumented", "strain_", "swift_", "StrategyExecutor", "TrialHost"] {
            #expect(!first.contains(harness), "\(functions)")
        }
    }

    @Test func workAfterAnAwaitThatResumesOnAnotherThreadIsCountedAndTheLoopThatGrewNamed() async throws {
        // The fixture's await-spin hashes 200,000 rounds in a task, awaits a
        // continuation resumed from a GCD thread, and hashes again: the planted build does
        // the second part twice over. Only the part after the await grows.
        let folder = try GateEndToEndTests.folder()
        let base = try await Self.build(workPercent: 100, frameBytes: 512, into: folder, name: "base")
        let more = try await Self.build(workPercent: 100, frameBytes: 512, afterAwaitPercent: 200, into: folder, name: "more")
        let suite = folder + "/await.yaml"
        try GateEndToEndTests.write("""
            name: await
            timeout: 60s
            profiles: [linux]
            measure: [instructions]
            runs:
              - scenario: await-spin
                parameters: {work: 200000}
                strategies: [main, task]
            """, suite)
        let (result, verdicts) = try await Self.gate(base, more, repetitions: 2, folder: folder + "/gate", suite: suite)
        #expect(result.status == 1, "\(result.stdout)\n\(result.stderr)")
        #expect(verdicts == ["await-spin main": "regressed", "await-spin task": "regressed"], "\(verdicts)\n\(result.stdout)")
        let rows = try GateEndToEndTests.rows(folder + "/gate/gate.json")
        for name in ["await-spin main", "await-spin task"] {
            let instructions = Self.metrics(rows[name])["instructions"] ?? [:]
            let before = instructions["baselineMedian"] as? Double ?? 0
            let after = instructions["candidateMedian"] as? Double ?? 0
            // Both parts counted: 200,000 rounds are several million instructions each,
            // and the planted 200,000 more adds about half of the base's count again.
            #expect(before > 5_000_000, "\(name): \(before)")
            #expect(after / before > 1.3 && after / before < 1.7, "\(name): \(before) → \(after)")
            // Named first, with its place, the fixture's own code: the hash loop, whose
            // calls after the await doubled, or the scenario's resumed closure that makes
            // them (seen on task: `… AwaitSpinScenario.prepare(context:) [async resume]
            // (main.swift:144)`), not the runtime's partial function callgrind charges the
            // resumed part to (`Task.sleep(_:) [async resume]`, named before).
            let grew = instructions["grewAt"] as? [String] ?? []
            let line = try Self.line(of: "func spin(_ count: Int, from hash: UInt64)", in: "Tests/GateFixture/Sources/gate-fixture/main.swift")
            #expect(grew.first.map { ($0.hasPrefix("spin(_:from:)") || $0.contains("AwaitSpinScenario.prepare(context:)")) && $0.contains("(main.swift:") } == true,
                    "\(name): \(grew)")
            #expect(grew.contains { $0.hasPrefix("spin(_:from:) (main.swift:\(line)) +") && $0.hasSuffix(", +50.0 %") }, "\(name): \(grew)")
        }
    }

    @Test func anInterleavedAAGateOfOneFixtureBuildJudgesEveryRowsAllocationsAndPasses() async throws {
        let folder = try GateEndToEndTests.folder()
        let base = try await Self.build(workPercent: 100, frameBytes: 512, into: folder, name: "base")
        let (result, verdicts) = try await Self.gate(base, base, repetitions: 3, folder: folder + "/gate", suite: Self.wideSuite(in: folder))
        #expect(result.status == 0, "\(result.stdout)\n\(result.stderr)")
        #expect(verdicts.count == 5, "\(verdicts)")
        let rows = try GateEndToEndTests.rows(folder + "/gate/gate.json")
        for (name, row) in rows {
            // Judged, not inconclusive: the same build allocates the same on every row.
            let metrics = Self.metrics(row)
            #expect(metrics["allocations"]?["verdict"] as? String == "unchanged", "\(name): \(metrics["allocations"] ?? [:])")
            #expect(metrics["allocated-bytes"]?["verdict"] as? String == "unchanged", "\(name): \(metrics["allocated-bytes"] ?? [:])")
        }
        // The rows that allocate nothing of their own still count the harness's few allocations; nodes counts its 1,000.
        #expect((Self.metrics(rows["nodes main"])["allocations"]?["baselineMedian"] as? Double ?? 0) >= 1000)
    }

    @Test func theCommandPluginRunsTheUsersOwnStrainAndCollapsesEveryFailureToOne() async throws {
        let folder = try GateEndToEndTests.folder()
        _ = try await Self.build(workPercent: 100, frameBytes: 512, into: folder, name: "base")
        func plugin(_ arguments: [String]) async throws -> (status: Int32, output: String) {
            try await Tool.run(["swift", "package", "--package-path", Self.repository.appendingPathComponent(".build/gate-fixture-package").path,
                          "--scratch-path", Self.repository.appendingPathComponent(".build/gate-fixture-build").path,
                          "--allow-writing-to-package-directory", "strain", "--product", "gate-fixture", "--configuration", "debug"] + arguments,
                         timeout: 1800)
        }
        let list = try await plugin(["list"])
        #expect(list.status == 0, "\(list.output)")
        #expect(list.output.contains("spin") && list.output.contains("frames"), "the user's own scenarios: \(list.output)")
        let refused = try await plugin(["gate", folder + "/none", "--baseline", "nothing"])
        #expect(refused.status == 1, "SwiftPM turns the gate's exit 2 into 1: \(refused.output)")
        #expect(refused.output.contains("exited 2"))
    }
}
