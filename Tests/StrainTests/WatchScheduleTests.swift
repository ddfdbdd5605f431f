import Glibc
import StrainRecords
import StrainWire
import Testing
@testable import StrainRunner

/// The watch's decisions, each step alone with made-up times: no child, no clock.
@Suite struct WatchScheduleTests {
    let second: UInt64 = 1_000_000_000

    func schedule(limit: Int? = nil) -> WatchSchedule {
        WatchSchedule(deadline: 10 * second, samplingInterval: 0.005,
                      teardown: TeardownStep.gentleThenForced(graceSeconds: 1), threadLimit: limit)
    }

    @Test func beforeTheDeadlineOnlySamplesAreDueAndEachAfterTheInterval() {
        var watch = schedule()
        #expect(watch.due(now: 0, stopRequested: false) == [.sample])
        #expect(watch.due(now: 1_000_000, stopRequested: false) == [])
        #expect(watch.due(now: 5_000_000, stopRequested: false) == [.sample])
        #expect(!watch.timedOut && !watch.stopped)
    }

    @Test func theDeadlineIsSeenOnceThenSIGTERMAtOnceAndSIGKILLAfterTheGrace() {
        var watch = schedule()
        _ = watch.due(now: 0, stopRequested: false)
        #expect(watch.due(now: 10 * second, stopRequested: false) == [.deadlinePassed, .signalGroup(SIGTERM), .sample])
        #expect(watch.timedOut)
        #expect(watch.due(now: 10 * second + second / 2, stopRequested: false) == [.sample], "the grace is not over")
        #expect(watch.due(now: 11 * second, stopRequested: false) == [.signalGroup(SIGKILL), .sample])
        #expect(watch.due(now: 30 * second, stopRequested: false) == [.sample], "no step after the last, and the deadline once")
    }

    @Test func aRunnerStopKillsTheGroupOnceWhateverTheTime() {
        var watch = schedule()
        #expect(watch.due(now: 0, stopRequested: true) == [.stopForRunner, .sample])
        #expect(watch.due(now: 1, stopRequested: true) == [])
        #expect(watch.stopped && !watch.timedOut)
    }

    @Test func aChildOverItsThreadLimitIsKilledOnceAndOnlyOverIt() {
        var watch = schedule(limit: 8)
        #expect(watch.sampled(peakThreads: 8) == nil, "at the limit is allowed")
        #expect(watch.sampled(peakThreads: 9) == .signalGroup(SIGKILL))
        #expect(watch.overThreadLimit == 8)
        #expect(watch.sampled(peakThreads: 12) == nil, "killed once")
        var unlimited = schedule()
        #expect(unlimited.sampled(peakThreads: 10_000) == nil)
        #expect(unlimited.overThreadLimit == nil)
    }

    @Test func aRemoteUnwindRequestIsAnsweredOnceAndNeverAfterTheChildEnded() {
        let request = Array("RESULT {}\nREMOTE-UNWIND 12 13\n".utf8)
        var ended = schedule()
        #expect(ended.remoteUnwind(result: request, reaped: true) == nil)
        var running = schedule()
        #expect(running.remoteUnwind(result: Array("RESULT {}\nREMOTE-UNWIND 12 1".utf8), reaped: false) == nil, "an unfinished line")
        #expect(running.remoteUnwind(result: request, reaped: false) == [12, 13])
        #expect(running.remoteUnwindDone)
        #expect(running.remoteUnwind(result: request, reaped: false) == nil, "answered once")
    }

    @Test func aPollWaitsUntilTheNextSampleOrTheDeadlineAndNeverOnceReaped() {
        let watch = schedule()
        #expect(watch.pollMilliseconds(now: 0, reaped: false) == 5)
        #expect(watch.pollMilliseconds(now: 10 * second - 2_000_000, reaped: false) == 2)
        #expect(watch.pollMilliseconds(now: 12 * second, reaped: false) == 1, "past the deadline: at least 1 ms")
        #expect(watch.pollMilliseconds(now: 0, reaped: true) == 0)
    }
}

/// The one record builder, alone: what every trial's record is made of, a suite's or a program's.
@Suite struct TrialRecordBuilderTests {
    func spec(expected: [ExpectedOutcome] = [ExpectedOutcome(kind: .completed)]) -> TrialSpec {
        let key = TrialKey(scenario: "noop", parameters: [], strategy: .main, profile: .linux)
        return TrialSpec(index: 3, id: TrialID(key: key, repetition: 2), seed: 7, timeoutSeconds: 5, stallSeconds: 1, expected: expected)
    }

    @Test func theParentsMeasurementsFillWhatTheProcessDidNotReportAndNeverOverwriteIt() {
        var classified = OutcomeClassifier.Classified(outcome: .completed)
        classified.metrics.userSeconds = 0.25
        var watched = Watched()
        watched.usage.ru_utime = timeval(tv_sec: 3, tv_usec: 0)
        watched.usage.ru_stime = timeval(tv_sec: 1, tv_usec: 500_000)
        watched.usage.ru_nvcsw = 4
        watched.peakRSSBytes = 8 << 20
        watched.peakThreads = 5
        let record = TrialRecordBuilder().record(spec(), classified, watched: watched, trialSeconds: 0.75, sanitizerReports: [], startedAt: "t")
        #expect(record.metrics.userSeconds == 0.25, "the process's own figure wins")
        #expect(record.metrics.systemSeconds == 1.5)
        #expect(record.metrics.voluntaryContextSwitches == 4)
        #expect(record.metrics.peakRSSBytes == 8 << 20)
        #expect(record.metrics.peakThreads == 5)
        #expect(record.metrics.trialSeconds == 0.75)
        #expect(record.expected && record.index == 3 && record.repetition == 2 && record.seed == 7)
    }

    @Test func aProcessNeverSampledAndSilentHasNoThreadCountRatherThanZero() {
        let record = TrialRecordBuilder().record(spec(), OutcomeClassifier.Classified(outcome: .completed), watched: Watched(),
                                                 trialSeconds: 0.01, sanitizerReports: [], startedAt: "t")
        #expect(record.metrics.peakThreads == nil)
        #expect(record.threadTimeline == nil)
    }

    @Test func aLongTimelineIsThinnedToTheCapAndTheGradeFollowsTheSpec() {
        var watched = Watched()
        watched.timeline = (0..<500).map { ThreadSample(seconds: Double($0) / 100, threads: $0 == 250 ? 99 : 1 + $0 % 3) }
        let record = TrialRecordBuilder(timelineCap: 50).record(spec(expected: [ExpectedOutcome(kind: .deadlocked)]),
                                                                OutcomeClassifier.Classified(outcome: .completed), watched: watched,
                                                                trialSeconds: 5, sanitizerReports: [], startedAt: "t")
        #expect((record.threadTimeline?.count ?? 0) <= 50)
        #expect(record.threadTimeline?.contains { $0.threads == 99 } == true, "the peak survives")
        #expect(!record.expected, "completed where the spec expects deadlocked")
    }
}
