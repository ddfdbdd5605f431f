import Foundation
import StrainRecords
import StrainReports
import StrainText
import Testing

/// `strain bisect`'s options and outcomes through the built binary, on `stack-depth`
/// (a fixed frame per level: every answer follows from the stack, not from timing),
/// with small ranges and one repetition so each bisect takes a second or a few.
@Suite(.serialized) struct BisectCommandTests {
    static func bisect(_ arguments: [String], timeout: Double = 120) async throws -> (StrainBinary.Result, RunRecord?, String) {
        let out = try temporaryFolder() + "/bisect"
        let result = try await StrainBinary.run(["bisect"] + arguments + ["--out", out], timeout: timeout)
        return (result, try? RunRecordFile.read(from: out + "/run.json"), out)
    }

    @Test func perRunsASecondSearchAtTwiceTheValueAndReportsTheSlopeInEveryReport() async throws {
        let (result, run, out) = try await Self.bisect(["stack-depth", "-p", "frame=1KiB", "-p", "limit=100", "--per", "limit", "--high", "1MiB", "--repetitions", "1"])
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        let section = try #require(run?.bisect)
        #expect(section.searches.count == 2)
        #expect(section.searches.map { $0.parameters["limit"] } == ["100", "200"], "the second search at twice the value")
        #expect(section.searches.allSatisfy { $0.verdict == .boundary && $0.question == .stack })
        let stacks = section.searches.compactMap(\.passing)
        #expect(stacks.count == 2 && stacks[1] > stacks[0], "twice the depth needs more stack: \(stacks)")
        #expect(zip(section.searches.compactMap(\.failing), stacks).allSatisfy { $1 - $0 == 4096 }, "each boundary to one page")
        let slope = try #require(section.slope)
        #expect(slope.parameter == "limit")
        #expect(slope.points.map(\.value) == [100, 200] && slope.points.map(\.stackBytes) == stacks)
        // A level keeps 1 KiB on the stack, plus the frames around it.
        #expect(slope.bytesPerUnit >= 1024 && slope.bytesPerUnit < 4096, "\(slope.bytesPerUnit)")
        #expect(abs(slope.bytesPerUnit - Double(stacks[1] - stacks[0]) / 100) < 1)
        #expect(run?.trials.count == section.searches.map(\.probes.count).reduce(0, +), "every probe is a trial")

        let sentence = "About \(ByteSize.prose(Int(slope.bytesPerUnit.rounded()))) of stack per unit of limit (from limit=100 on \(ByteSize.prose(stacks[0], exact: true)) and limit=200 on \(ByteSize.prose(stacks[1], exact: true))"
        let headline = "stack-depth[frame=1KiB, limit=100]: needs \(ByteSize.exact(stacks[0])) of stack"
        #expect(result.stdout.contains("\nBisect\n"), "\(result.stdout)")
        #expect(result.stdout.contains(sentence), "\(result.stdout)")
        #expect(result.stdout.contains(headline), "\(result.stdout)")
        let markdown = TestFiles.read(out + "/summary.md")
        let bisectPart = try #require(markdown.firstRange(of: "## Bisect\n").map { String(markdown[$0.lowerBound...]) }, "summary.md has a Bisect section")
        #expect(bisectPart.contains("- **\(headline)"), "\(bisectPart)")
        #expect(bisectPart.contains("| stack | largest limit predicted |"), "\(bisectPart)")
        #expect(bisectPart.contains(sentence), "\(bisectPart)")
        let html = TestFiles.readable(TestFiles.read(out + "/report.html"))
        let htmlPart = try #require(html.firstRange(of: "<section id=\"bisect\">\n<h2>Bisect</h2>").map { String(html[$0.lowerBound...]) }, "report.html has a Bisect section")
        let htmlSection = String(htmlPart[..<(htmlPart.firstRange(of: "</section>")?.lowerBound ?? htmlPart.endIndex)])
        #expect(htmlSection.contains("<li><b>\(headline)"), "\(htmlSection)")
        #expect(htmlSection.contains("<th>largest limit predicted</th>"), "\(htmlSection)")
        #expect(htmlSection.contains(sentence), "\(htmlSection)")
        #expect(TestFiles.read(out + "/junit.xml").contains("tests=\"\(run?.trials.count ?? -1)\""))
    }

    @Test func anUnboundedRecursionStopsAt64MiBAndExhaustiveProbesOnToHigh() async throws {
        // limit 0 recurses until the stack runs out, whatever its size.
        let arguments = ["stack-depth", "-p", "frame=1KiB", "--high", "72MiB", "--repetitions", "1", "--format", "json"]
        let (stopped, stoppedRun, _) = try await Self.bisect(arguments)
        #expect(stopped.status == 0, "\(stopped.stdout)\(stopped.stderr)")
        let first = try #require(stoppedRun?.bisect?.searches.first)
        #expect(first.verdict == .unbounded)
        #expect(first.overflows.map(\.stackBytes) == [512 << 10, 8 << 20, 64 << 20], "stops on the evidence at 64MiB")
        #expect(first.explanation.contains("Stopped at 64 MiB rather than searching to 72 MiB; --exhaustive probes on."), "\(first.explanation)")

        let (exhaustive, exhaustiveRun, _) = try await Self.bisect(arguments + ["--exhaustive"])
        #expect(exhaustive.status == 0, "\(exhaustive.stdout)\(exhaustive.stderr)")
        let search = try #require(exhaustiveRun?.bisect?.searches.first)
        #expect(search.verdict == .unbounded, "still unbounded, with one more stack as evidence")
        #expect(search.overflows.map(\.stackBytes) == [512 << 10, 8 << 20, 64 << 20, 72 << 20], "probes on to --high")
        #expect(!search.explanation.contains("--exhaustive probes on"), "\(search.explanation)")
        #expect(exhaustiveRun?.trials.map(\.strategy.description) == ["thread(512KiB)", "thread(8MiB)", "thread(64MiB)", "thread(72MiB)"])
        #expect(exhaustive.stdout.contains("unbounded: no stack is enough  (4 probes in "), "\(exhaustive.stdout)")
    }

    @Test func profileRunsEveryProbeUnderThatPlatformsStacks() async throws {
        // gcd-global has Linux's 8 MiB workers, and iOS's 512 KiB under the ios profile:
        // about 300 levels of 1 KiB fit on iOS, about 5,000 on Linux.
        let (result, run, _) = try await Self.bisect(["stack-depth", "-p", "frame=1KiB", "--over", "limit", "--strategy", "gcd-global", "--profile", "ios",
                                                "--low", "1", "--high", "20000", "--repetitions", "1", "--format", "json"])
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        let search = try #require(run?.bisect?.searches.first)
        #expect(run?.bisect?.searches.count == 1, "gcd-global has no stack of its own to double: one search")
        #expect(search.verdict == .boundary)
        #expect(search.profile == "ios")
        let largest = try #require(search.passing)
        #expect((150...500).contains(largest), "iOS's 512 KiB GCD worker: \(largest)")
        #expect(search.failing == largest + 1)
        let trials = try #require(run?.trials)
        #expect(!trials.isEmpty && trials.allSatisfy { $0.profile == .ios }, "\(Set(trials.map(\.profile.rawValue)))")
        #expect(run?.suite.profiles == ["ios"])
        #expect(result.stdout.hasPrefix("Bisecting stack-depth: the largest limit from 1 to 20,000 on gcd-global (ios)\n"), "\(result.stdout)")
        #expect(result.stdout.contains("stack-depth[frame=1KiB]: limit ≤ \(Format.count(Double(largest))) completes on gcd-global, ios"), "\(result.stdout)")

        let (bad, badRun, out) = try await Self.bisect(["stack-depth", "--profile", "android"])
        #expect(bad.status == 2)
        #expect(bad.stderr == "error: --profile 'android' is not a profile; use one of linux, ios, macos\n", "\(bad.stderr)")
        #expect(badRun == nil && !TestFiles.exists(out), "no probe ran")
    }

    @Test func aProbeThatEndsInAHarnessErrorStopsTheBisectWithExit3AndKeepsTheProbe() async throws {
        // `garbage-result` writes garbage on the result pipe: the harness's to report.
        let (result, run, out) = try await Self.bisect(["fault", "-p", "kind=garbage-result", "--repetitions", "1"])
        #expect(result.status == 3, "\(result.stdout)\(result.stderr)")
        #expect(result.stderr.hasPrefix("error: the probe fault[kind=garbage-result, megabytes=8] thread(512KiB) linux #1 ended in a harness error: the result pipe broke the child protocol"),
                "\(result.stderr)")
        #expect(result.stdout.contains("probe 1  fault[kind=garbage-result, megabytes=8] thread(512KiB) linux #1  harnessError"), "\(result.stdout)")
        #expect(!result.stdout.contains("probe 2 "), "no probe after the harness error")
        #expect(run == nil, "no answer, so no run.json")
        let journal = TestFiles.read(out + "/trials.jsonl").split(separator: "\n")
        #expect(journal.count == 1 && journal.first?.contains("\"kind\":\"harnessError\"") == true, "the probe that ran is kept: \(journal)")
    }
}
