import Foundation
import StrainRecords
import Testing

/// A run's journal deleted or replaced while the run runs, through the built binary:
/// run.json still holds every trial the run finished, and the journal is written back
/// from the runner's own copy so `--resume` finds them.
@Suite(.serialized, .timeLimit(.minutes(10))) struct JournalChangeTests {
    static let suite = """
        name: journal-change
        timeout: 30s
        profiles: [linux]
        runs:
          - scenario: noop
            strategies: [main]
        """
    static let repetitions = 400

    /// Runs the suite into `folder/out`; once the journal holds 20 lines, `change` is
    /// done to it. Returns the run's status and standard error.
    static func run(in folder: String, changing change: @escaping @Sendable (String) throws -> Void) async throws -> (status: Int32, stderr: String) {
        // On a thread of its own from start to end: the change must land while the run
        // still runs, and a task waiting for a pool thread on a busy suite can miss it.
        try await OffPool.run("journal change") { try runWaiting(in: folder, changing: change) }
    }

    private static func runWaiting(in folder: String, changing change: (String) throws -> Void) throws -> (status: Int32, stderr: String) {
        try suite.write(toFile: folder + "/suite.yaml", atomically: true, encoding: .utf8)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: StrainBinary.path)
        process.arguments = ["run", folder + "/suite.yaml", "--repetitions", "\(repetitions)", "--out", folder + "/out", "--format", "json"]
        process.standardOutput = FileHandle.nullDevice
        let errorPath = folder + "/stderr"
        _ = FileManager.default.createFile(atPath: errorPath, contents: nil)
        process.standardError = FileHandle(forWritingAtPath: errorPath)
        try process.run()
        let journal = folder + "/out/trials.jsonl"
        let deadline = Date().addingTimeInterval(60)
        while Date() < deadline, process.isRunning,
              ((try? String(contentsOfFile: journal, encoding: .utf8))?.split(separator: "\n").count ?? 0) < 20 {
            usleep(5_000) // off the pool: runWaiting runs on an OffPool thread
        }
        #expect(process.isRunning, "the run ended before its journal could be changed: make the plan longer")
        try change(journal)
        let killer = DispatchWorkItem { if process.isRunning { kill(process.processIdentifier, SIGKILL) } }
        DispatchQueue.global().asyncAfter(deadline: .now() + 120, execute: killer)
        process.waitUntilExit() // off the pool: runWaiting runs on an OffPool thread
        killer.cancel()
        return (process.terminationStatus, (try? String(contentsOfFile: errorPath, encoding: .utf8)) ?? "")
    }

    static func expectEveryTrialKept(in folder: String, _ result: (status: Int32, stderr: String), change: String) async throws {
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.contains("trials.jsonl \(change); written back from the runner's own copy"), "\(result.stderr)")
        let record = try RunRecordFile.read(from: folder + "/out/run.json")
        #expect(record.trials.count == repetitions)
        #expect(record.interrupted != true)
        // The journal is whole again: a resume finds nothing left to run.
        let journal = try String(contentsOfFile: folder + "/out/trials.jsonl", encoding: .utf8)
        #expect(journal.split(separator: "\n").count == repetitions + 1)
        let resume = try await StrainBinary.run(["run", "--resume", folder + "/out", "--list"])
        #expect(resume.status == 0, "\(resume.stderr)")
    }

    @Test func aJournalDeletedMidRunLosesNoTrial() async throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let result = try await Self.run(in: folder) { journal in try FileManager.default.removeItem(atPath: journal) }
        try await Self.expectEveryTrialKept(in: folder, result, change: "was deleted during the run")
    }

    @Test func aJournalReplacedMidRunLosesNoTrial() async throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let result = try await Self.run(in: folder) { journal in
            // Its header and five trials, put in its place as a whole new file.
            let kept = try String(contentsOfFile: journal, encoding: .utf8).split(separator: "\n").prefix(6).joined(separator: "\n") + "\n"
            try kept.write(toFile: journal + ".new", atomically: false, encoding: .utf8)
            #expect(rename(journal + ".new", journal) == 0)
        }
        try await Self.expectEveryTrialKept(in: folder, result, change: "was replaced by another file during the run")
    }

    /// Found by issue 32's attacker re-run: a journal cut in place to half its size while
    /// the run ran (same file, so neither deleted nor replaced) left a torn line the
    /// runner's next lines were appended to; it read its trials back from that file, and
    /// exited 3 with no run.json and a journal `--resume` refused.
    @Test func aJournalCutInPlaceMidRunLosesNoTrial() async throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let result = try await Self.run(in: folder) { journal in
            let size = try #require(try FileManager.default.attributesOfItem(atPath: journal)[.size] as? Int)
            #expect(truncate(journal, off_t(size / 2)) == 0)
        }
        try await Self.expectEveryTrialKept(in: folder, result, change: "was cut or overwritten in place during the run")
    }

}
