import Foundation
import StrainKit
import StrainRunner
import Testing

/// `strain run --jobs N` through the built binary: trials at once, finishing out
/// of order, journaled as they finish, recorded in plan order, stopped together.
@Suite(.serialized, .timeLimit(.minutes(10))) struct JobsTests {
    func writeSuite(_ yaml: String) throws -> (folder: String, suite: String) {
        let folder = try temporaryFolder()
        let suite = (folder as NSString).appendingPathComponent("suite.yaml")
        try yaml.write(toFile: suite, atomically: true, encoding: .utf8)
        return (folder, suite)
    }

    @Test func trialsRunAtOnceFinishOutOfOrderInTheJournalAndStayInPlanOrderInTheRecord() async throws {
        let (folder, suite) = try writeSuite("""
        name: jobs
        runs:
          - scenario: crash
            parameters: {kind: hang}
            strategies: [main]
            timeout: 10s
            expect: timedOut
          - scenario: noop
            strategies: [main, gcd-global, thread(512KiB)]
            repetitions: 2
        """)
        // The hang ends only at its 10 s deadline; the six noops (milliseconds each) run
        // in the two other slots beside it. For the hang not to finish last, a noop would
        // have to take seconds: a hang of its own, not load (at 2 s, six noops had to
        // finish within 2 s on a loaded machine).
        let out = (folder as NSString).appendingPathComponent("out")
        let result = try await StrainBinary.run(["run", suite, "--out", out, "--jobs", "3"])
        #expect(result.status == 0, "\(result.stdout)\n\(result.stderr)")
        let record = try RunRecordFile.read(from: (out as NSString).appendingPathComponent("run.json"))
        #expect(record.trials.map(\.id.description) == [
            "crash[kind=hang] main linux #1",
            "noop main linux #1", "noop gcd-global linux #1", "noop thread(512KiB) linux #1",
            "noop main linux #2", "noop gcd-global linux #2", "noop thread(512KiB) linux #2",
        ], "run.json lists the trials in plan order")
        #expect(record.trials.first?.outcome.kind == .timedOut)
        #expect(record.trials.dropFirst().allSatisfy { $0.outcome.kind == .completed })
        #expect(record.execution?.jobs == 3, "the record says how many ran at once")

        let journal = try String(contentsOfFile: (out as NSString).appendingPathComponent("trials.jsonl"), encoding: .utf8)
        let lines = journal.split(separator: "\n").dropFirst()
        #expect(lines.count == 7)
        #expect(lines.last?.contains("\"scenario\":\"crash\"") == true, "the hang, first in the plan, finished last: the others ran beside it")
        // Progress counts finished trials, 1 to 7, whatever order they finished in.
        let counted = result.stdout.split(separator: "\n").filter { $0.hasPrefix("[") }.map { $0.prefix(5) }
        #expect(counted == ["[1/7]", "[2/7]", "[3/7]", "[4/7]", "[5/7]", "[6/7]", "[7/7]"], "\(result.stdout)")
    }

    @Test func aStopSignalKillsEveryTrialInFlightAndAResumedRunFinishesThePlan() async throws {
        let (folder, _) = try writeSuite("""
        name: hangs
        runs:
          - scenario: noop
            strategies: [main]
          - scenario: crash
            parameters: {kind: hang}
            strategies: [main, thread(1MiB), gcd-global]
            timeout: 30s
            expect: timedOut
        """)
        // 30 s: the hangs must still run when the test looks for them, on a busy machine.
        let runner = try BackgroundStrain(["run", "suite.yaml", "--out", "out", "--jobs", "3"], in: folder)
        #expect(await runner.waitForOutput("[1/4]"), "the quick trial finished")
        var children: [Int32] = []
        let giveUp = Date().addingTimeInterval(20)
        while children.count < 3 && Date() < giveUp {
            children = await runner.children()
            await pause(20_000)
        }
        #expect(children.count == 3, "three hanging trials ran at once: \(children)")
        runner.signal(SIGINT)
        let result = await runner.finish(timeout: 30)
        #expect(result.status == 130, "\(result.stderr)")
        for child in children {
            #expect(await Processes.waitUntilGone(child, seconds: 5), "every trial in flight died with the run")
            #expect(Processes.members(ofGroup: child).isEmpty)
        }
        let record = try RunRecordFile.read(from: (folder as NSString).appendingPathComponent("out/run.json"))
        #expect(record.interrupted == true)
        #expect(record.trials.map(\.id.description) == ["noop main linux #1"])

        // The journal remembers --jobs 3: the resumed run goes on three at a time without being told.
        let resumed = try await StrainBinary.run(["run", "--resume", (folder as NSString).appendingPathComponent("out")])
        #expect(resumed.status == 0, "\(resumed.stdout)\n\(resumed.stderr)")
        let finished = try RunRecordFile.read(from: (folder as NSString).appendingPathComponent("out/run.json"))
        #expect(finished.interrupted == nil)
        #expect(finished.trials.map(\.id.description) == [
            "noop main linux #1", "crash[kind=hang] main linux #1", "crash[kind=hang] thread(1MiB) linux #1", "crash[kind=hang] gcd-global linux #1",
        ], "each trial once, in plan order")
        #expect(finished.trials.dropFirst().allSatisfy { $0.outcome.kind == .timedOut })
        #expect(finished.execution?.jobs == 3, "the three remaining trials ran at once again")
        let journal = try String(contentsOfFile: (folder as NSString).appendingPathComponent("out/trials.jsonl"), encoding: .utf8)
        #expect(journal.split(separator: "\n").count == 5, "the header and each trial once")
    }

    @Test func theGateRefusesAJobsRunAgainstASerialBaselineUnlessAsked() async throws {
        let (folder, suite) = try writeSuite("name: g\nruns:\n  - scenario: noop\n    strategies: [main, gcd-global]\n    repetitions: 2\n")
        #expect(try await StrainBinary.run(["run", suite, "--out", folder + "/serial"]).status == 0)
        #expect(try await StrainBinary.run(["run", suite, "--out", folder + "/parallel", "--jobs", "2"]).status == 0)
        let saved = try await StrainBinary.run(["baseline", "save", folder + "/serial", "--name", "serial", "--baselines", folder + "/baselines"])
        #expect(saved.status == 0, "\(saved.stderr)")
        let gate = ["gate", folder + "/parallel", "--baseline", "serial", "--baselines", folder + "/baselines", "--out", folder + "/gate"]
        let refused = try await StrainBinary.run(gate)
        #expect(refused.status == 2)
        #expect(refused.stderr.contains("the baseline ran 1 trial at once and the candidate 2 (--jobs)"), "\(refused.stderr)")
        let asked = try await StrainBinary.run(gate + ["--allow-execution-mismatch"])
        #expect(asked.status == 0, "outcomes compare, and the timings are judged as asked: \(asked.stdout)\n\(asked.stderr)")
    }

    @Test func jobsOutsideItsRangeIsAnInputError() async throws {
        let (_, suite) = try writeSuite("name: j\nruns:\n  - scenario: noop\n    strategies: [main]\n")
        for value in ["0", "65", "-1", "many"] {
            let result = try await StrainBinary.run(["run", suite, "--jobs", value, "--list"])
            #expect(result.status == 2, "--jobs \(value)")
        }
        let result = try await StrainBinary.run(["run", suite, "--jobs", "0"])
        #expect(result.stderr.contains("--jobs 0 is out of range; give a whole number from 1 to 64"), "\(result.stderr)")
        // A negative number is read as the option's value and told its range, not "Missing value".
        let negative = try await StrainBinary.run(["run", suite, "--jobs", "-1"])
        #expect(negative.status == 2 && negative.stderr.contains("--jobs -1 is out of range; give a whole number from 1 to 64"), "\(negative.stderr)")
        let repetitions = try await StrainBinary.run(["run", suite, "--repetitions", "-3"])
        #expect(repetitions.status == 2 && repetitions.stderr.contains("--repetitions -3 is out of range"), "\(repetitions.stderr)")
        let stall = try await StrainBinary.run(["exec", "--stall", "-5s", "--", "/bin/true"])
        #expect(stall.status != 0 && stall.stderr.contains("--stall '-5s' is not a duration from 100ms to 10m"), "\(stall.stderr)")
    }
}
