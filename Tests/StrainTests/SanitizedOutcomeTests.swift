import StrainKit
import StrainRunner
import Testing

/// How a trial's outcome reads once ThreadSanitizer's reports are in: a race in a
/// trial whose child ended without its result is the race, not "Strain itself failed".
@Suite struct SanitizedOutcomeTests {
    static let race = SanitizerReport(tool: .threadSanitizer, kind: "data race", pid: 7,
                                      accesses: [.init(title: "Write of size 8 by thread T3", frames: [Frame(address: 0x10, symbol: "visit(_:)")]),
                                                 .init(title: "Previous read of size 8 by thread T5", frames: [Frame(address: 0x20, symbol: "apply(_:)")])],
                                      location: [], threads: [], summary: "data race", count: 4, text: "WARNING: ThreadSanitizer: data race (pid=7)")
    static let exitedWithoutResult = TrialOutcome(kind: .harnessError, message: "the child exited with status 0 without a result (the scenario called exit, or the harness failed)")

    @Test func aChildThatExitedWithoutItsResultAfterARaceIsADataRaceThatSaysWhatHappened() {
        let outcome = SanitizedTrials.outcome(Self.exitedWithoutResult, reports: [Self.race], childEndedWithoutResult: true)
        #expect(outcome.kind == .dataRace)
        #expect(outcome.message?.contains("ThreadSanitizer reported 4 races (1 distinct)") == true, "\(outcome)")
        #expect(outcome.message?.contains("exited with status 0 without a result") == true, "what the child did is kept: \(outcome)")
    }

    @Test func aRunnerSideFailureOrAChildWithoutARaceStaysAHarnessError() {
        let stopped = TrialOutcome(kind: .harnessError, message: "the runner was stopped by a signal during this trial")
        #expect(SanitizedTrials.outcome(stopped, reports: [Self.race]).kind == .harnessError)
        #expect(SanitizedTrials.outcome(Self.exitedWithoutResult, reports: [], childEndedWithoutResult: true).kind == .harnessError)
    }

    /// A race corrupts memory: a crash in the process that raced is the race's, what it did kept.
    @Test func aCrashAfterARaceIsADataRaceThatSaysItCrashed() {
        let crashed = TrialOutcome(kind: .crashed, signal: 11, message: "the child died of SIGSEGV")
        let outcome = SanitizedTrials.outcome(crashed, reports: [Self.race])
        #expect(outcome.kind == .dataRace)
        #expect(outcome.message?.contains("then the trial crashed with SIGSEGV") == true, "\(outcome)")
    }

    @Test func anOverflowOrATimeoutAfterARaceStaysWhatItWas() {
        let overflow = TrialOutcome(kind: .stackOverflow, signal: 11)
        #expect(SanitizedTrials.outcome(overflow, reports: [Self.race]).kind == .stackOverflow)
        let timedOut = TrialOutcome(kind: .timedOut)
        #expect(SanitizedTrials.outcome(timedOut, reports: [Self.race]).kind == .timedOut)
    }
}
