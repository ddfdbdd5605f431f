import Foundation
import StrainKit
import StrainRunner
import Testing

/// Input that is valid in shape and extreme in size or value, through the built
/// binary under a memory cap (`ulimit -v`) and a CPU-time cap (`ulimit -t`), so a
/// regression fails fast with a clear status instead of eating the machine or
/// hanging CI. Each case is refused with exit 2, the file and the place, and no
/// trial starts.
@Suite(.timeLimit(.minutes(10)))
struct BoundedSuiteTests {
    /// Address space for one `strain run --list`: the runtime, Foundation and
    /// libdispatch reserve a few hundred MiB of it before any work.
    static let memoryCapKiB = 1_500_000
    /// CPU seconds: parsing the largest suite the limits allow takes about 2 s here.
    static let cpuCapSeconds = 60

    /// Runs `strain ARGUMENTS` in `folder` under the caps; past `timeout` seconds it is killed (a hang).
    static func strain(_ arguments: [String], in folder: String, timeout: Double = 120) async throws -> StrainBinary.Result {
        let runner = try BackgroundStrain(arguments, in: folder, shellPrefix: "ulimit -v \(memoryCapKiB); ulimit -t \(cpuCapSeconds)")
        return await runner.finish(timeout: timeout)
    }

    static func write(_ text: String, to name: String, in folder: String) throws -> String {
        let path = (folder as NSString).appendingPathComponent(name)
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    /// A finished two-trial run in `folder/out`, its journal cut back to the header and
    /// the first trial (as a run stopped midway leaves it), each line changed by `edit`
    /// (0 the header, 1 the trial) as a JSON object: the journal's path.
    static func stoppedJournal(in folder: String, edit: (Int, inout [String: Any]) -> Void) async throws -> String {
        _ = try write("name: j\nruns:\n  - scenario: noop\n    strategies: [main]\n    repetitions: 2\n", to: "j.yaml", in: folder)
        let first = try await strain(["run", "j.yaml", "--out", "out", "--format", "json"], in: folder)
        #expect(first.status == 0, "\(first.stderr)")
        let journal = (folder as NSString).appendingPathComponent("out/trials.jsonl")
        let lines = try String(contentsOfFile: journal, encoding: .utf8).split(separator: "\n").map(String.init)
        #expect(lines.count == 3)
        let kept = try lines.prefix(2).enumerated().map { index, line in
            var object = try #require(JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            edit(index, &object)
            return String(decoding: try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]), as: UTF8.self)
        }
        try (kept.joined(separator: "\n") + "\n").write(toFile: journal, atomically: true, encoding: .utf8)
        return journal
    }

    /// 1.4 KB of valid values whose parameters multiply to six million combinations:
    /// the parser made every combination before the plan's size was checked, and the
    /// runner died of "failed to allocate" (SIGABRT under this test's memory cap, after
    /// 24 s here). Now the count refuses it before one combination exists.
    @Test func aSuiteWhoseProductIsHugeIsRefusedByItsCountBeforeAnyCombinationIsMade() async throws {
        let folder = try temporaryFolder()
        func values(_ range: ClosedRange<Int>) -> String { range.map(String.init).joined(separator: ", ") }
        _ = try Self.write("""
            name: product
            runs:
              - scenario: cyclic-graph
                parameters:
                  operation: [archive, unarchive, traverse]
                  shape: [league, chain]
                  size: [\(values(1...100))]
                  players: [\(values(0...99))]
                  games: [\(values(1...100))]
                strategies: [main]

            """, to: "product.yaml", in: folder)
        let result = try await Self.strain(["run", "product.yaml", "--list"], in: folder)
        #expect(result.status == 2, "\(result.stderr)")
        #expect(result.stderr.contains("product.yaml:3:5: error: the plan has 6000000 trials"), "\(result.stderr)")
        #expect(result.stderr.contains("the limit of 100000"))
    }

    /// A 1 MiB suite of runs with 6,000 combinations each (3,000-odd runs): every
    /// combination of every run was made and checked before the plan's size was looked
    /// at (about 20 million checks). Now the work stops at the plan limit; the CPU cap
    /// turns a regression into a killed process instead of a slow test.
    @Test func aMebibyteOfLargeRunsIsRefusedWithinTheWorkThePlanLimitAllows() async throws {
        let folder = try temporaryFolder()
        var text = "name: big\nruns:\n"
        var runs = 0
        while text.utf8.count < 1_000_000 - 400 {
            text += """
                  - scenario: cyclic-graph
                    parameters: {operation: [archive, unarchive, traverse], shape: [league, chain], size: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10], players: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9], games: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]}
                    strategies: ["thread(\(32 + 4 * runs)KiB)"]

                """
            runs += 1
        }
        _ = try Self.write(text, to: "big.yaml", in: folder)
        // Its CPU is capped at cpuCapSeconds; the wall time bound is for a busy machine.
        let result = try await Self.strain(["run", "big.yaml", "--list"], in: folder, timeout: 600)
        #expect(result.status == 2, "\(result.stderr.prefix(500))")
        // Each run plans 6,000 trials: the seventeenth takes the plan past 100,000, and
        // the message counts them all.
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        let seventeenth = try #require(lines.indices.filter { lines[$0].hasPrefix("  - scenario:") }.dropFirst(16).first) + 1
        #expect(result.stderr.contains("big.yaml:\(seventeenth):5: error: the plan has \(runs * 6_000) trials"), "\(result.stderr.prefix(500))")
    }

    /// Nine anchors, each a list of ten aliases of the one before, then the last used as
    /// a mapping key: the YAML library hashed the expanded key (10^10 leaves) and never
    /// finished. Written as a block key, inside a flow mapping, and as a value that
    /// expands past the bound.
    @Test(arguments: [
        ("block-key", "*l9 : x\nname: s\nruns: [{scenario: noop, strategies: [main]}]\n",
         "bomb.yaml:11:1: error: a complex key (an alias `*name` used as a key); suite keys are plain names: write `key: value`"),
        ("flow-key", "name: s\nruns: [{scenario: noop, strategies: [main], k: {*l9 : x}}]\n",
         "bomb.yaml:12:49: error: a complex key (an alias `*name` used as a key); suite keys are plain names: write `key: value`"),
        ("flow-list-key", "name: s\nruns: [{scenario: noop, strategies: [main], k: {[*l9]: x}}]\n",
         "bomb.yaml:12:53: error: a complex key (a list or mapping used as a key); suite keys are plain names: write `key: value`"),
        ("expanded-value", "name: s\ndescription: *l9\nruns: [{scenario: noop, strategies: [main]}]\n",
         "bomb.yaml: error: the suite's aliases (`*name`) expand it to more than 1000000 values; write the values out, or use fewer aliases of aliases"),
    ])
    func aliasesOfAliasesAreRefusedBeforeTheyAreExpanded(_ name: String, _ tail: String, _ expected: String) async throws {
        let folder = try temporaryFolder()
        var text = "l0: &l0 [a, a, a, a, a, a, a, a, a, a]\n"
        for level in 1...9 {
            text += "l\(level): &l\(level) [" + Array(repeating: "*l\(level - 1)", count: 10).joined(separator: ", ") + "]\n"
        }
        _ = try Self.write(text + tail, to: "bomb.yaml", in: folder)
        let result = try await Self.strain(["run", "bomb.yaml", "--list"], in: folder)
        #expect(result.status == 2, "\(name): \(result.stderr)")
        #expect(result.stderr.contains(expected), "\(name): \(result.stderr)")
    }

    /// A journal's header is input too: `--resume` took its repetitions, jobs and
    /// shard as given (repetitions 0 trapped on a range, jobs 100000 ran past the
    /// 1–64 cap). Each is refused with the field, its range and the fix, and no trial starts.
    @Test(arguments: [
        ("repetitions", "0", "its header's repetitions 0 is out of range (1 to 10000)"),
        ("repetitions", "-3", "its header's repetitions -3 is out of range (1 to 10000)"),
        ("jobs", "100000", "its header's jobs 100000 is out of range (1 to 64)"),
        ("shard", "\"0/0\"", "its header's shard '0/0' is not K/N with 1 ≤ K ≤ N ≤ 1000"),
        ("shard", "\"1/2000000000\"", "its header's shard '1/2000000000' is not K/N with 1 ≤ K ≤ N ≤ 1000"),
    ])
    func aJournalHeaderOutOfRangeIsRefusedOnResume(_ field: String, _ value: String, _ expected: String) async throws {
        let folder = try temporaryFolder()
        let replacement = try JSONSerialization.jsonObject(with: Data(value.utf8), options: .fragmentsAllowed)
        let journal = try await Self.stoppedJournal(in: folder) { line, object in
            if line == 0 { object[field] = replacement }
        }

        let result = try await Self.strain(["run", "--resume", "out"], in: folder)
        #expect(result.status == 2, "\(result.stderr)")
        #expect(result.stderr.contains("out/trials.jsonl: \(expected); the journal was changed by hand or damaged: start the run again with --force"), "\(result.stderr)")
        // No trial ran: the journal holds the header and the one finished trial still.
        #expect(try String(contentsOfFile: journal, encoding: .utf8).split(separator: "\n").count == 2)
    }

    /// A journal's trial lines become run.json's trials on resume: they are held to the
    /// same ranges as any record read (a swapped stack's bounds trapped in the reports).
    @Test func aJournalTrialOutOfRangeIsRefusedOnResumeWithItsLineAndField() async throws {
        let folder = try temporaryFolder()
        let journal = try await Self.stoppedJournal(in: folder) { line, object in
            guard line == 1 else { return }
            var metrics = object["metrics"] as? [String: Any] ?? [:]
            metrics["peakThreads"] = -4
            object["metrics"] = metrics
        }

        let result = try await Self.strain(["run", "--resume", "out"], in: folder)
        #expect(result.status == 2, "\(result.stderr)")
        #expect(result.stderr.contains("out/trials.jsonl: has a number out of range: line 2.metrics.peakThreads is -4"), "\(result.stderr)")
        #expect(try String(contentsOfFile: journal, encoding: .utf8).split(separator: "\n").count == 2, "no trial ran")
    }

    /// A run.json with two records under one ID (the old way to lose a trial) is refused by
    /// every reader: report, merge and the gate would count it as a repetition that never ran.
    @Test func aRunJSONWithTwoTrialsUnderOneIDIsRefusedWithBothPlaces() async throws {
        let folder = try temporaryFolder()
        let fixture = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures/run.json")
        var run = try #require(JSONSerialization.jsonObject(with: Data(contentsOf: fixture)) as? [String: Any])
        var trials = try #require(run["trials"] as? [Any])
        let count = trials.count
        trials.append(trials[0])
        run["trials"] = trials
        try JSONSerialization.data(withJSONObject: run).write(to: URL(fileURLWithPath: (folder as NSString).appendingPathComponent("run.json")))
        for format in ["html", "md", "junit"] {
            let result = try await Self.strain(["report", "run.json", "--format", format, "--out", "-"], in: folder)
            #expect(result.status == 2, "\(format): \(result.stderr)")
            #expect(result.stderr.contains("trials[\(count)].id is "), "\(format): \(result.stderr)")
            #expect(result.stderr.contains("(trials[0] has it too): one trial, one ID"), "\(format): \(result.stderr)")
        }
    }

    /// Two runs that plan the same trials used to run both under one ID; run.json kept
    /// the first record twice. A plan now holds each trial once, and run.json holds
    /// exactly the plan's trials, each once.
    @Test func runJSONHoldsExactlyThePlansTrialsEachOnce() async throws {
        let folder = try temporaryFolder()
        _ = try Self.write("""
            name: once
            repetitions: 2
            runs:
              - scenario: stack-depth
                parameters: {limit: [5, 6]}
                strategies: [main, gcd-serial]
              - scenario: stack-depth
                parameters: {limit: [7]}
                strategies: [gcd-serial]

            """, to: "once.yaml", in: folder)
        let listed = try await Self.strain(["run", "once.yaml", "--list"], in: folder)
        #expect(listed.status == 0, "\(listed.stderr)")
        let planned = listed.stdout.split(separator: "\n").dropLast().map(String.init)
        #expect(planned.count == 10)
        #expect(Set(planned).count == planned.count)

        let ran = try await Self.strain(["run", "once.yaml", "--out", "out", "--format", "json"], in: folder)
        #expect(ran.status == 0, "\(ran.stderr)")
        let record = try RunRecordFile.read(from: (folder as NSString).appendingPathComponent("out/run.json"))
        #expect(record.trials.map(\.id.description).sorted() == planned.sorted())
    }
}
