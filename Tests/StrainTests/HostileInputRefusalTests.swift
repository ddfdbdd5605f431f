import Foundation
import Testing

/// The smaller findings of a hostile corpus, through the built binary: a step summary
/// that is a FIFO, a count the candidate lost, a baseline whose denormal times make a
/// change infinite, and inputs that were accepted though they should not be.
@Suite struct HostileInputRefusalTests {
    @Test func aStepSummaryThatIsAFIFOIsRefusedWithAWarningInsteadOfBlockingTheGate() async throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let fifo = folder + "/summary"
        #expect(mkfifo(fifo, 0o600) == 0)
        // No one reads the FIFO: opening it for writing would wait for good.
        let result = try await StrainBinary.run(["gate", RecordBoundsTests.fixture, "--baseline", RecordBoundsTests.fixture, "--out", folder + "/gate", "--format", "github"],
                                          timeout: 60, environment: ["GITHUB_STEP_SUMMARY": fifo])
        #expect(result.status == 3, "\(result.stdout)\n\(result.stderr)")  // the fixture holds a harness error
        #expect(result.stderr.contains("warning: could not append to $GITHUB_STEP_SUMMARY (\(fifo)): \(fifo) is a FIFO no one reads"), "\(result.stderr)")
        #expect(result.stdout.contains("::notice title=Strain gate::"), "\(result.stdout)")
    }

    @Test func aStepSummaryThatIsARegularFileIsStillAppendedTo() async throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let summary = folder + "/summary.md"
        try "before\n".write(toFile: summary, atomically: true, encoding: .utf8)
        let result = try await StrainBinary.run(["gate", RecordBoundsTests.fixture, "--baseline", RecordBoundsTests.fixture, "--out", folder + "/gate", "--format", "github"],
                                          timeout: 60, environment: ["GITHUB_STEP_SUMMARY": summary])
        #expect(result.status == 3, "\(result.stderr)")
        let text = try String(contentsOfFile: summary, encoding: .utf8)
        #expect(text.hasPrefix("before\n") && text.count > 100, "\(text)")
    }

    @Test func aCountedMetricTheCandidateLostIsShownNotCountedRatherThanDropped() async throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        // Both repetitions of a row counted 100 allocations in the baseline; the candidate counted none.
        let baseline = try CountedInputBoundsTests.record(in: folder, name: "baseline", allocations: 100, sites: [CountedInputBoundsTests.site(100)])
        let result = try await StrainBinary.run(["gate", RecordBoundsTests.fixture, "--baseline", baseline, "--out", folder + "/gate"])
        #expect(result.stdout.contains("stack-depth[frame=256B, limit=100] thread(8MiB) linux: allocations, allocated-bytes (not counted on the candidate)"), "\(result.stdout)")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: folder + "/gate/gate.json"))) as? [String: Any])
        let metrics = (json["rows"] as? [[String: Any]] ?? []).flatMap { $0["metrics"] as? [[String: Any]] ?? [] }
        let lost = metrics.filter { $0["metric"] as? String == "allocations" }
        #expect(lost.count == 1, "\(lost)")
        #expect(lost.first?["verdict"] as? String == "inconclusive")
        #expect((lost.first?["reason"] as? String)?.hasPrefix("not counted on the candidate: the baseline counted it in 2 repetitions") == true, "\(lost)")
    }

    /// The mirror case (found by Tests/Fuzz/structured's gate-counted family): a count only
    /// the candidate has used to drop out of the row.
    @Test func aCountedMetricOnlyTheCandidateHasIsShownNotCountedOnTheBaselineRatherThanDropped() async throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let candidate = try CountedInputBoundsTests.record(in: folder, name: "candidate", allocations: 100, sites: [CountedInputBoundsTests.site(100)])
        let result = try await StrainBinary.run(["gate", candidate, "--baseline", RecordBoundsTests.fixture, "--out", folder + "/gate"])
        #expect(result.stdout.contains("stack-depth[frame=256B, limit=100] thread(8MiB) linux: allocations, allocated-bytes (not counted on the baseline)"), "\(result.stdout)")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: folder + "/gate/gate.json"))) as? [String: Any])
        let metrics = (json["rows"] as? [[String: Any]] ?? []).flatMap { $0["metrics"] as? [[String: Any]] ?? [] }
        let new = metrics.filter { $0["metric"] as? String == "allocations" }
        #expect(new.count == 1, "\(new)")
        #expect(new.first?["verdict"] as? String == "inconclusive")
        #expect((new.first?["reason"] as? String)?.hasPrefix("not counted on the baseline: the candidate counted it in 2 repetitions") == true, "\(new)")
    }

    @Test func aBaselineWhoseDenormalTimesMakeAChangeInfiniteIsRefusedReadably() async throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let baseline = try RecordBoundsTests.record { object in
            var trials = object["trials"] as! [[String: Any]]
            for index in 4...9 {
                var metrics = trials[index]["metrics"] as! [String: Any]
                metrics["wallSeconds"] = Double.leastNonzeroMagnitude  // 5e-324
                trials[index]["metrics"] = metrics
            }
            object["trials"] = trials
        }
        defer { try? FileManager.default.removeItem(atPath: (baseline as NSString).deletingLastPathComponent) }
        let result = try await StrainBinary.run(["gate", RecordBoundsTests.fixture, "--baseline", baseline, "--out", folder + "/gate"])
        #expect(result.status == 2, "\(result.stdout)\n\(result.stderr)")
        #expect(result.stderr.contains("cannot compare stack-depth[frame=256B, limit="), "\(result.stderr)")
        #expect(result.stderr.contains(" is inf "), "\(result.stderr)")
        #expect(result.stderr.contains("too small to divide by"), "\(result.stderr)")
        #expect(!result.stderr.contains("could not encode"), "\(result.stderr)")
    }

    static func suite(gate: String = "", strategy: String = "main") -> String {
        """
        name: refusals
        profiles: [linux]
        \(gate)
        runs:
          - scenario: noop
            strategies: ["\(strategy)"]
        """
    }

    @Test(arguments: ["{delta: 0x1p-3}", "{delta: 0x1p3%}", "{floor: 0x1p-3s}"])
    func aHexadecimalGateThresholdIsRefused(threshold: String) async throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try Self.suite(gate: "gate:\n  wall: \(threshold)").write(toFile: folder + "/suite.yaml", atomically: true, encoding: .utf8)
        let result = try await StrainBinary.run(["run", folder + "/suite.yaml", "--list"])
        #expect(result.status == 2, "\(threshold): \(result.stdout)\n\(result.stderr)")
        #expect(result.stderr.contains("is not a valid"), "\(result.stderr)")
    }

    @Test func aZeroWidthSpaceAfterAStrategyNameIsRefused() async throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try Self.suite(strategy: "main\\u200b").write(toFile: folder + "/suite.yaml", atomically: true, encoding: .utf8)
        let result = try await StrainBinary.run(["run", folder + "/suite.yaml", "--list"])
        #expect(result.status == 2, "\(result.stdout)\n\(result.stderr)")
        #expect(result.stderr.contains("unknown strategy"), "\(result.stderr)")
        // A plain space around it is still fine.
        try Self.suite(strategy: " main ").write(toFile: folder + "/suite.yaml", atomically: true, encoding: .utf8)
        #expect(try await StrainBinary.run(["run", folder + "/suite.yaml", "--list"]).status == 0)
    }

    @Test func versionWithAnotherArgumentIsRefusedAndAloneStillAnswers() async throws {
        let bogus = try await StrainBinary.run(["--version", "--bogus"])
        #expect(bogus.status == 2, "\(bogus.stdout)\n\(bogus.stderr)")
        #expect(bogus.stderr.contains("--version takes no other arguments"), "\(bogus.stderr)")
        #expect(bogus.stdout.isEmpty, "\(bogus.stdout)")
        let alone = try await StrainBinary.run(["--version"])
        #expect(alone.status == 0 && alone.stdout.hasPrefix("strain "), "\(alone.stdout)\n\(alone.stderr)")
    }
}
