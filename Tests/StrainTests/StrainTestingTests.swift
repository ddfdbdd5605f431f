import Foundation
import StrainRunner
import Testing

/// StrainTesting in a team's own `swift test`: the fixture package
/// (Tests/TestingFixture) is built as a user's would be and its tests run with
/// `swift test`; what each expectation said is read from the output and the xUnit
/// file. Its tests named `failsOnPurpose…` fail by design.
@Suite(.serialized, .timeLimit(.minutes(60))) struct StrainTestingTests {
    static let fixture = FixturePackage.repository.appendingPathComponent("Tests/TestingFixture").path

    struct Run: Sendable {
        var status: Int32
        var output: String
        var xunit: String

        /// The lines of one test's result, issues and warnings, from `✘`/`✔`/`⚠️ Test NAME` to the next test's.
        /// Whether Swift Testing said it attached `file` to `test` (anywhere in the
        /// output: the fixture's tests run in parallel, and a test's attachment line can
        /// come before or after its issue, among other tests' lines).
        func attached(_ file: String, to test: String) -> Bool {
            output.contains("Attached '\(file)' to \(test)(")
        }

        func lines(of test: String) -> String {
            let all = output.split(separator: "\n", omittingEmptySubsequences: false)
            var taken: [Substring] = []
            var inside = false
            for line in all {
                if line.hasPrefix("✘ Test ") || line.hasPrefix("✔ Test ") || line.hasPrefix("◇ Test ") || (line.unicodeScalars.first == "\u{26A0}" && line.contains(" Test ")) {
                    inside = line.contains("Test \(test)(") && !line.hasPrefix("◇")
                }
                if inside { taken.append(line) }
            }
            return taken.joined(separator: "\n")
        }
    }

    /// The fixture's `swift test`, run once for every test here.
    static let run = AsyncOnce<Run> {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let xunit = folder + "/xunit.xml"
        return try await FixturePackage.locked {
            let (built, buildOutput) = try await FixturePackage.swift(["build", "--build-tests", "--package-path", fixture, "--scratch-path", FixturePackage.scratch])
            guard built == 0 else { throw FixturePackage.BuildError(output: buildOutput) }
            let (status, output) = try await FixturePackage.swift(["test", "--skip-build", "--package-path", fixture, "--scratch-path", FixturePackage.scratch,
                                                                   "--xunit-output", xunit])
            let xml = (try? String(contentsOfFile: xunit.replacingOccurrences(of: ".xml", with: "-swift-testing.xml"), encoding: .utf8))
                ?? (try? String(contentsOfFile: xunit, encoding: .utf8)) ?? ""
            return Run(status: status, output: output, xunit: xml)
        }
    }

    /// The fixture's race tests in a test binary built with ThreadSanitizer, as a team runs
    /// them: `swift test --sanitize=thread` (its own scratch folder: every module differs).
    static let sanitizedRun = AsyncOnce<Run> {
        let scratch = FixturePackage.sanitizedScratch
        return try await FixturePackage.locked(scratch: scratch) {
            let (built, buildOutput) = try await FixturePackage.swift(["build", "--build-tests", "--sanitize=thread", "--package-path", fixture,
                                                                        "--scratch-path", scratch])
            guard built == 0 else { throw FixturePackage.BuildError(output: buildOutput) }
            let (status, output) = try await FixturePackage.swift(["test", "--skip-build", "--sanitize=thread", "--package-path", fixture,
                                                                   "--scratch-path", scratch, "--filter", "RaceTests"])
            return Run(status: status, output: output, xunit: "")
        }
    }

    @Test func aSanitizedTestBinaryNamesARaceWithBothAccessesAndGuardedTalliesPass() async throws {
        let run = try await Self.sanitizedRun.value()
        let text = run.lines(of: "failsOnPurposeAnUnguardedTallyRaces")
        #expect(text.contains("recorded an issue at RaceTests.swift:11:"), "the issue points at the expectation's line: \(text)")
        #expect(text.contains("ended dataRace on thread(8MiB)"), "\(text)")
        #expect(text.contains("ThreadSanitizer: ") && text.contains("race at Tally.add()"), "\(text)")
        // Both accesses, each by its thread, with the team's file:line.
        let accesses = text.split(separator: "\n").filter { $0.contains(" by thread T") && $0.contains("Tally.swift:") && $0.contains("RaceTests.swift:12") }
        #expect(accesses.count >= 2 && accesses.contains { $0.contains("Previous ") }, "\(text)")
        #expect(run.attached("run.json", to: "failsOnPurposeAnUnguardedTallyRaces"), "\(text)")
        #expect(run.lines(of: "aTallyUnderAnNSLockDoesNotRace").hasPrefix("✔ Test aTallyUnderAnNSLockDoesNotRace() passed"),
                "\(run.lines(of: "aTallyUnderAnNSLockDoesNotRace"))")
    }

    @Test func aPlainTestBinarySaysItDidNotCheckForRaces() async throws {
        let run = try await Self.run.value()
        let text = run.lines(of: "failsOnPurposeAnUnguardedTallyRaces")
        #expect(text.contains("races were not checked: this test binary is not built with ThreadSanitizer (run `swift test --sanitize=thread`)"), "\(text)")
        #expect(text.contains("passed"), "a warning does not fail the test: \(text)")
    }

    @Test func aClosureThatFitsItsStackPassesAndReportsItsHighWater() async throws {
        let run = try await Self.run.value()
        #expect(run.lines(of: "aShallowDocumentParsesOnA512KiBThread").hasPrefix("✔ Test aShallowDocumentParsesOnA512KiBThread() passed"), "\(run.output)")
        #expect(run.lines(of: "theStackHighWaterOfAShallowParseIsMeasured").hasPrefix("✔ Test"), "\(run.lines(of: "theStackHighWaterOfAShallowParseIsMeasured"))")
    }

    @Test func anOverflowFailsAtTheExpectationWithTheCycleTheEntryFrameAndDeepButFinite() async throws {
        let run = try await Self.run.value()
        let text = run.lines(of: "failsOnPurposeADeepDocumentOverflowsA512KiBThread")
        #expect(text.contains("recorded an issue at StackTests.swift:17:"), "the issue points at the expectation's line: \(text)")
        #expect(text.contains("stackOverflow on thread(512KiB) (linux profile, debug build)"), "\(text)")
        #expect(text.contains("recursion: a cycle of") && text.contains("parseList"), "\(text)")
        #expect(text.contains("entered the recursion: ") && text.contains("Nesting.swift:"), "the entry frame with its file:line: \(text)")
        #expect(text.contains("deep but finite: it completes on a 64 MiB stack"), "\(text)")
        // What to do, worded for a test: its strategy, not a suite's (re-trial 35p, F17).
        #expect(text.contains("what to do: The stack of 512 KiB ran out after "), "\(text)")
        // A stack the large-stack run's need fits (it suggested 8 MiB for a 30.5 MiB need: re-trial 35q, F4).
        let suggested = try #require(text.firstMatch(of: /on: \.thread\(stackBytes: (\d+) << 20\), which its ([0-9.]+) (KiB|MiB) fits/), "\(text)")
        let need = (Double(suggested.2) ?? 0) * (suggested.3 == "MiB" ? 1_048_576 : 1_024)
        #expect(Double(Int(suggested.1) ?? 0) * 1_048_576 >= need * 1.25, "\(text)")
        // The fixture asks for the StrainTestingReports trait: report.html beside run.json.
        #expect(run.attached("run.json", to: "failsOnPurposeADeepDocumentOverflowsA512KiBThread") && run.attached("report.html", to: "failsOnPurposeADeepDocumentOverflowsA512KiBThread"), "\(text)")
    }

    @Test func anUnboundedRecursionOnAnIOSGCDWorkerIsCalledUnbounded() async throws {
        let run = try await Self.run.value()
        let text = run.lines(of: "failsOnPurposeARecursionWithoutEndOverflowsAnyStack")
        #expect(text.contains("stackOverflow on gcd-global (ios profile"), "\(text)")
        #expect(text.contains("on a 512 KiB stack"), "the profile reached the GCD worker: \(text)")
        #expect(text.contains("countForever"), "\(text)")
        #expect(text.contains("unbounded: it overflows a 64 MiB stack too"), "\(text)")
        #expect(text.contains("what to do: The recursion did not end on a 64 MiB stack either") && !text.contains("stackBytes:"), "no larger stack for a recursion without end: \(text)")
    }

    @Test func anAllocationBudgetFailsOnAnExtraAllocationPerElementNamingTheSite() async throws {
        let run = try await Self.run.value()
        #expect(run.lines(of: "labelsForAThousandElementsStayWithinTheirBudget").hasPrefix("✔ Test"),
                "\(run.lines(of: "labelsForAThousandElementsStayWithinTheirBudget"))")
        let text = run.lines(of: "failsOnPurposeAnExtraAllocationPerElementBreaksTheBudget")
        #expect(text.contains("more than the 1,100 allowed") && text.firstMatch(of: /\n[0-9]{4,} allocations/) == nil, "counts grouped: \(text)")
        #expect(text.contains("Nesting.swift:"), "the call site in the team's code: \(text)")
    }

    /// Only the closure's call is counted: nothing of the harness's thread start or
    /// result hand-off around it (it was about 50 allocations), so budgets can be exact.
    @Test func anEmptyClosureCountsNoAllocationAndOneMallocCountsOne() async throws {
        let run = try await Self.run.value()
        for test in ["anEmptyClosureCountsNoAllocation", "oneMallocAndItsFreeCountOneAllocationOf48Bytes"] {
            #expect(run.lines(of: test).hasPrefix("✔ Test"), "\(run.lines(of: test))")
        }
    }

    /// The library under test reports nothing: the mutexes of the cycle are read from
    /// the threads' waits, and the threads' own frames say where they wait.
    @Test func aDeadlockInAClosureFailsAtItsLineNamingBothMutexesAndWhereEachThreadWaits() async throws {
        let run = try await Self.run.value()
        #expect(run.lines(of: "transfersTakingTheLocksInOneOrderNeverStall").hasPrefix("✔ Test"),
                "\(run.lines(of: "transfersTakingTheLocksInOneOrderNeverStall"))")
        let text = run.lines(of: "failsOnPurposeOppositeTransfersDeadlock")
        #expect(text.contains("recorded an issue at StallTests.swift:21:"), "the issue points at the expectation's line: \(text)")
        #expect(text.contains("ended deadlocked on thread(8MiB)"), "\(text)")
        let cycle = /thread \d+ \([^)]*\) holds mutex (0x[0-9a-f]+) and waits for mutex (0x[0-9a-f]+); thread \d+ \([^)]*\) holds mutex (0x[0-9a-f]+) and waits for mutex (0x[0-9a-f]+)/
        let match = try #require(text.firstMatch(of: cycle), "both threads and both mutexes named: \(text)")
        #expect(match.1 == match.4 && match.2 == match.3 && match.1 != match.2, "each waits for the mutex the other holds: \(text)")
        #expect(text.contains("2 threads: futex wait ← Ledger.transfer(_:from:meet:)"), "where the two wait, in the team's code: \(text)")
        #expect(run.attached("run.json", to: "failsOnPurposeOppositeTransfersDeadlock"), "\(text)")
        #expect(text.contains("no progress for") && text.contains("; a wait cycle: thread "), "the cycle is the reason, not a count of threads holding work: \(text)")
        // What to do, and the threads' waits without the harness's frames around the closure (re-trial 35p, F17).
        #expect(text.contains("what to do: The threads take the same locks in opposite orders (mutex 0x"), "\(text)")
        for harness in ["PlainThreadRoom", "ResultHandoff", "handOff(", "ThreadPerTaskExecutor", "TrialHost"] {
            #expect(!text.contains(harness), "a thread group names Strain's harness (\(harness)): \(text)")
        }
        // A closure that polls for the two (it sleeps with a timeout) was timedOut at its
        // deadline, the cycle unnamed: a cycle is a deadlock whatever the rest do.
        let polling = run.lines(of: "failsOnPurposeOppositeTransfersDeadlockWhileTheClosurePolls")
        #expect(polling.contains("ended deadlocked on thread(8MiB)"), "\(polling)")
        let named = try #require(polling.firstMatch(of: cycle), "both threads and both mutexes named: \(polling)")
        #expect(named.1 == named.4 && named.2 == named.3 && named.1 != named.2, "\(polling)")
    }

    /// Blocks that each wait for a reply queued after them: GCD's pool grows while
    /// every thread it adds blocks at once, and that is starvation, not a deadlock.
    @Test func aPoolStarvedByBlockingWorkIsCalledStarvedAndAFewBlockingItemsPass() async throws {
        let run = try await Self.run.value()
        #expect(run.lines(of: "aFewBlockingLookupsFinish").hasPrefix("✔ Test"), "\(run.lines(of: "aFewBlockingLookupsFinish"))")
        let text = run.lines(of: "failsOnPurposeThreeHundredBlockingLookupsStarveThePool")
        #expect(text.contains("recorded an issue at StallTests.swift:51:"), "\(text)")
        #expect(text.contains("ended starved on thread(8MiB)"), "\(text)")
        #expect(text.contains("work is queued to a pool whose threads are all blocked"), "\(text)")
        #expect(text.contains("threads: futex wait ← closure #1 in fetchAll(_:blocking:)"), "the blocked pool threads, where they wait: \(text)")
        #expect(text.contains("what to do: ") && text.contains("don't block pool threads"), "\(text)")
    }

    /// The bisection's answer is the boundary itself: the fixture's passing test parses
    /// that depth on a plain 512 KiB `Thread` and sees one level more overflow one (in
    /// an exit test); the failing one shows the answer and every probe.
    @Test func aBisectionFindsTheDeepestInputThatFitsAndEveryProbeIsShown() async throws {
        let run = try await Self.run.value()
        #expect(run.lines(of: "theDeepestDocumentFoundParsesOnAPlain512KiBThread").hasPrefix("✔ Test"),
                "\(run.lines(of: "theDeepestDocumentFoundParsesOnAPlain512KiBThread"))")
        let text = run.lines(of: "failsOnPurposeAMillionLevelsDoNotFitA512KiBThread")
        let answer = /(\d+) is the largest value that completes on thread\(512KiB\) \(debug build\); (\d+) ended stackOverflow/
        let match = try #require(text.firstMatch(of: answer), "\(text)")
        let deepest = try #require(Int(match.1))
        #expect(Int(match.2) == deepest + 1 && (1_000..<50_000).contains(deepest), "\(text)")
        let probes = try #require(text.firstMatch(of: /(\d+) probes: (.*)/), "\(text)")
        #expect((15...20).contains(Int(probes.1) ?? 0), "about log2(100,000) probes: \(text)")
        #expect(probes.2.contains("\(deepest) completed") && probes.2.contains("\(deepest + 1) stackOverflow"), "\(text)")
    }

    /// Callgrind counts the closure in the expectation's child: a second pass over the
    /// bytes breaks the budget, and the issue names the tested function with file:line;
    /// the same work counted in two children gives the same count.
    @Test func anInstructionBudgetFailsOnASecondPassNamingTheTestedFunction() async throws {
        let run = try await Self.run.value()
        for test in ["oneChecksumPassStaysWithinItsInstructionBudget", "theSameWorkCountsTheSameInstructionsTwice"] {
            #expect(run.lines(of: test).hasPrefix("✔ Test \(test)() passed"), "\(run.lines(of: test))")
        }
        let text = run.lines(of: "failsOnPurposeASecondChecksumPassBreaksTheInstructionBudget")
        #expect(text.contains("recorded an issue at InstructionTests.swift:17:"), "the issue points at the expectation's line: \(text)")
        let count = try #require(text.firstMatch(of: /([0-9,]+) instructions, more than the 20,000,000 instructions allowed \(debug build\)/), "\(text)")
        let instructions = try #require(Int(count.1.replacingOccurrences(of: ",", with: "")))
        #expect((25_000_000..<40_000_000).contains(instructions), "two passes of about 15 million each: \(text)")
        #expect(text.contains("most in the tested code:") && text.contains("in checksum(_:rounds:) (Checksum.swift:5) with what it calls"),
                "the tested function, with its file:line: \(text)")
        #expect(run.attached("run.json", to: "failsOnPurposeASecondChecksumPassBreaksTheInstructionBudget"), "\(text)")
    }

    /// Where valgrind cannot be found the expectation does not run its closure: a
    /// warning says why and how to install it, and the test does not fail for it.
    @Test func withoutValgrindAnInstructionBudgetWarnsThatItWasNotCounted() async throws {
        _ = try await Self.run.value()  // the fixture, built
        let binary = FixturePackage.scratch + "/debug/TestingFixturePackageTests.xctest"
        let empty = try temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: empty) }
        let result = try await ProgramRun.run(binary, ["--testing-library", "swift-testing", "--filter", "oneChecksumPassStaysWithinItsInstructionBudget"],
                                              environment: ["PATH": empty], timeout: 120)
        let output = result.stdout + result.stderr
        #expect(output.contains("instructions were not counted: counting instructions (--measure instructions, expectInstructions) needs Valgrind's callgrind, and there is no `valgrind` on PATH; install it (Debian: apt-get install valgrind)"), "\(output)")
        #expect(output.contains("✔ Test oneChecksumPassStaysWithinItsInstructionBudget() passed"), "a warning, not a failure: \(output)")
        #expect(result.termination == .exited(0), "\(output)")
    }

    /// Ctrl-C of a test process whose counted expectation is running: its child under
    /// valgrind goes with it, and the stripped copy of the test binary it left behind
    /// is removed by the next counted run (here, called directly).
    @Test func anInterruptedCountedExpectationLeavesNoValgrindAndItsCopyIsRemovedNextTime() async throws {
        _ = try await Self.run.value()  // the fixture, built
        let binary = FixturePackage.scratch + "/debug/TestingFixturePackageTests.xctest"
        let running = try ProgramRun.start(binary, ["--testing-library", "swift-testing", "--filter", "NeverEndingCountTests"], environment: ["FIXTURE_HANG": "1"])
        let parent = running.process.processIdentifier
        let copyPrefix = "strain-callgrind-\(parent)-"
        func copies() -> [String] {
            ((try? FileManager.default.contentsOfDirectory(atPath: FileManager.default.temporaryDirectory.path)) ?? []).filter { $0.hasPrefix(copyPrefix) }
        }
        // The child under valgrind (not objcopy making its copy, whose arguments name the folder), its closure started (callgrind takes seconds to start it).
        let started = await eventually(within: 90) {
            Processes.descendants(of: parent).contains { (try? String(contentsOfFile: "/proc/\($0)/cmdline", encoding: .utf8))?.contains("--tool=callgrind") == true }
        }
        let children = Processes.descendants(of: parent)
        defer {
            Processes.killTree(parent)
            for child in children { kill(child, SIGKILL) }
        }
        try #require(started && !copies().isEmpty, "no child under callgrind, or no copy of the binary: \(children)")
        await pause(5_000_000)
        kill(parent, SIGINT)
        for child in children {
            #expect(await Processes.waitUntilGone(child, seconds: 20), "child \(child) outlived its interrupted test process")
        }
        // A counted process started after the snapshot (every one runs the copy, whose path names the test process).
        let late = await eventually(within: 20) { Processes.running(commandLineContaining: copyPrefix).isEmpty }
        #expect(late, "a counted process outlived its interrupted test process: \(Processes.running(commandLineContaining: copyPrefix))")
        for pid in Processes.running(commandLineContaining: copyPrefix) { kill(pid, SIGKILL) }
        _ = try? await running.wait(timeout: 30)
        CallgrindTrials.removeFoldersOfEndedProcesses()
        #expect(copies().isEmpty, "the copy of a test process that ended is removed: \(copies())")
    }

    /// Ctrl-C reaches the test process alone here (a terminal would signal the child
    /// too): the expectation's child must still go with its parent, not run to its
    /// 300 s timeout.
    @Test func anInterruptedTestProcessLeavesNoChildBehind() async throws {
        _ = try await Self.run.value()  // the fixture, built
        let binary = FixturePackage.scratch + "/debug/TestingFixturePackageTests.xctest"
        let running = try ProgramRun.start(binary, ["--testing-library", "swift-testing", "--filter", "HangTests"], environment: ["FIXTURE_HANG": "1"])
        let parent = running.process.processIdentifier
        // The expectation's child: the test binary again, under the test process.
        let started = await eventually(within: 60) { !Processes.descendants(of: parent).isEmpty }
        let children = Processes.descendants(of: parent)
        defer {
            // A child that outlived its parent was re-parented: killed by its own pid.
            Processes.killTree(parent)
            for child in children { kill(child, SIGKILL) }
        }
        try #require(started && !children.isEmpty, "the expectation started no child")
        // Its trial is running (the closure sleeps): interrupt the test process.
        await pause(1_000_000)
        kill(parent, SIGINT)
        for child in children {
            #expect(await Processes.waitUntilGone(child, seconds: 20), "child \(child) outlived its interrupted test process")
        }
        _ = try? await running.wait(timeout: 30)
    }

    @Test func onlyTheTestsMeantToFailFailAndTheRunSaysSo() async throws {
        let run = try await Self.run.value()
        #expect(run.status != 0)
        let failed = run.output.split(separator: "\n").filter { $0.hasPrefix("✘ Test ") && !$0.hasPrefix("✘ Test run ") && $0.contains(" failed after ") }
            .map { String($0.dropFirst("✘ Test ".count).prefix { $0 != "(" }) }
        #expect(Set(failed) == ["failsOnPurposeADeepDocumentOverflowsA512KiBThread", "failsOnPurposeARecursionWithoutEndOverflowsAnyStack",
                                "failsOnPurposeAnExtraAllocationPerElementBreaksTheBudget", "failsOnPurposeOppositeTransfersDeadlock",
                                "failsOnPurposeThreeHundredBlockingLookupsStarveThePool", "failsOnPurposeAMillionLevelsDoNotFitA512KiBThread",
                                "failsOnPurposeASecondChecksumPassBreaksTheInstructionBudget", "failsOnPurposeOppositeTransfersDeadlockWhileTheClosurePolls"],
                "\(run.output)")
        #expect(run.xunit.contains("failsOnPurposeADeepDocumentOverflowsA512KiBThread"), "the xUnit file names it: \(run.xunit.prefix(2000))")
    }
}
