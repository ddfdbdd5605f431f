import Foundation
import StrainRecords
import Testing

/// `strain run` with no suite and no `--out`, and `strain` with no arguments at all,
/// in a folder of the test's own (the defaults are relative to the working directory).
@Suite(.serialized) struct RunDefaultsTests {
    static let noSuite = "error: no suite given, and there is no Scenarios/smoke.yaml here; name one: strain run SUITE.yaml ('strain explain SCENARIO' prints a suite to start from)\n"

    @Test func withNoSuiteAndNoDefaultSuiteHereItSaysHowToNameOneAndWritesNothing() async throws {
        let folder = try temporaryFolder()
        for arguments in [["run"], []] {
            let result = try await CommandRun.run(arguments, in: folder, timeout: 30)
            #expect(result.status == 2, "\(arguments): \(result.stdout)\(result.stderr)")
            #expect(result.stderr == Self.noSuite, "\(arguments): \(result.stderr)")
            #expect(result.stdout.isEmpty, "\(arguments): \(result.stdout)")
        }
        #expect(TestFiles.entries(folder).isEmpty, "no Reports folder: \(TestFiles.entries(folder))")
    }

    @Test func withNoSuiteItRunsScenariosSmokeYamlIntoReportsNamedForTheSuiteAndTheTime() async throws {
        let folder = try temporaryFolder()
        try TestFiles.write("""
            name: default suite
            timeout: 30s
            profiles: [linux]
            runs:
              - scenario: noop
                strategies: [main]
            """, to: folder + "/Scenarios/smoke.yaml")
        let formatter = DateFormatter()
        formatter.dateFormat = "yyyyMMdd-HHmmss"
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.locale = Locale(identifier: "en_US_POSIX")
        for (index, arguments) in [["run"], []].enumerated() {
            let before = Set(TestFiles.entries(folder + "/Reports"))
            let started = Date()
            let result = try await CommandRun.run(arguments, in: folder, timeout: 60)
            let ended = Date()
            #expect(result.status == 0, "\(arguments): \(result.stdout)\(result.stderr)")
            #expect(result.stdout.hasPrefix("Running default suite: 1 trial from Scenarios/smoke.yaml\n"), "\(arguments): \(result.stdout)")
            let added = TestFiles.entries(folder + "/Reports").filter { !before.contains($0) }
            #expect(added.count == 1, "one new folder per run: \(added)")
            let newest = try #require(added.first)
            // `default suite` made safe for a file name, then the start time in UTC.
            let match = try #require(newest.wholeMatch(of: /default-suite-(\d{8}-\d{6})/), "\(newest)")
            let stamp = try #require(formatter.date(from: String(match.1)))
            #expect(stamp >= started.addingTimeInterval(-1) && stamp <= ended, "\(match.1) within the run (UTC), \(started)…\(ended)")
            let out = "Reports/" + newest
            for file in ["run.json", "trials.jsonl", "report.html", "summary.md", "junit.xml"] {
                #expect(TestFiles.exists(folder + "/" + out + "/" + file), "\(arguments): \(file)")
            }
            #expect(result.stdout.hasSuffix("Wrote \(out)/run.json, \(out)/trials.jsonl, \(out)/report.html, \(out)/summary.md and \(out)/junit.xml\n"),
                    "\(arguments): \(result.stdout)")
            let record = try RunRecordFile.read(from: folder + "/" + out + "/run.json")
            #expect(record.suite.name == "default suite")
            #expect(record.suite.path.hasSuffix("Scenarios/smoke.yaml"), "\(record.suite.path)")
            #expect(record.trials.map(\.key.description) == ["noop main linux"])
            // The second run must not start within the first one's second: its default folder would be the same.
            if index == 0 { while Date().timeIntervalSince1970.rounded(.down) <= stamp.timeIntervalSince1970 { await pause(50_000) } }
        }
    }
}
