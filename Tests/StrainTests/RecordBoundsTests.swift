import Foundation
import StrainKit
import Testing

/// run.json files valid in shape and extreme in value, read by `strain report`
/// and `strain merge` through the built binary under a memory cap and a time
/// bound: each is refused with its file, its field's path and the range (exit 2),
/// or rendered; none traps, loops or allocates without limit.
@Suite struct RecordBoundsTests {
    static let fixture = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures/run.json").path

    /// `strain ARGUMENTS` under `ulimit -v` (KiB), killed past `timeout` seconds.
    static func bounded(_ arguments: [String], timeout: Double = 60, memoryKiB: Int = 2_000_000) async throws -> StrainBinary.Result {
        let ended = try await BoundedProcess.run("/bin/sh", ["-c", "ulimit -v \(memoryKiB) && exec \"$0\" \"$@\"", StrainBinary.path] + arguments,
                                                 timeout: timeout)
        return StrainBinary.Result(status: ended.signaled ? 128 + ended.status : ended.status, stdout: ended.stdout, stderr: ended.stderr)
    }

    /// The fixture run.json with `change` applied to its JSON object, written to a new folder.
    static func record(_ change: (inout [String: Any]) -> Void) throws -> String {
        let data = try Data(contentsOf: URL(fileURLWithPath: fixture))
        var object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        change(&object)
        let path = (try temporaryFolder() as NSString).appendingPathComponent("run.json")
        try JSONSerialization.data(withJSONObject: object).write(to: URL(fileURLWithPath: path))
        return path
    }

    /// Changes the first trial's trace (the fixture's first trial is a stack overflow with a cycle).
    static func trace(_ change: @escaping (inout [String: Any]) -> Void) -> (inout [String: Any]) -> Void {
        { object in
            var trials = object["trials"] as! [[String: Any]]
            var trace = trials[0]["trace"] as! [String: Any]
            change(&trace)
            trials[0]["trace"] = trace
            object["trials"] = trials
        }
    }

    static func cycle(_ change: @escaping (inout [String: Any]) -> Void) -> (inout [String: Any]) -> Void {
        trace { trace in
            var cycle = trace["cycle"] as! [String: Any]
            change(&cycle)
            trace["cycle"] = cycle
        }
    }

    /// Out-of-range trace fields, each of which trapped `strain report` (HTML and
    /// Markdown), with the field the refusal must name.
    static var outOfRange: [(name: String, field: String, change: (inout [String: Any]) -> Void)] { [
        ("swapped stack bounds", "trials[0].trace.stackHigh", trace { trace in
            let low = trace["stackLow"]!
            trace["stackLow"] = trace["stackHigh"]!
            trace["stackHigh"] = low
        }),
        ("a stack low of 2^63", "trials[0].trace.stackLow", trace { trace in
            trace["faultAddress"] = 0
            trace["stackLow"] = UInt64(1) << 63
            trace["stackHigh"] = (UInt64(1) << 63) + (8 << 20)
        }),
        ("the last frames' index at Int.max", "trials[0].trace.lastFramesStartIndex", trace { $0["lastFramesStartIndex"] = Int.max }),
        ("a cycle starting at Int.min", "trials[0].trace.cycle.startIndex", cycle { $0["startIndex"] = Int.min }),
        ("a cycle whose repetitions × frames overflows", "trials[0].trace.cycle.repetitions", cycle { cycle in
            cycle["repetitions"] = 1 << 62
            cycle["endIndex"] = nil
        }),
    ] }

    @Test(arguments: ["html", "md"], 0..<outOfRange.count)
    func anOutOfRangeTraceFieldIsRefusedWithItsFieldPathNotTrappedOn(format: String, index: Int) async throws {
        let (name, field, change) = Self.outOfRange[index]
        let path = try Self.record(change)
        let result = try await Self.bounded(["report", path, "--format", format, "--out", "-"])
        #expect(result.status == 2, "\(name): \(result.stderr)")
        #expect(result.stderr.contains("\(path): has a number out of range: \(field) is "), "\(name): \(result.stderr)")
        #expect(result.stderr.contains("a valid value is"), "\(name): \(result.stderr)")
        #expect(result.stdout.isEmpty)
    }

    @Test func aNegativeMetricIsRefusedByEveryFormatWithItsFieldPath() async throws {
        let path = try Self.record { object in
            var trials = object["trials"] as! [[String: Any]]
            var metrics = trials[3]["metrics"] as! [String: Any]
            metrics["wallSeconds"] = -1.5
            trials[3]["metrics"] = metrics
            object["trials"] = trials
        }
        for format in ["html", "md", "junit"] {
            let result = try await Self.bounded(["report", path, "--format", format, "--out", "-"])
            #expect(result.status == 2, "\(format): \(result.stderr)")
            #expect(result.stderr.contains("trials[3].metrics.wallSeconds is -1.5; a valid value is a finite number from 0"), "\(format): \(result.stderr)")
        }
    }

    @Test func theGateRefusesAnOutOfRangeBaselineOrCandidateWithItsFieldPath() async throws {
        let bad = try Self.record { object in
            var trials = object["trials"] as! [[String: Any]]
            var metrics = trials[3]["metrics"] as! [String: Any]
            metrics["wallSeconds"] = -1.5
            trials[3]["metrics"] = metrics
            object["trials"] = trials
        }
        let out = try temporaryFolder()
        for arguments in [[Self.fixture, "--baseline", bad], [bad, "--baseline", Self.fixture]] {
            let result = try await Self.bounded(["gate"] + arguments + ["--out", out])
            #expect(result.status == 2, "\(arguments): \(result.stderr)")
            #expect(result.stderr.contains("\(bad): has a number out of range: trials[3].metrics.wallSeconds is -1.5; a valid value is a finite number from 0"), "\(result.stderr)")
        }
    }

    @Test func aSavedBaselineWithAnOutOfRangeNumberIsRefusedWithItsFieldPath() async throws {
        let committed = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Reports/baselines/smoke.json")
        var baseline = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: committed)) as? [String: Any])
        var run = baseline["run"] as! [String: Any]
        var trials = run["trials"] as! [[String: Any]]
        var metrics = trials[0]["metrics"] as! [String: Any]
        metrics["wallSeconds"] = -1.0
        trials[0]["metrics"] = metrics
        run["trials"] = trials
        baseline["run"] = run
        let folder = try temporaryFolder()
        let path = (folder as NSString).appendingPathComponent("baseline.json")
        try JSONSerialization.data(withJSONObject: baseline).write(to: URL(fileURLWithPath: path))
        let result = try await Self.bounded(["gate", Self.fixture, "--baseline", path, "--out", folder])
        #expect(result.status == 2, "\(result.stderr)")
        #expect(result.stderr.contains("\(path): has a number out of range: run.trials[0].metrics.wallSeconds is -1.0; a valid value is a finite number from 0"), "\(result.stderr)")
    }

    /// A bisect's answer without its passing value trapped on a force unwrap; a
    /// slope of 1e300 bytes per unit trapped converting to `Int`.
    @Test(arguments: ["passing", "slope"])
    func aBisectAnswerMissingItsValueOrWithAHugeSlopeIsRefused(field: String) async throws {
        let fixture = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures/bisect-run.json")
        var object = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: fixture)) as? [String: Any])
        var bisect = object["bisect"] as! [String: Any]
        var searches = bisect["searches"] as! [[String: Any]]
        if field == "passing" {
            searches[0]["passing"] = nil
        } else {
            bisect["slope"] = ["parameter": "size", "points": [] as [Any], "bytesPerUnit": 1e300, "interceptBytes": 0, "capacities": [] as [Any]]
        }
        bisect["searches"] = searches
        object["bisect"] = bisect
        let path = (try temporaryFolder() as NSString).appendingPathComponent("run.json")
        try JSONSerialization.data(withJSONObject: object).write(to: URL(fileURLWithPath: path))
        for format in ["html", "md"] {
            let result = try await Self.bounded(["report", path, "--format", format, "--out", "-"])
            #expect(result.status == 2, "\(format): \(result.stderr)")
            #expect(result.stderr.contains(field == "passing"
                ? "bisect.searches[0].passing is absent; a valid value is a whole number when the verdict is boundary"
                : "bisect.slope.bytesPerUnit is 1e+300; a valid value is a number from -9007199254740992 to 9007199254740992"), "\(format): \(result.stderr)")
        }
    }

    @Test(arguments: [0, -1, 2_000_000_000])
    func aShardCountOutOfRangeIsRefusedByMergeWithoutAllocating(count: Int) async throws {
        let path = try Self.record { object in
            var plan = object["plan"] as! [String: Any]
            plan["shard"] = ["index": 1, "count": count]
            object["plan"] = plan
        }
        let out = (try temporaryFolder() as NSString).appendingPathComponent("merged")
        let result = try await Self.bounded(["merge", path, "--out", out])
        #expect(result.status == 2, "\(result.stderr)")
        #expect(result.stderr.contains("has a number out of range: plan.shard.count is \(count); a valid value is a whole number from 1 to 1000"), "\(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: out), "nothing is written for a refused shard")
    }

    @Test func denormalMetricsAndTimesRenderAsHTMLInsteadOfLoopingForever() async throws {
        let path = try Self.record { object in
            var trials = object["trials"] as! [[String: Any]]
            for index in trials.indices {
                var metrics = trials[index]["metrics"] as! [String: Any]
                for key in ["wallSeconds", "userSeconds", "systemSeconds", "trialSeconds", "throughputPerSecond"] { metrics[key] = Double.leastNonzeroMagnitude }
                trials[index]["metrics"] = metrics
                if let timeline = trials[index]["threadTimeline"] as? [[String: Any]] {
                    trials[index]["threadTimeline"] = timeline.map { sample in sample.merging(["seconds": Double.leastNonzeroMagnitude]) { $1 } }
                }
            }
            object["trials"] = trials
        }
        let result = try await Self.bounded(["report", path, "--format", "html", "--out", "-"], timeout: 60)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.hasSuffix("</html>\n"), "the whole page was written")
        #expect(!result.stdout.contains("nan") && !result.stdout.contains("inf\""), "no coordinate is NaN or infinite")
    }

    /// A run.json of at least 100 MB: the fixture's 20 trials (traces, dumps,
    /// timelines, latency curves) repeated, each repetition numbered, written a
    /// trial at a time.
    static func largeRecord(megabytes: Int = 100) throws -> String {
        let data = try Data(contentsOf: URL(fileURLWithPath: fixture))
        var object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let trials = try #require(object["trials"] as? [[String: Any]])
        let trialBytes = try JSONSerialization.data(withJSONObject: trials, options: [.prettyPrinted]).count
        // Each trial written alone is indented less than inside the array: 10 % more.
        let repetitions = megabytes * 1_100_000 / trialBytes + 1
        let highestRepetition = trials.compactMap { $0["repetition"] as? Int }.max() ?? 1
        var suite = try #require(object["suite"] as? [String: Any])
        suite["repetitions"] = repetitions * highestRepetition
        suite["runs"] = (suite["runs"] as? [[String: Any]] ?? []).map { $0.merging(["repetitions": repetitions * highestRepetition]) { $1 } }
        object["suite"] = suite
        var plan = try #require(object["plan"] as? [String: Any])
        plan["trialCount"] = repetitions * trials.count
        object["plan"] = plan
        object["trials"] = ["TRIALS"]
        let frame = String(decoding: try JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted]), as: UTF8.self)
            .components(separatedBy: "\"TRIALS\"")
        try #require(frame.count == 2)
        let path = (try temporaryFolder() as NSString).appendingPathComponent("run.json")
        _ = FileManager.default.createFile(atPath: path, contents: nil)
        let file = try #require(FileHandle(forWritingAtPath: path))
        defer { try? file.close() }
        try file.write(contentsOf: Data(frame[0].utf8))
        var index = 0
        for repetition in 1...repetitions {
            for var trial in trials {
                // Each copy's repetitions after the last copy's (one trial, one ID), the keys as they are.
                trial["repetition"] = (repetition - 1) * highestRepetition + (trial["repetition"] as? Int ?? 1)
                trial["index"] = index
                if index > 0 { try file.write(contentsOf: Data(",\n".utf8)) }
                try file.write(contentsOf: JSONSerialization.data(withJSONObject: trial, options: [.prettyPrinted]))
                index += 1
            }
        }
        try file.write(contentsOf: Data(frame[1].utf8))
        return path
    }

    /// The Limits article (StrainCLI.docc) states the peak for this case; 1 GB of address space (`ulimit
    /// -v`) is the goal's bound. The old reader, which parsed the file three
    /// times (JSONSerialization, the version, the record), died at this bound.
    @Test(.timeLimit(.minutes(10))) func aHundredMegabyteRunRendersAsHTMLWithinOneGigabyte() async throws {
        let path = try Self.largeRecord()
        let size = try #require(try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int)
        #expect(size >= 100_000_000)
        let out = (path as NSString).deletingLastPathComponent + "/report.html"
        let result = try await Self.bounded(["report", path, "--format", "html", "--out", out], timeout: 240, memoryKiB: 1_000_000)
        #expect(result.status == 0, "\(result.stderr.suffix(500))")
        #expect(FileManager.default.fileExists(atPath: out))
        try? FileManager.default.removeItem(atPath: path)
    }

    @Test func theFixtureStillRendersInEveryFormat() async throws {
        for format in ["html", "md", "junit"] {
            let result = try await Self.bounded(["report", Self.fixture, "--format", format, "--out", "-"])
            #expect(result.status == 0, "\(format): \(result.stderr)")
        }
    }
}

/// SIGQUIT (Ctrl-\) to a running `strain run`.
@Suite(.serialized) struct RunnerQuitSignalTests {
    @Test func sigquitStopsARunCleanlyAsSigtermDoesKeepingFinishedTrials() async throws {
        let folder = try temporaryFolder()
        try """
        name: hanging
        runs:
          - scenario: noop
            strategies: [main]
          - scenario: crash
            parameters: {kind: hang}
            strategies: [main]
            timeout: 60s
            expect: timedOut
        """.write(toFile: (folder as NSString).appendingPathComponent("suite.yaml"), atomically: true, encoding: .utf8)
        let runner = try BackgroundStrain(["run", "suite.yaml", "--out", "out"], in: folder)
        let child = await runner.whenOutput("[1/2]") { runner in
            let child = runner.childrenWaiting(within: 20).first ?? -1
            runner.signal(SIGQUIT)
            return child
        }
        #expect(child != nil, "the first trial finished")
        let result = await runner.finish(timeout: 20)
        #expect(result.status == 131, "\(result.stderr)")
        #expect(!result.stderr.contains("Program crashed"), "\(result.stderr)")
        #expect(result.stderr.contains("strain: stopped by SIGQUIT after 1 of 2 trials"), "\(result.stderr)")
        #expect(await Processes.waitUntilGone(child ?? -1), "the in-flight child died with the run")
        let record = try RunRecordFile.read(from: (folder as NSString).appendingPathComponent("out/run.json"))
        #expect(record.interrupted == true)
        #expect(record.trials.map(\.id.description) == ["noop main linux #1"])
    }
}
