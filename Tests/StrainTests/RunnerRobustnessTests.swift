import Foundation
import StrainKit
import StrainRunner
import StrainScenarios
import StrainSuite
import Testing

/// The runner as a hostile user treats it: signals, kills, a closed stdout, two
/// runners on one folder, a folder reused, reports written over their input.
@Suite(.serialized, .timeLimit(.minutes(10))) struct RunnerRobustnessTests {
    /// A quick trial, then one that hangs until its 60 s deadline, then another quick one.
    static let hangingSuite = """
    name: hanging
    runs:
      - scenario: noop
        strategies: [main]
      - scenario: crash
        parameters: {kind: hang}
        strategies: [main]
        timeout: 60s
        expect: timedOut
      - scenario: noop
        strategies: [gcd-serial]
    """

    func writeSuite(_ yaml: String, in folder: String) throws -> String {
        let path = (folder as NSString).appendingPathComponent("suite.yaml")
        try yaml.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    /// Starts the hanging suite and waits until its hanging child runs; returns the runner and that child.
    func startHanging(in folder: String, out: String = "out") async throws -> (BackgroundStrain, Int32) {
        _ = try writeSuite(Self.hangingSuite, in: folder)
        let runner = try BackgroundStrain(["run", "suite.yaml", "--out", out], in: folder)
        #expect(await runner.waitForOutput("[1/3]"), "the first trial finished")
        let children = await runner.children()
        #expect(children.count == 1)
        return (runner, children.first ?? -1)
    }

    @Test(arguments: [(SIGINT, Int32(130)), (SIGTERM, Int32(143))])
    func aStopSignalKillsTheTrialsProcessGroupKeepsFinishedTrialsAndWritesAnInterruptedRun(signal: Int32, code: Int32) async throws {
        let folder = try temporaryFolder()
        let (runner, child) = try await startHanging(in: folder)
        runner.signal(signal)
        let result = await runner.finish(timeout: 20)
        #expect(result.status == code, "\(result.stderr)")
        #expect(await Processes.waitUntilGone(child), "the in-flight child died with the run")
        #expect(Processes.members(ofGroup: child).isEmpty, "nothing of its process group lives on")
        let record = try RunRecordFile.read(from: (folder as NSString).appendingPathComponent("out/run.json"))
        #expect(record.interrupted == true)
        #expect(record.trials.map(\.id.description) == ["noop main linux #1"], "the finished trial is kept, the killed one is not recorded")
        for report in ["report.html", "summary.md", "junit.xml"] {
            #expect(FileManager.default.fileExists(atPath: (folder as NSString).appendingPathComponent("out/\(report)")))
        }
        #expect(result.stderr.contains("strain run --resume out"), "\(result.stderr)")
        #expect(result.stdout.contains("interrupted after 1 of 3 planned trials"), "the summary says the run stopped short: \(result.stdout)")
        let summary = try String(contentsOfFile: (folder as NSString).appendingPathComponent("out/summary.md"), encoding: .utf8)
        #expect(summary.contains("interrupted after 1 of 3 planned trials"))
    }

    /// A CI log takes output and errors into one file: the stop notice on standard
    /// error comes after the report written before it, on a line of its own.
    @Test func aStopNoticeFollowsTheReportOnALineOfItsOwnWhenOutputAndErrorsShareOneFile() async throws {
        let folder = try temporaryFolder()
        _ = try writeSuite(Self.hangingSuite, in: folder)
        let runner = try BackgroundStrain(["run", "suite.yaml", "--out", "out"], in: folder, shellPrefix: "exec 2>&1")
        #expect(await runner.waitForOutput("[1/3]"), "the first trial finished")
        runner.signal(SIGINT)
        let result = await runner.finish(timeout: 20)
        #expect(result.status == 130, "\(result.stdout)")
        let lines = result.stdout.split(separator: "\n", omittingEmptySubsequences: false)
        let notice = lines.firstIndex { $0.hasPrefix("strain: stopped by SIGINT") }
        let summary = lines.firstIndex { $0.contains("interrupted after 1 of 3 planned trials") }
        #expect(notice != nil, "the notice starts a line: \(result.stdout)")
        #expect(lines.filter { $0.contains("strain: stopped by") }.count == 1, "\(result.stdout)")
        if let notice, let summary { #expect(notice > summary, "the notice follows the report: \(result.stdout)") }
    }

    @Test func aChildDiesWithItsRunnerEvenWhenTheRunnerIsKilledWithSigkill() async throws {
        let folder = try temporaryFolder()
        let (runner, child) = try await startHanging(in: folder)
        runner.signal(SIGKILL)
        _ = await runner.finish(timeout: 10)
        #expect(await Processes.waitUntilGone(child, seconds: 5), "the parent-death signal ended the child")
        #expect(Processes.members(ofGroup: child).isEmpty)
    }

    @Test func aTrialsGrandchildrenDieWithItWhenTheRunnerIsKilledWithSigkill() async throws {
        let folder = try temporaryFolder()
        _ = try writeSuite("name: g\nruns:\n  - scenario: fault\n    parameters: {kind: grandchild-then-hang}\n    strategies: [main]\n    timeout: 60s\n", in: folder)
        let runner = try BackgroundStrain(["run", "suite.yaml", "--out", "out"], in: folder)
        // The trial's `/bin/sleep 600`, found among the runner's descendants by its command
        // line, and the trial as its parent, up to 20 s: not as the first child the runner
        // shows (in a CI run under load, the first child's own task listed no child for 20 s).
        let runnerPID = runner.pid
        let found = await OffPool.run("grandchild") { () -> (trial: Int32, grandchild: Int32)? in
            let giveUp = Date().addingTimeInterval(20)
            repeat {
                for pid in Processes.descendants(of: runnerPID) where Processes.commandLine(of: pid) == ["/bin/sleep", "600"] {
                    if let parent = Processes.parent(of: pid), Processes.commandLine(of: parent).dropFirst().first == "_trial" {
                        return (parent, pid)
                    }
                }
                usleep(20_000) // off the pool: inside OffPool.run
            } while Date() < giveUp
            return nil
        }
        let (child, grandchild) = try #require(found, "the runner's processes: \(Processes.descendants(of: runnerPID).map { "\($0) \(Processes.commandLine(of: $0).prefix(2))" })")
        runner.signal(SIGKILL)
        _ = await runner.finish(timeout: 10)
        #expect(await Processes.waitUntilGone(child, seconds: 5))
        #expect(await Processes.waitUntilGone(grandchild, seconds: 5), "the parent-death handler killed the whole process group")
        #expect(Processes.members(ofGroup: child).isEmpty)
    }

    @Test func aResumedRunAfterSigkillRunsOnlyTheUnfinishedTrialsAndMatchesAnUninterruptedRun() async throws {
        let folder = try temporaryFolder()
        // Short deadlines so the resumed run ends quickly.
        let suite = Self.hangingSuite.replacingOccurrences(of: "timeout: 60s", with: "timeout: 1s")
        _ = try writeSuite(suite, in: folder)
        let runner = try BackgroundStrain(["run", "suite.yaml", "--out", "out"], in: folder)
        #expect(await runner.waitForOutput("[1/3]"))
        runner.signal(SIGKILL)
        _ = await runner.finish(timeout: 10)
        let journal = try String(contentsOfFile: (folder as NSString).appendingPathComponent("out/trials.jsonl"), encoding: .utf8)
        #expect(journal.split(separator: "\n").count == 2, "the header and one trial")

        let resumed = try await StrainBinary.run(["run", "--resume", (folder as NSString).appendingPathComponent("out")], timeout: 60)
        #expect(resumed.status == 0, "\(resumed.stdout)\n\(resumed.stderr)")
        #expect(resumed.stdout.contains("(1 finished before, resumed)"))
        let record = try RunRecordFile.read(from: (folder as NSString).appendingPathComponent("out/run.json"))
        let whole = try await StrainBinary.runSuite(suite).1
        #expect(record.trials.map(\.id) == whole?.trials.map(\.id), "the same trials, in plan order, each once")
        #expect(record.interrupted == nil)
        #expect(record.plan?.hash == whole?.plan?.hash)
        let lines = try String(contentsOfFile: (folder as NSString).appendingPathComponent("out/trials.jsonl"), encoding: .utf8).split(separator: "\n")
        #expect(lines.count == 4, "the header and three trials, none twice")
    }

    @Test func aJournalLineCutShortByAKillIsDroppedOnResumeAndTheTrialRunsAgain() async throws {
        let folder = try temporaryFolder()
        let suite = try writeSuite("name: s\nruns:\n  - scenario: noop\n    strategies: [main, gcd-serial]\n", in: folder)
        let out = (folder as NSString).appendingPathComponent("out")
        #expect(try await StrainBinary.run(["run", suite, "--out", out]).status == 0)
        let journalPath = (out as NSString).appendingPathComponent("trials.jsonl")
        let lines = try String(contentsOfFile: journalPath, encoding: .utf8).split(separator: "\n")
        #expect(lines.count == 3)
        // As if killed in the middle of writing the second trial's line.
        try (lines[0] + "\n" + lines[1] + "\n" + lines[2].prefix(40)).write(toFile: journalPath, atomically: true, encoding: .utf8)
        let resumed = try await StrainBinary.run(["run", "--resume", out])
        #expect(resumed.status == 0, "\(resumed.stderr)")
        #expect(resumed.stdout.contains("(1 finished before, resumed)"))
        let record = try RunRecordFile.read(from: (out as NSString).appendingPathComponent("run.json"))
        #expect(record.trials.map(\.id.description) == ["noop main linux #1", "noop gcd-serial linux #1"])
        let after = try String(contentsOfFile: journalPath, encoding: .utf8)
        #expect(after.split(separator: "\n").count == 3, "the torn line is gone and the trial's new line follows the last whole one")
        #expect(after.hasSuffix("\n"))
    }

    @Test func resumingWithAnotherPlanIsRefusedWithBothHashes() async throws {
        let folder = try temporaryFolder()
        let suite = try writeSuite("name: s\nruns:\n  - scenario: noop\n    strategies: [main, gcd-serial]\n", in: folder)
        let first = try await StrainBinary.run(["run", suite, "--out", (folder as NSString).appendingPathComponent("out")])
        #expect(first.status == 0)
        let other = try await StrainBinary.run(["run", suite, "--resume", (folder as NSString).appendingPathComponent("out"), "--filter", "strategy=main"])
        #expect(other.status == 2)
        #expect(other.stderr.contains("its journal belongs to another plan"), "\(other.stderr)")
    }

    @Test func aSecondRunnerOnAFolderInUseIsRefusedBeforeRunning() async throws {
        let folder = try temporaryFolder()
        let (runner, _) = try await startHanging(in: folder)
        let second = try await StrainBinary.run(["run", (folder as NSString).appendingPathComponent("suite.yaml"), "--out", (folder as NSString).appendingPathComponent("out"), "--force"], timeout: 20)
        runner.signal(SIGTERM)
        _ = await runner.finish(timeout: 20)
        #expect(second.status == 2)
        #expect(second.stderr.contains("another strain run (pid \(runner.pid)) is writing into this folder"), "\(second.stderr)")
        #expect(!second.stdout.contains("Running"))
    }

    @Test func aFolderHoldingAnotherRunIsRefusedUnlessForced() async throws {
        let folder = try temporaryFolder()
        let suite = try writeSuite("name: s\nruns:\n  - scenario: noop\n    strategies: [main]\n", in: folder)
        let out = (folder as NSString).appendingPathComponent("out")
        #expect(try await StrainBinary.run(["run", suite, "--out", out]).status == 0)
        let again = try await StrainBinary.run(["run", suite, "--out", out])
        #expect(again.status == 2)
        #expect(again.stderr == "error: \(out): holds another run (trials.jsonl); continue it with --resume \(out), replace it with --force, or give another --out\n")
        let forced = try await StrainBinary.run(["run", suite, "--out", out, "--force"])
        #expect(forced.status == 0)
        let journal = try String(contentsOfFile: (out as NSString).appendingPathComponent("trials.jsonl"), encoding: .utf8)
        #expect(journal.split(separator: "\n").count == 2, "a forced run starts a new journal, not appended to the old one")
    }

    @Test func unusableOutFoldersAreInputErrorsBeforeAnythingRuns() async throws {
        let folder = try temporaryFolder()
        let suite = try writeSuite("name: s\nruns:\n  - scenario: noop\n    strategies: [main]\n", in: folder)
        let file = (folder as NSString).appendingPathComponent("a-file")
        _ = FileManager.default.createFile(atPath: file, contents: Data("x".utf8))
        let cases: [(String, String)] = [
            ("-", "error: -: `-` names standard output, but a run writes a folder of files; give a folder, e.g. --out Reports/mine\n"),
            (file, "error: \(file): exists and is not a folder; give a folder for run.json, trials.jsonl and the reports\n"),
            ("/proc/strain-cannot-be-here", "error: /proc/strain-cannot-be-here: cannot create the folder (No such file or directory); give a folder you can write to\n"),
        ]
        for (out, message) in cases {
            let result = try await StrainBinary.run(["run", suite, "--out", out], timeout: 20)
            #expect(result.status == 2, "\(out)")
            #expect(result.stderr == message)
            #expect(!result.stdout.contains("Running"))
        }
        #expect(!FileManager.default.fileExists(atPath: (folder as NSString).appendingPathComponent("-")))
    }

    @Test func aClosedStdoutNeverKillsTheRun() async throws {
        let folder = try temporaryFolder()
        let suite = try writeSuite("name: s\nrepetitions: 20\nruns:\n  - scenario: noop\n    strategies: [main]\n", in: folder)
        // `head -1` closes the pipe after the first line; bash's PIPESTATUS gives strain's own status.
        let ended = try await BoundedProcess.run("/bin/bash", ["-c", "'\(StrainBinary.path)' run '\(suite)' --out '\(folder)/out' | head -1 >/dev/null; exit ${PIPESTATUS[0]}"],
                                           timeout: 120)
        #expect(!ended.signaled && ended.status == 0, "strain ended with \(ended.signaled ? "signal" : "status") \(ended.status) after its stdout closed: \(ended.stderr)")
        let record = try RunRecordFile.read(from: (folder as NSString).appendingPathComponent("out/run.json"))
        #expect(record.trials.count == 20, "every trial ran and run.json was written after stdout closed")
        #expect(record.trials.allSatisfy { $0.outcome.kind == .completed })
    }

    @Test func aSuiteNameCannotWriteOutsideReportsAndEscapeCodesNeverReachTheTerminal() async throws {
        #expect(SuiteLimits.safeFileName("../../x") == "x")
        #expect(SuiteLimits.safeFileName("a/b\u{1B}[2Jc") == "a-b-2Jc")
        #expect(SuiteLimits.safeFileName("...") == "suite")
        let folder = try temporaryFolder()
        let suite = try writeSuite("name: \"\\e[31mred\"\nruns:\n  - scenario: \"nop\\e[2J\"\n    strategies: [main]\n", in: folder)
        let result = try await StrainBinary.run(["run", suite])
        #expect(result.status == 2)
        #expect(!result.stderr.contains("\u{1B}"), "\(result.stderr)")
        #expect(result.stderr.contains("unknown scenario 'nop\\u{1b}[2J'"))
    }

    @Test func aHostileColumnsValueDoesNotCrashTheProgressLine() async throws {
        let folder = try temporaryFolder()
        let suite = try writeSuite("name: s\nruns:\n  - scenario: noop\n    strategies: [main, gcd-global, thread(512KiB)]\n", in: folder)
        // Under a terminal that reports no size, so the interactive progress line is
        // drawn and sized by COLUMNS, clamped to 20…1,000 (a line is kept one column short).
        for (columns, width) in [("-9223372036854775808", 20), ("9223372036854775807", 1000), ("abc", 80), ("7", 20)] {
            let result = try await StrainBinary.runInTerminal(["run", suite, "--out", (folder as NSString).appendingPathComponent("out-\(columns)")],
                                                       environment: ["COLUMNS": columns])
            #expect(result.status == 0, "COLUMNS=\(columns): \(result.stdout)")
            // Each redraw erases the line (CR, ESC [2K) and draws the progress line again.
            // (The terminal turns each newline into CR LF; Swift reads CR LF as one character.)
            let drawn = result.stdout.replacingOccurrences(of: "\r\n", with: "\n")
            let redraws = drawn.components(separatedBy: "\r\u{1B}[2K").dropFirst()
                .map { $0.components(separatedBy: "\r")[0].components(separatedBy: "\n")[0] }
            let progress = redraws.filter { $0.hasPrefix("[") && $0.contains("/3") }
            #expect(progress.count == 3, "COLUMNS=\(columns): a progress line after each of the 3 trials: \(result.stdout.debugDescription)")
            #expect(progress.allSatisfy { $0.count <= width - 1 }, "COLUMNS=\(columns): each line fits \(width) columns: \(progress)")
            #expect(progress.contains { $0.hasPrefix("[") && $0.contains("] 1/3") }, "\(progress)")
        }
    }

    @Test func aPlanOverTheLimitIsRefusedBeforeItIsBuilt() async throws {
        let folder = try temporaryFolder()
        let sizes = (1...600).map(String.init).joined(separator: ", ")
        let players = (0...100).map(String.init).joined(separator: ", ")
        let suite = try writeSuite("name: s\nrepetitions: 10000\nruns:\n  - scenario: cyclic-graph\n    parameters: {size: [\(sizes)], players: [\(players)]}\n    strategies: [main]\n", in: folder)
        // Building 606 M trials would take minutes and gigabytes: the 30 s bound fails a
        // plan built before it is refused, and the message proves the count came first.
        let result = try await StrainBinary.run(["run", suite, "--list"], timeout: 30)
        #expect(result.status == 2)
        #expect(result.stderr == "\(suite):4:5: error: the plan has 606000000 trials (parameter values × profiles × repetitions × strategies, summed over the runs), past the limit of 100000 from this run on; sweep fewer values, or split the suite\n")
        let repetitions = try await StrainBinary.run(["run", suite, "--repetitions", "9223372036854775807"])
        #expect(repetitions.status == 2)
        #expect(repetitions.stderr.contains("--repetitions 9223372036854775807 is out of range; give a whole number from 1 to 10000"))
    }

    @Test func outsideStrainsRepositoryASuitesMistakePointsAtStrainExplainNotAFileThatIsNotThere() async throws {
        // A package's own strain runs in the package's folder, which has no Scenarios/README.md.
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let result = try await BoundedProcess.run(StrainBinary.path, ["run", folder, "--list"], directory: folder, timeout: 30)
        #expect(result.status == 2)
        #expect(result.stderr == "\(folder): error: is a folder, not a file; give the path of a .yaml suite (`strain explain SCENARIO` prints one to start from) inside it\n",
                "\(result.stderr)")
    }

    @Test func specialFilesAsSuitesGetTheirOwnMessages() async throws {
        let folder = try temporaryFolder()
        let fifo = (folder as NSString).appendingPathComponent("fifo.yaml")
        mkfifo(fifo, 0o644)
        let cases: [(String, String)] = [
            (folder, "\(folder): error: is a folder, not a file; give the path of a .yaml suite (see Scenarios/README.md) inside it\n"),
            (fifo, "\(fifo): error: is a FIFO (named pipe), not a file; Strain reads a .yaml suite (see Scenarios/README.md) from a regular file\n"),
            ("/dev/null", "/dev/null: error: is a device, not a file; give the path of a .yaml suite (see Scenarios/README.md)\n"),
        ]
        for (path, message) in cases {
            let result = try await StrainBinary.run(["run", path, "--list"], timeout: 10)
            #expect(result.status == 2)
            #expect(result.stderr == message)
        }
    }
}

/// `strain report` on stored runs: never over its input, atomic, errors with their kind.
@Suite(.serialized, .timeLimit(.minutes(10))) struct ReportCommandSafetyTests {
    func storedRun() async throws -> (folder: String, runJSON: String) {
        let (result, _, out) = try await StrainBinary.runSuite("name: s\nruns:\n  - scenario: noop\n    strategies: [main]\n")
        #expect(result.status == 0)
        return (out, (out as NSString).appendingPathComponent("run.json"))
    }

    @Test func reportNeverWritesOverTheRunJSONItReads() async throws {
        let (folder, runJSON) = try await storedRun()
        let before = try Data(contentsOf: URL(fileURLWithPath: runJSON))
        let same = try await StrainBinary.run(["report", runJSON, "--out", runJSON])
        #expect(same.status == 2)
        #expect(same.stderr == "error: \(runJSON) is the run.json being read; `strain report` never writes over its input: give another --out, or --out - for standard output\n")
        let viaLink = (folder as NSString).appendingPathComponent("link.json")
        try FileManager.default.createSymbolicLink(atPath: viaLink, withDestinationPath: runJSON)
        #expect(try await StrainBinary.run(["report", runJSON, "--out", viaLink, "--format", "md"]).status == 2, "also through a link")
        let json = try await StrainBinary.run(["report", runJSON, "--format", "json"])
        #expect(json.status == 0)
        #expect(json.stdout == "Wrote \((folder as NSString).appendingPathComponent("run.normalized.json"))\n")
        #expect(try Data(contentsOf: URL(fileURLWithPath: runJSON)) == before, "run.json untouched")
    }

    /// `--out` names a folder for `run`, `bisect` and `gate`: given one, `report` writes in
    /// it under the format's usual name (a newcomer's `--out exec1r` folder got a file).
    @Test func reportLeavesNoTemporaryFilesAndWritesIntoAFolderItIsGiven() async throws {
        let (folder, runJSON) = try await storedRun()
        let result = try await StrainBinary.run(["report", runJSON, "--format", "md", "--out", (folder as NSString).appendingPathComponent("again.md")])
        #expect(result.status == 0)
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: folder).filter { $0.hasSuffix(".tmp") }
        #expect(leftovers.isEmpty)
        let into = (folder as NSString).appendingPathComponent("html")
        try FileManager.default.createDirectory(atPath: into, withIntermediateDirectories: false)
        let toFolder = try await StrainBinary.run(["report", runJSON, "--out", into])
        #expect(toFolder.status == 0, "\(toFolder.stderr)")
        #expect(toFolder.stdout == "Wrote \(into)/report.html\n")
        #expect(FileManager.default.fileExists(atPath: into + "/report.html"))
        // A path that ends in `/` is a folder too, made if need be: the CSV under its name.
        let csv = try await StrainBinary.run(["report", runJSON, "--format", "csv", "--out", folder + "/csv/"])
        #expect(csv.status == 0, "\(csv.stderr)")
        #expect(FileManager.default.fileExists(atPath: folder + "/csv/metrics.csv"), "\(csv.stdout)")
        // A folder where the file would go is still refused.
        try FileManager.default.createDirectory(atPath: into + "/summary.md", withIntermediateDirectories: false)
        let blocked = try await StrainBinary.run(["report", runJSON, "--format", "md", "--out", into])
        #expect(blocked.status == 2)
        #expect(blocked.stderr.hasPrefix("error: \(into)/summary.md is a folder; give another --out for the report"), "\(blocked.stderr)")
    }

    @Test func unreadableRunsAreInputErrorsThatSayWhy() async throws {
        let folder = try temporaryFolder()
        func write(_ name: String, _ text: String) throws -> String {
            let path = (folder as NSString).appendingPathComponent(name)
            try text.write(toFile: path, atomically: true, encoding: .utf8)
            return path
        }
        let notJSON = try write("a.json", "{not json")
        let noVersion = try write("b.json", "{\"trials\": []}")
        let future = try write("c.json", "{\"schemaVersion\": 99}")
        let outOfRange = try write("d.json", "{\"schemaVersion\": 1e400}")
        let cases: [(String, String)] = [
            (notJSON, "error: \(notJSON): is not valid JSON (Invalid value around character 1); give a run.json that `strain run` wrote\n"),
            (noVersion, "error: \(noVersion): is JSON but has no `schemaVersion`, so it is not a run.json\n"),
            (future, "error: \(future): run.json schema version 99 is not supported; this Strain reads versions \(RunRecord.supportedSchemaVersions.lowerBound) to \(RunRecord.supportedSchemaVersions.upperBound)\n"),
            (folder, "error: \(folder): is a folder, not a file; give the path of a run.json that `strain run` wrote inside it\n"),
            ("/nonexistent/run.json", "error: /nonexistent/run.json: no such file; give the path of a run.json that `strain run` wrote\n"),
        ]
        for (path, message) in cases {
            let result = try await StrainBinary.run(["report", path])
            #expect(result.status == 2, "\(path)")
            #expect(result.stderr == message)
        }
        let range = try await StrainBinary.run(["report", outOfRange])
        #expect(range.status == 2)
        #expect(range.stderr == "error: \(outOfRange): is JSON with a number out of range (Number 1e400 is not representable); give a run.json that `strain run` wrote\n")
    }

    @Test func hugeMetricValuesRenderInsteadOfTrapping() async throws {
        let fixture = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures/run.json")
        let text = try String(contentsOf: fixture, encoding: .utf8)
        let hostile = text.replacing(#/"workers at the start" : [0-9.]+/#, with: "\"workers at the start\" : 1e300")
        #expect(hostile != text)
        let folder = try temporaryFolder()
        let path = (folder as NSString).appendingPathComponent("run.json")
        try hostile.write(toFile: path, atomically: true, encoding: .utf8)
        for format in ["html", "md", "junit"] {
            let result = try await StrainBinary.run(["report", path, "--format", format, "--out", "-"])
            #expect(result.status == 0, "\(format): \(result.stderr)")
            switch format {
            case "md":
                // Rendered as the number it is in the guard table (summary.md leaves the scenarios'
                // metric tables to report.html, checked below).
                #expect(result.stdout.contains(" | 1e+300/4 | "), "the guard table's together column")
            case "html": #expect(result.stdout.contains("1e+300"))
            default: #expect(result.stdout.hasPrefix("<?xml"))
            }
        }
    }

    @Test func everyMistakeOfASuiteIsReportedInOneRunBeforeAnyChildStarts() async throws {
        let folder = try temporaryFolder()
        let suite = (folder as NSString).appendingPathComponent("four.yaml")
        try "name: s\ntimeout: 1e300s\nstall: infinity\nruns:\n  - scenario: nop\n    strategies: [gcd-globl, thread(1025KiB), \"thread-pool(4096, 16KiB)\"]\n    repetitions: 9223372036854775807\n".write(toFile: suite, atomically: true, encoding: .utf8)
        let result = try await StrainBinary.run(["run", suite, "--out", (folder as NSString).appendingPathComponent("out")])
        #expect(result.status == 2)
        #expect(result.stdout.isEmpty, "nothing ran, not even the Running line")
        #expect(result.stderr == """
        \(suite):2:10: error: timeout '1e300s' is out of range; write a duration from 10ms to 24h
        \(suite):3:8: error: 'infinity' is not a valid value for stall; write a duration from 100ms to 24h, such as 500ms, 60s or 5m
        \(suite):5:15: error: unknown scenario 'nop' (did you mean 'noop'?); valid scenarios: \(ScenarioCatalog.builtIn.names.joined(separator: ", "))
        \(suite):6:18: error: unknown strategy 'gcd-globl' (did you mean 'gcd-global'?); valid strategies: \(MalformedSuite.strategies)
        \(suite):6:29: error: the stack size in 'thread(1025KiB)' is not a whole number of 4KiB pages; did you mean thread(1028KiB)?
        \(suite):6:46: error: stack size 16KiB in 'thread-pool(4096, 16KiB)' is under 32KiB, too small for Swift's runtime to start work on (Foundation ignores a stack under 16KiB); use 32KiB or more
        \(suite):7:18: error: '9223372036854775807' is not a valid value for repetitions; write a whole number from 1 to 10000

        """)
        #expect(!FileManager.default.fileExists(atPath: (folder as NSString).appendingPathComponent("out")), "no output folder was made")
    }
}
