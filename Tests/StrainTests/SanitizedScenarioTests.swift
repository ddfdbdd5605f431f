import Foundation
import StrainKit
import StrainRecords
import StrainReports
import StrainText
import Testing

/// Strain built with ThreadSanitizer running the built-in contention scenarios: the
/// unguarded array's race named in every trial with both stacks and the scenario's own
/// line, no race in a guarded trial (the harness's and the `Mutex` guard's locks shown
/// to the sanitizer), every trial spawned and run.json saying why.
///
/// The sanitized `strain` is the debug one in the testing fixture's sanitized scratch
/// folder (`swift build --sanitize=thread --product strain` from the fixture, whose
/// Strain dependency is this checkout): the fixture's race tests compile Strain's
/// modules with ThreadSanitizer there anyway, so this adds the command-line modules and
/// a link (44 s), where the release build Sanitizers.md shows (`-c release -Xswiftc
/// -sanitize=thread --scratch-path .build-tsan`) was a second release compile of all of
/// Strain inside the test run (about 500 s on a quiet 2-core machine). What the test
/// checks (sanitizer reports, spawned trials) does not depend on the optimization level.
@Suite(.serialized, .timeLimit(.minutes(60))) struct SanitizedScenarioTests {
    static let repository = FixturePackage.repository.path

    struct BuildFailure: Error, CustomStringConvertible {
        var description: String
    }

    /// The sanitized `strain`, built once per test process (incrementally after the first time).
    static let built = AsyncOnce<String> {
        let scratch = FixturePackage.sanitizedScratch
        let (status, output) = try await FixturePackage.locked(scratch: scratch) {
            try await FixturePackage.swift(["build", "--sanitize=thread", "--package-path", StrainTestingTests.fixture,
                                            "--scratch-path", scratch, "--product", "strain"])
        }
        guard status == 0 else { throw BuildFailure(description: "the sanitized build failed: \(output.suffix(4000))") }
        return scratch + "/debug/strain"
    }

    @Test func theUnguardedArraysRaceIsNamedInEveryTrialAndNoGuardedTrialHasOne() async throws {
        let strain = try await Self.built.value()
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        // The README's suite at 3 repetitions a configuration instead of 8.
        let suite = try String(contentsOfFile: Self.repository + "/Scenarios/races.yaml", encoding: .utf8)
            .replacingOccurrences(of: "repetitions: 8", with: "repetitions: 3")
        try suite.write(toFile: folder + "/races.yaml", atomically: true, encoding: .utf8)
        // Its own TMPDIR: the reports' folder the runner makes there is gone when it exits.
        try FileManager.default.createDirectory(atPath: folder + "/tmp", withIntermediateDirectories: true)
        let run = try await BoundedProcess.run(strain, ["run", folder + "/races.yaml", "--out", folder + "/out", "--format", "json"],
                                         directory: folder, environment: ["TMPDIR": folder + "/tmp"], timeout: 900)
        #expect(run.status == 0, "every outcome as the suite expects: \(run.stdout.suffix(3000))\n\(run.stderr.suffix(2000))")
        let left = (try? FileManager.default.contentsOfDirectory(atPath: folder + "/tmp")) ?? []
        #expect(!left.contains { $0.hasPrefix("strain-sanitizer-") }, "the runner removed its sanitizer folder: \(left)")
        let record = try RunRecordFile.read(from: folder + "/out/run.json")
        #expect(record.environment.buildConfiguration == "debug+thread-sanitizer")
        #expect(record.execution?.serverTrials == 0)
        #expect(record.execution?.fallback?.contains("ThreadSanitizer") == true, "\(String(describing: record.execution))")
        let unguarded = record.trials.filter { $0.key[parameter: "guard"] == "unguarded" }
        let guarded = record.trials.filter { $0.key[parameter: "guard"] != "unguarded" }
        #expect(unguarded.count == 3 && guarded.count == 9)
        for trial in unguarded {
            let races = (trial.sanitizerReports ?? []).filter(\.isRace)
            #expect(!races.isEmpty, "\(trial.id): \(trial.outcome)")
            // Both sides of a race, each with a frame in the scenario's own file and line.
            let named = races.contains { race in
                race.accesses.count == 2 && race.accesses.allSatisfy { access in
                    access.frames.contains { $0.file?.hasSuffix("ContendedCollectionScenario.swift") == true && ($0.line ?? 0) > 0 }
                }
            }
            #expect(named, "\(trial.id): \(races.map { $0.accesses.map { SanitizerText.stack($0.frames) } })")
        }
        for trial in guarded {
            #expect(trial.outcome.kind == .completed, "\(trial.id): \(trial.outcome)")
            #expect(trial.sanitizerReports == nil, "\(trial.id): \(trial.sanitizerReports?.map(\.headline) ?? [])")
        }
    }

    @Test func everyCorrectGuardReaderWriterQueueCombineStoreAndTheConfinementCheckerIsRaceFreeAndUnguardedCombineRaces() async throws {
        let strain = try await Self.built.value()
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        // The suite's own 2 repetitions: a race can corrupt memory and crash the unguarded trial
        // before the sanitizer reports (one repetition of the debug build did, in a whole-suite
        // run), so the race is required in either of its two trials.
        let suite = try String(contentsOfFile: Self.repository + "/Scenarios/races-guards.yaml", encoding: .utf8)
        try suite.write(toFile: folder + "/races-guards.yaml", atomically: true, encoding: .utf8)
        let run = try await BoundedProcess.run(strain, ["run", folder + "/races-guards.yaml", "--out", folder + "/out", "--format", "json"],
                                         directory: folder, timeout: 900)
        #expect(run.status == 0, "every outcome as the suite expects: \(run.stdout.suffix(3000))\n\(run.stderr.suffix(2000))")
        let record = try RunRecordFile.read(from: folder + "/out/run.json")
        let broken = record.trials.filter { $0.key[parameter: "guard"] == "unguarded" }
        let correct = record.trials.filter { $0.key[parameter: "guard"] != "unguarded" }
        #expect(broken.count == 2 && correct.count == 36, "\(record.trials.map(\.id))")
        for trial in correct {
            #expect(trial.sanitizerReports?.contains(where: \.isRace) != true, "\(trial.id): \(trial.sanitizerReports?.map(\.headline) ?? [])")
        }
        // The unguarded set's race, named in Strain's scenario even when the trial crashed
        // before the sanitizer's exit (its module map comes with each report).
        let races = broken.flatMap { ($0.sanitizerReports ?? []).filter(\.isRace) }
        #expect(!races.isEmpty, "\(broken.map { "\($0.id): \($0.outcome)" })")
        let named = races.contains { race in race.accesses.contains { access in access.frames.contains { $0.file?.hasSuffix("CombineStoreScenario.swift") == true } } }
        #expect(named, "\(races.map { $0.accesses.map { SanitizerText.stack($0.frames) } })")
    }
}
