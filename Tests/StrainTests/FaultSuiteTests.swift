import Foundation
import StrainKit
import StrainReports
import StrainRunner
import StrainSymbols
import StrainText
import StrainWire
import Testing

/// `Scenarios/faults.yaml` through the built binary: every way a trial can break
/// its own process ends as that trial's outcome, and the runner survives all of it.
@Suite(.serialized, .timeLimit(.minutes(10))) struct FaultSuiteTests {
    static var faultsSuite: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Scenarios/faults.yaml").path
    }

    @Test func everyFaultEndsInItsOwnOutcomeAndTheRunnerSurvivesThemAll() async throws {
        let out = (try temporaryFolder() as NSString).appendingPathComponent("out")
        let result = try await StrainBinary.run(["run", Self.faultsSuite, "--out", out], timeout: 180)
        #expect(result.status == 3, "the protocol-breaking trials are harness errors, shown as such: \(result.stderr)")
        let record = try RunRecordFile.read(from: (out as NSString).appendingPathComponent("run.json"))
        func trials(_ kind: String) -> [TrialRecord] { record.trials.filter { $0.parameters["kind"] == kind } }
        func outcomes(_ kind: String) -> Set<String> { Set(trials(kind).map(\.outcome.description)) }

        let invariants = record.trials.filter { $0.parameters["kind"] == "broken-invariant" }
        #expect(invariants.count == 2 && invariants.allSatisfy { $0.outcome.kind == .invariantViolated }, "\(invariants.map(\.outcome))")

        #expect(trials("first-use-contention").count == 2 && outcomes("first-use-contention") == ["completed"],
                "\(trials("first-use-contention").map { "\($0.strategy): \($0.outcome)" })")
        #expect(outcomes("bus-error") == ["crashed(SIGBUS)"])
        #expect(outcomes("divide-by-zero") == ["crashed(SIGFPE)"])
        #expect(outcomes("fatal-error") == ["crashed(SIGILL)"])
        #expect(trials("fatal-error").count == 2 && trials("fatal-error").allSatisfy { $0.stderr?.contains("Fatal error: the fault scenario called fatalError on purpose") == true })
        #expect(outcomes("index-out-of-range") == ["crashed(SIGILL)"])
        #expect(trials("index-out-of-range").count == 2 && trials("index-out-of-range").allSatisfy { $0.stderr?.contains("Fatal error: Index out of range") == true })
        // The probe read the runtime's own words in the child too, apart from its standard error.
        #expect(trials("index-out-of-range").allSatisfy { $0.lastWords?.hasSuffix("Fatal error: Index out of range") == true },
                "\(trials("index-out-of-range").map(\.lastWords))")
        #expect(outcomes("integer-overflow") == ["crashed(SIGILL)"])
        #expect(trials("integer-overflow").count == 2 && trials("integer-overflow").allSatisfy { $0.trace?.firstFrames.first?.symbol?.contains("FaultScenario.fail") == true })
        #expect(trials("integer-overflow").allSatisfy { CrashReason.message(for: $0) == "Swift runtime failure: arithmetic overflow" },
                "an overflow's reason is the runtime's name for its trap, from the debug information")
        #expect(outcomes("cxx-terminate") == ["crashed(SIGABRT)"])
        #expect(trials("cxx-terminate").first?.stderr?.contains("terminate called without an active exception") == true)
        let overflows = record.trials.filter { $0.scenario == "stack-depth" }
        #expect(overflows.map(\.strategy.description) == ["main", "gcd-global", "thread(512KiB)", "task", "thread(32KiB)"])
        #expect(overflows.allSatisfy { $0.outcome.kind == .stackOverflow && $0.trace?.isStackOverflow == true })

        let stubborn = try #require(trials("ignore-sigterm").first)
        #expect(stubborn.outcome.kind == .timedOut)
        // It ignores SIGTERM and loops for ever: that it ended at all is SIGKILL's doing,
        // and not before the deadline (1 s) and the grace period (1 s) had passed.
        #expect((stubborn.metrics.trialSeconds ?? 0) >= 2, "SIGKILL came after the 1 s deadline and the 1 s grace: \(stubborn.metrics.trialSeconds ?? 0)")

        let flood = try #require(trials("flood-output").first)
        #expect(flood.outcome.kind == .completed)
        #expect(flood.stdout?.hasSuffix("[… \(16 * 1024 * 1024 - 64 * 1024) more bytes not kept]") == true)
        #expect(flood.stderr?.hasSuffix("[… \(16 * 1024 * 1024 - 64 * 1024) more bytes not kept]") == true)

        let grandchild = try #require(trials("grandchild").first)
        #expect(grandchild.outcome.kind == .completed)
        let pid = try #require(grandchild.stdout?.split(separator: " ").last.flatMap { Int32($0.trimmingCharacters(in: .whitespacesAndNewlines)) })
        #expect(await Processes.waitUntilGone(pid, seconds: 5), "the grandchild died with its trial's process group")
        let escaped = try #require(trials("session-grandchild").first)
        #expect(escaped.outcome.kind == .completed, "\(escaped.outcome)")
        let escapedPID = try #require(escaped.stdout?.split(separator: " ").last.flatMap { Int32($0.trimmingCharacters(in: .whitespacesAndNewlines)) })
        #expect(await Processes.waitUntilGone(escapedPID, seconds: 5), "a grandchild in a session of its own was adopted by the runner and killed")

        #expect(trials("memory-exhaustion").first?.outcome.kind == .threw)
        #expect(trials("memory-exhaustion").first?.outcome.message?.contains("under a limit of 512 MiB") == true)
        let bomb = try #require(trials("thread-bomb").first)
        #expect(bomb.outcome.description == "crashed(SIGKILL)")
        #expect(bomb.outcome.message?.hasPrefix("the child started more than its limit of 200 threads") == true)

        #expect(trials("garbage-result").first?.outcome.kind == .harnessError)
        #expect(trials("garbage-result").first?.outcome.message?.hasPrefix("the result pipe broke the child protocol: a RESULT line that is not a versioned JSON report: 'RESULT {not json\\x00\\x1b[2J") == true)
        #expect(trials("exit-zero-without-result").first?.outcome.message?.hasPrefix("the child exited with status 0 without a result") == true)
        #expect(trials("exit-mid-trial").first?.outcome.message?.hasPrefix("the child exited with status 3 without a result") == true)
        #expect(record.trials.filter { $0.outcome.kind == .harnessError }.count == 3, "only the protocol breakers are harness errors")
        // The count names the harness errors that make the exit code 3, and a trial's process that exited without a
        // result may be the code under test's exit, not Strain's failure (re-trial 35q, F1).
        #expect((result.stdout + result.stderr).contains("3 unexpected (harnessError: exit code 3)"), "\(result.stdout)\(result.stderr)")
        let exited = OutcomeAdvice.text(for: try #require(trials("exit-mid-trial").first))
        #expect(exited.hasPrefix("The trial's process exited before it sent its result") && exited.contains("If the code under test calls exit"), "\(exited)")
        let garbled = OutcomeAdvice.text(for: try #require(trials("garbage-result").first))
        #expect(garbled.contains("Code under test that writes to or closes file descriptors it did not open"), "\(garbled)")

        // Exit 3 outranks exit 1, so the status alone would hide an unexpected outcome
        // elsewhere: every trial but the three protocol breakers ended as the suite expects.
        let breakers: Set<String> = ["garbage-result", "exit-zero-without-result", "exit-mid-trial"]
        let unexpected = record.trials.filter { !$0.expected }
        #expect(Set(unexpected.compactMap { $0.parameters["kind"] }) == breakers && unexpected.count == 3,
                "unexpected: \(unexpected.map { "\($0.id): \($0.outcome)" })")
        #expect(record.trials.count == 29, "every planned trial ran: \(record.trials.map(\.id.description))")
    }

    @Test func anInvariantThatNeverHoldsEndsInvariantViolatedWithTheScenariosMessage() async throws {
        let (result, run, _) = try await StrainBinary.runSuiteLeavingNothing("""
        name: invariant
        runs:
          - scenario: fault
            parameters: {kind: broken-invariant}
            strategies: [main, gcd-global, thread(512KiB)]
            expect: invariantViolated
        """)
        #expect(result.status == 0, "the expected outcome, so the run passes: \(result.stdout)\n\(result.stderr)")
        let record = try #require(run)
        #expect(record.trials.count == 3)
        for trial in record.trials {
            #expect(trial.outcome.kind == .invariantViolated, "\(trial.id): \(trial.outcome)")
            #expect(trial.outcome.message == "the fault scenario broke its invariant on purpose: counted 2 items, 1 expected", "\(trial.id): \(trial.outcome)")
            #expect(trial.expected)
        }
        #expect(result.stdout.contains("invariantViolated"), "the terminal names the outcome: \(result.stdout)")
    }
}

/// The child protocol's decoder on bytes, without a child.
@Suite struct ChildProtocolTests {
    func report(version: Int = HostReport.currentVersion) throws -> String {
        var report = HostReport(outcome: TrialOutcome(kind: .completed), metrics: TrialMetrics(), threads: [], threadsAtStart: 1)
        report.version = version
        return HostReport.linePrefix + String(decoding: try JSONEncoder().encode(report), as: UTF8.self) + "\n"
    }

    @Test func aReportAndARemoteUnwindRequestDecodeInOrder() throws {
        let messages = ChildProtocol.decode(Array((try report() + "REMOTE-UNWIND 12 13\n").utf8))
        #expect(messages.problem == nil)
        #expect(messages.report?.outcome.kind == .completed)
        #expect(messages.remoteUnwindRequest == [12, 13])
    }

    @Test func aReportOfAnotherVersionIsRefusedNotGuessedAt() throws {
        let messages = ChildProtocol.decode(Array(try report(version: 99).utf8))
        #expect(messages.report == nil)
        #expect(messages.problem == "a report of version 99; this runner reads version 1 (a child built from another Strain?)")
    }

    @Test func aFaultRecordOfAnotherVersionIsRefused() {
        let messages = ChildProtocol.decode(Array("STRAIN-FAULT 2\nsignal 11\nEND\n".utf8))
        #expect(messages.fault == nil)
        #expect(messages.problem == "a fault record of version 2; this runner reads version 1 (a child built from another Strain?)")
    }

    @Test func aFaultRecordDecodesWithItsVersionChecked() {
        let messages = ChildProtocol.decode(Array("STRAIN-FAULT 1\nsignal 11\noverflow 1\nframes_total 0\nEND\n".utf8))
        #expect(messages.problem == nil)
        #expect(messages.fault?.signal == 11)
        #expect(messages.fault?.isOverflow == true)
        #expect(messages.fault?.isComplete == true)
    }

    @Test func markersFoundInsideOtherBytesAreGarbageNotMessages() {
        let messages = ChildProtocol.decode(Array("hello STRAIN-FAULT 1\nsignal 11\nEND\n".utf8))
        #expect(messages.fault == nil)
        #expect(messages.problem == "bytes that are no Strain message: 'hello STRAIN-FAULT 1'")
    }

    @Test func aMessageCutShortIsAProblemOnlyOnceThePipeIsClosed() {
        let bytes = Array("RESULT {\"vers".utf8)
        #expect(ChildProtocol.decode(bytes, final: false).isEmpty)
        #expect(ChildProtocol.decode(bytes).problem == "a message cut short: 'RESULT {\"vers'")
        #expect(ChildProtocol.decode([]).isEmpty)
    }

    @Test func terminationStatusDecodesExitsSignalsAndIgnoresStops() {
        #expect(TerminationStatus(waitStatus: 3 << 8) == .exited(3))
        #expect(TerminationStatus(waitStatus: SIGSEGV) == .signaled(SIGSEGV))
        #expect(TerminationStatus(waitStatus: SIGSEGV | 0x80) == .signaled(SIGSEGV), "a core dump is still that signal")
        #expect(TerminationStatus(waitStatus: (SIGSTOP << 8) | 0x7f) == nil)
    }

    @Test func theStallVerdictIsOneRule() {
        func judge(pending: Int = 1, waiting: Int = 0, silent: Double = 3, running: Bool = false, untimed: Bool = true, quiet: Bool = true) -> StallVerdict? {
            StallVerdict.judge(pending: pending, waitingForThread: waiting, silentSeconds: silent, thresholdSeconds: 2,
                               anyHolderRunning: running, holdersInUntimedWait: untimed, othersQuiet: quiet, queued: 10)
        }
        #expect(judge(waiting: 4) == .starved(waiting: 4, queued: 10))
        #expect(judge() == .deadlocked)
        #expect(judge(pending: 0) == nil, "nothing pending is not a stall")
        #expect(judge(silent: 1) == nil, "below the threshold")
        #expect(judge(running: true) == nil, "a holder on a CPU is slow, not stuck")
        #expect(judge(untimed: false) == nil)
        #expect(judge(quiet: false) == nil, "another thread could still wake them")
    }

    @Test func theClassifierCallsAChildThatSaidNothingAndExitedZeroAHarnessError() {
        var watched = Watched()
        watched.termination = .exited(0)
        let classifier = OutcomeClassifier(traceBuilder: TraceBuilder(symbolizer: Symbolizer()), dumpBuilder: ThreadDumpBuilder(symbolizer: Symbolizer()))
        let classified = classifier.classify(watched, timeoutSeconds: 5, stallSeconds: 2)
        #expect(classified.outcome.kind == .harnessError)
        watched.termination = .signaled(SIGKILL)
        #expect(classifier.classify(watched, timeoutSeconds: 5, stallSeconds: 2).outcome.description == "crashed(SIGKILL)")
        watched.timedOut = true
        #expect(classifier.classify(watched, timeoutSeconds: 5, stallSeconds: 2).outcome.kind == .timedOut)
    }
}
