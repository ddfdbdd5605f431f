import Foundation
import StrainRecords
import Testing

/// What the gate says about its two sides, through the built binary: which build each
/// side ran, and whether they ran the same suite text.
@Suite(.serialized, .timeLimit(.minutes(10))) struct GateSidesTests {
    static let suite = """
        name: gate-sides
        timeout: 30s
        profiles: [linux]
        runs:
          - scenario: noop
            strategies: [main]
        """

    /// A copy of the built `strain` whose GNU build ID has its first byte flipped:
    /// another build as far as anything that reads the ID can tell, from one checkout.
    static func rebuiltCopy(into folder: String) throws -> (path: String, buildID: String) {
        let copy = folder + "/other-build/strain"
        try FileManager.default.createDirectory(atPath: folder + "/other-build", withIntermediateDirectories: true)
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: StrainBinary.path)))
        let original = try #require(Self.buildID(bytes), "the built strain has no GNU build ID")
        // The note's descriptor follows "GNU\0"; the ID's bytes are unique enough to find.
        let idBytes = stride(from: 0, to: original.count, by: 2).map { UInt8(original.dropFirst($0).prefix(2), radix: 16)! }
        let at = try #require(bytes.indices.first { bytes[$0..<min($0 + idBytes.count, bytes.count)].elementsEqual(idBytes) })
        bytes[at] ^= 0xff
        try Data(bytes).write(to: URL(fileURLWithPath: copy))
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: copy)
        return (copy, try #require(Self.buildID(bytes)))
    }

    /// `readelf -n`'s Build ID, read from the bytes here so the test does not trust the code it tests.
    static func buildID(_ bytes: [UInt8]) -> String? {
        let marker: [UInt8] = [0x04, 0, 0, 0, 0x14, 0, 0, 0, 0x03, 0, 0, 0, 0x47, 0x4e, 0x55, 0]  // namesz 4, descsz 20, NT_GNU_BUILD_ID, "GNU\0"
        guard let at = bytes.indices.first(where: { bytes[$0..<min($0 + 16, bytes.count)].elementsEqual(marker) }) else { return nil }
        return bytes[(at + 16)..<(at + 36)].map { String(format: "%02x", $0) }.joined()
    }

    @Test func anInterleavedGateNamesEachSidesOwnBuildInEveryOutput() async throws {
        let folder = try GateEndToEndTests.folder()
        try Self.suite.write(toFile: folder + "/suite.yaml", atomically: true, encoding: .utf8)
        let original = try #require(Self.buildID([UInt8](try Data(contentsOf: URL(fileURLWithPath: StrainBinary.path)))))
        let other = try Self.rebuiltCopy(into: folder)
        #expect(other.buildID != original)
        let result = try await StrainBinary.run(["gate", "--baseline-binary", other.path, "--candidate-binary", StrainBinary.path,
                                           folder + "/suite.yaml", "--repetitions", "1", "--out", folder + "/gate"], timeout: 300)
        #expect([0, 1].contains(result.status), "\(result.stdout)\n\(result.stderr)")
        let (old, new) = (String(other.buildID.prefix(12)), String(original.prefix(12)))
        let markdown = try String(contentsOfFile: folder + "/gate/gate.md", encoding: .utf8)
        // gate.md is a pull request's comment: no absolute folder of the machine's. A binary
        // inside the folder the gate ran in is named relative to it, any other by its
        // folder and its name.
        let repository = FixturePackage.repository.path + "/"
        let shownNew = StrainBinary.path.hasPrefix(repository) ? String(StrainBinary.path.dropFirst(repository.count))
                                                              : StrainBinary.path.split(separator: "/").suffix(2).joined(separator: "/")
        let shownOld = other.path.split(separator: "/").suffix(2).joined(separator: "/")
        #expect(markdown.contains("Baseline build `\(old)` (`\(shownOld)`), candidate build `\(new)` (`\(shownNew)`)"), "\(markdown)")
        #expect(!markdown.contains(other.path) && !markdown.contains(StrainBinary.path), "\(markdown)")
        let html = try String(contentsOfFile: folder + "/gate/gate.html", encoding: .utf8)
        #expect(html.contains("Baseline build <code>\(old)</code>") && html.contains("candidate build <code>\(new)</code>"), "\(html)")
        #expect(result.stdout.contains("Baseline build \(old) (\(other.path)), candidate build \(new) (\(StrainBinary.path))"), "\(result.stdout)")
        let junit = try String(contentsOfFile: folder + "/gate/junit.xml", encoding: .utf8)
        #expect(junit.contains("<property name=\"gate.baseline.build-id\" value=\"\(other.buildID)\"/>"), "\(junit)")
        #expect(junit.contains("<property name=\"gate.candidate.build-id\" value=\"\(original)\"/>"), "\(junit)")
        // Each side's run.json records the binary that ran it.
        let baseline = try RunRecordFile.read(from: folder + "/gate/baseline-run.json")
        let candidate = try RunRecordFile.read(from: folder + "/gate/candidate-run.json")
        #expect(baseline.environment.build?.buildID == other.buildID)
        #expect(candidate.environment.build?.buildID == original)
        #expect(baseline.environment.build?.executablePath == other.path)
    }

    @Test func aGateWarnsInEveryOutputWhenTheSidesRanDifferentSuiteText() async throws {
        let folder = try GateEndToEndTests.folder()
        let suite = folder + "/suite.yaml"
        try Self.suite.write(toFile: suite, atomically: true, encoding: .utf8)
        let first = try await StrainBinary.run(["run", suite, "--out", folder + "/a", "--format", "json"])
        #expect(first.status == 0, "\(first.stderr)")
        try Self.suite.replacingOccurrences(of: "timeout: 30s", with: "timeout: 20s").write(toFile: suite, atomically: true, encoding: .utf8)
        let second = try await StrainBinary.run(["run", suite, "--out", folder + "/b", "--format", "json"])
        #expect(second.status == 0, "\(second.stderr)")
        let gate = try await StrainBinary.run(["gate", folder + "/b", "--baseline", folder + "/a/run.json", "--out", folder + "/gate"])
        // A warning, not a failure: the one row is judged as usual.
        #expect(gate.status == 0, "\(gate.stdout)\n\(gate.stderr)")
        #expect(gate.stdout.contains("warning: the two sides ran different suite text"), "lowercase after its prefix, as every error: is: \(gate.stdout)")
        #expect(gate.stdout.contains("timeout 30 s → 20 s"), "\(gate.stdout)")
        let markdown = try String(contentsOfFile: folder + "/gate/gate.md", encoding: .utf8)
        #expect(markdown.contains("> [!WARNING]\n> The two sides ran different suite text"), "\(markdown)")
        let html = try String(contentsOfFile: folder + "/gate/gate.html", encoding: .utf8)
        #expect(html.contains("<b>Warning:</b> The two sides ran different suite text"), "\(html)")
        let junit = try String(contentsOfFile: folder + "/gate/junit.xml", encoding: .utf8)
        #expect(junit.contains("<property name=\"gate.warning.1\" value=\"The two sides ran different suite text"), "\(junit)")
        let json = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: folder + "/gate/gate.json"))) as? [String: Any]
        #expect((json?["warnings"] as? [String])?.count == 1)

        // A comment is text too: the warning says the resolved suites agree.
        try (Self.suite + "\n# a comment\n").write(toFile: suite, atomically: true, encoding: .utf8)
        let third = try await StrainBinary.run(["run", suite, "--out", folder + "/c", "--format", "json"])
        #expect(third.status == 0, "\(third.stderr)")
        let commented = try await StrainBinary.run(["gate", folder + "/c", "--baseline", folder + "/a/run.json", "--out", folder + "/gate-comment"])
        #expect(commented.status == 0, "\(commented.stdout)\n\(commented.stderr)")
        #expect(commented.stdout.contains("what they resolved agrees"), "\(commented.stdout)")

        // The same text: no warning.
        let same = try await StrainBinary.run(["gate", folder + "/c", "--baseline", folder + "/c/run.json", "--out", folder + "/gate-same"])
        #expect(same.status == 0, "\(same.stdout)\n\(same.stderr)")
        #expect(!same.stdout.contains("warning:"), "\(same.stdout)")
    }

    @Test func aRunsReportsNameTheBinaryThatRanIt() async throws {
        let folder = try GateEndToEndTests.folder()
        try Self.suite.write(toFile: folder + "/suite.yaml", atomically: true, encoding: .utf8)
        let result = try await StrainBinary.run(["run", folder + "/suite.yaml", "--out", folder + "/out", "--format", "html", "md", "junit"])
        #expect(result.status == 0, "\(result.stderr)")
        let id = try #require(Self.buildID([UInt8](try Data(contentsOf: URL(fileURLWithPath: StrainBinary.path)))))
        let markdown = try String(contentsOfFile: folder + "/out/summary.md", encoding: .utf8)
        #expect(markdown.contains(", build `\(id.prefix(12))`"), "\(markdown)")
        let html = try String(contentsOfFile: folder + "/out/report.html", encoding: .utf8)
        #expect(html.contains("<tr><th>binary</th><td>build \(id.prefix(12)) ("), "\(html)")
        let junit = try String(contentsOfFile: folder + "/out/junit.xml", encoding: .utf8)
        #expect(junit.contains("name=\"strain.build-id\" value=\"\(id)\""), "\(junit)")
    }
}
