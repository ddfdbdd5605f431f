internal import CStrainProbe
internal import CStrainTools
import Foundation
import Glibc
import StrainKit
import StrainSuite
import StrainWire

/// Runs a plan trial by trial: each in its own child, each recorded in the
/// journal as it ends, then the whole run written as `run.json`.
///
/// A journal opened to resume brings the trials it already holds: those are not
/// run again, and the run's record holds each trial ID once, in plan order. A stop
/// signal (`RunnerSignals`) ends the loop after the trial in flight is killed; the
/// record is then written with `interrupted: true`.
package struct RunController: Sendable {
    package var supervisor: TrialSupervisor
    /// The metrics the plan's scenarios declare, recorded in run.json.
    package var customMetrics: [MetricDescriptor]
    /// The ranking tables the plan's scenarios ask for, recorded in run.json.
    package var rankings: [MetricRanking] = []

    package init(supervisor: TrialSupervisor, customMetrics: [MetricDescriptor] = []) {
        self.supervisor = supervisor
        self.customMetrics = customMetrics
    }

    /// The trials of `plan` a journal does not hold yet, in plan order.
    package static func remaining(_ plan: Plan, after finished: [TrialRecord]) -> [TrialSpec] {
        let done = Set(finished.map(\.id))
        return plan.trials.filter { !done.contains($0.id) }
    }

    /// Runs every trial of `plan` the journal does not hold, appending each to it,
    /// and writes run.json to `runJSONPath`. `progress` hears of each trial as it
    /// ends, with the count of finished trials and the plan's size.
    ///
    /// With `jobs` above 1, that many trials run at once on worker threads; they
    /// finish out of order, and each is journaled and reported as it finishes,
    /// on the calling thread. run.json lists them in plan order all the same.
    package func run(_ plan: Plan, planRecord: PlanRecord, journal: Journal, runJSONPath: String, jobs: Int = 1,
                    progress: (TrialRecord, Int, Int) -> Void) throws -> RunRecord {
        let startedAt = journal.finished.isEmpty ? Date().formatted(.iso8601) : journal.header?.startedAt ?? Date().formatted(.iso8601)
        var environment = EnvironmentProbe.current()
        let cpuAtStart = EnvironmentProbe.CPUTimes.now()
        let planned = Set(plan.trials.map(\.id))
        let finishedBefore = Set(journal.finished.map(\.id)).intersection(planned)
        // The trial server starts here, on the thread that runs the trials and outlives them.
        supervisor.prepareServers()
        let remaining = plan.trials.filter { !finishedBefore.contains($0.id) }
        var rss: [RunnerRSSSample] = []
        let sampleEvery = max(1, remaining.count / 10)
        var ran = 0
        // Each record goes to the journal and is let go: the runner's memory stays
        // flat however long the run, and run.json is built from the journal at the end,
        // read through the runner's own descriptor (whatever became of the file's path).
        func finished(_ record: TrialRecord) throws {
            try journal.append(record)
            progress(record, finishedBefore.count + ran + 1, plan.trials.count)
            ran += 1
            if ran == 1 || ran % sampleEvery == 0 || ran == remaining.count, let bytes = ProcessStatus.read("/proc/self/status")?.residentBytes {
                rss.append(RunnerRSSSample(trials: ran, bytes: bytes))
            }
        }
        var atOnce = min(1, remaining.count)
        if jobs <= 1 {
            for spec in remaining {
                if RunnerSignals.stopSignal != nil { break }
                guard let record = supervisor.runUnlessStopped(spec) else { break }
                try finished(record)
            }
        } else {
            atOnce = try TrialPool(jobs: jobs, supervisor: supervisor).run(remaining) { record in
                if let record { try finished(record) }
            }
        }
        environment.loadAverageEnd = EnvironmentProbe.loadAverage
        if let cpuAtStart, let cpuAtEnd = EnvironmentProbe.CPUTimes.now() {
            environment.stealFraction = cpuAtEnd.stealFraction(since: cpuAtStart)
        }
        var byID: [TrialID: TrialRecord] = [:]
        for record in try journal.readTrials() where planned.contains(record.id) && byID[record.id] == nil { byID[record.id] = record }
        let trials = plan.trials.compactMap { byID[$0.id] }
        byID.removeAll()
        var usage = rusage()
        getrusage(Int32(RUSAGE_SELF.rawValue), &usage)
        var run = RunRecord(
            suite: plan.suite.resolved, environment: environment, startedAt: startedAt,
            finishedAt: Date().formatted(.iso8601), runnerPeakRSSBytes: usage.ru_maxrss * 1024, trials: trials,
            customMetrics: customMetrics.isEmpty ? nil : customMetrics, plan: planRecord
        )
        run.execution = supervisor.executionRecord(jobs: max(1, atOnce))
        run.execution?.runnerRSS = rss.isEmpty ? nil : rss
        if trials.count < plan.trials.count { run.interrupted = true }
        if !rankings.isEmpty { run.rankings = rankings }
        try RunRecordFile.write(run, to: runJSONPath)
        // The journal at its path may have been deleted or replaced while the run ran
        // (the trials above came from the runner's own copy): put it back for `--resume`.
        try journal.keepOnDisk()
        return run
    }
}

/// The runner's stop signals, SIGINT, SIGTERM and SIGQUIT, heard as a flag the supervisor
/// polls (the handler in `CStrainProbe` only stores the signal's number).
package enum RunnerSignals {
    /// Catches SIGINT, SIGTERM and SIGQUIT (a second one ends the runner at once) and ignores SIGPIPE.
    package static func catchStopSignals() {
        _ = strain_runner_catch_stop_signals()
    }

    /// Makes the runner the subreaper of its descendants, so a trial's grandchild
    /// that left the trial's process group comes back to the runner to be killed.
    package static func adoptOrphans() {
        AdoptedOrphans.adopt()
    }

    /// The first stop signal the runner caught, nil while none has.
    package static var stopSignal: Int32? {
        let signal = strain_runner_stop_signal()
        return signal == 0 ? nil : signal
    }
}
