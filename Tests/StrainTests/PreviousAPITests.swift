import Foundation
import StrainKit
import Testing

/// A package written against 0.1.0's API (Tests/PreviousAPIPackage, never migrated)
/// still builds against this checkout, its deprecated spellings warned about with
/// what to write instead, and its scenarios run and record what they recorded then.
@Suite(.serialized, .timeLimit(.minutes(60))) struct PreviousAPITests {
    static let package = FixturePackage.repository.appendingPathComponent("Tests/PreviousAPIPackage").path

    @Test func aPackageWrittenAgainst010CompilesWithDeprecationsNamingTheNewSpellingAndRecordsItsMetrics() async throws {
        let out = TestFolders.root.appendingPathComponent("strain-previous-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: out) }
        // Its sources are compiled again each time (a new modification date), so the
        // warnings are printed by this build, not left in an earlier one's log.
        for file in ["Sources/PreviousScenarios/DocumentScenario.swift", "Sources/previous-strain/ChecksumScenario.swift"] {
            try FileManager.default.setAttributes([.modificationDate: Date()], ofItemAtPath: Self.package + "/" + file)
        }
        let (status, output, run) = try await FixturePackage.locked {
            try? FileManager.default.removeItem(atPath: FixturePackage.scratch + "/debug.yaml")
            try? FileManager.default.removeItem(atPath: FixturePackage.scratch + "/debug/description.json")
            let (status, output) = try await FixturePackage.swift(["build", "--package-path", Self.package, "--scratch-path", FixturePackage.scratch])
            guard status == 0 else { return (status, output, nil as StrainBinary.Result?) }
            let run = try await FixturePackage.run(FixturePackage.scratch + "/debug/previous-strain",
                                                   ["run", "previous.yaml", "--out", out, "--format", "json"], directory: Self.package)
            return (status, output, run)
        }
        try #require(status == 0, "0.1.0's spellings compile: \(output)")
        // Each deprecated call is warned about where it is, with the spelling to use.
        let warnings = output.split(separator: "\n").filter { $0.contains("warning:") && $0.contains("deprecated") }
        for (file, calls) in [("DocumentScenario.swift", 1), ("ChecksumScenario.swift", 2)] {
            let here = warnings.filter { $0.contains(file) && $0.contains("'record'") }
            #expect(here.count == calls, "\(file): \(warnings)")
            #expect(here.allSatisfy { $0.contains("context.record(Self.documentBytes, value)") && $0.contains("Metric<Int>.bytes(") },
                    "the warning names the new spelling: \(here)")
        }
        let result = try #require(run)
        #expect(result.status == 0, "\(result.stdout)\n\(result.stderr)")
        let record = try RunRecordFile.read(from: out + "/run.json")
        #expect(record.trials.count == 2 && record.trials.allSatisfy { $0.outcome.kind == .completed }, "\(record.trials.map(\.outcome.description))")
        // What the trials recorded by name is kept under that name, as in 0.1.0.
        let checksum = try #require(record.trials.first { $0.scenario == "checksum" })
        #expect(checksum.metrics.custom["checksum"] == Double((0..<4096).reduce(UInt32(0)) { $0 &+ UInt32(UInt8(truncatingIfNeeded: $1)) }))
        #expect((checksum.metrics.custom["bytes per second"] ?? 0) > 0)
        let document = try #require(record.trials.first { $0.scenario == "document" })
        #expect((document.metrics.custom["document bytes"] ?? 0) > 1_000, "\(document.metrics.custom)")
        // A 0.1.0 list `[MetricDescriptor(…)] + WorkerResults.metrics` still declares its
        // metrics (a descriptor is a MetricDeclaration), so the gate judges them.
        let declared = try #require(record.customMetrics?.first { $0.name == "document bytes" })
        #expect(declared.unit == .bytes && declared.polarity == .lowerIsBetter && declared.noise == .deterministic, "\(declared)")
    }
}
