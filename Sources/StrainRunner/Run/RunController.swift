import Foundation
import Glibc
import StrainKit

/// Runs a plan trial by trial: each in its own child, each recorded in the
/// journal as it ends, then the whole run written as `run.json`.
public struct RunController: Sendable {
    public var supervisor: TrialSupervisor
    public var outputDirectory: String
    /// The metrics the plan's scenarios declare, recorded in run.json.
    public var customMetrics: [MetricDescriptor]

    public init(supervisor: TrialSupervisor, outputDirectory: String, customMetrics: [MetricDescriptor] = []) {
        self.supervisor = supervisor
        self.outputDirectory = outputDirectory
        self.customMetrics = customMetrics
    }

    /// Paths of what a run writes.
    public var runJSONPath: String { (outputDirectory as NSString).appendingPathComponent("run.json") }
    public var journalPath: String { (outputDirectory as NSString).appendingPathComponent("trials.jsonl") }

    /// Runs every trial of `plan`; `progress` hears of each as it ends.
    /// Runs every trial of `plan`; `progress` hears of each as it ends. `planRecord`
    /// says what the whole plan was when `plan` is one shard of it.
    public func run(_ plan: Plan, planRecord: PlanRecord? = nil, progress: (TrialRecord, Int, Int) -> Void) throws -> RunRecord {
        try FileManager.default.createDirectory(atPath: outputDirectory, withIntermediateDirectories: true)
        let journal = try Journal(path: journalPath)
        let startedAt = Date().formatted(.iso8601)
        var environment = EnvironmentProbe.current()
        let cpuAtStart = EnvironmentProbe.CPUTimes.now()
        var trials: [TrialRecord] = []
        trials.reserveCapacity(plan.trials.count)
        for spec in plan.trials {
            let record = supervisor.run(spec)
            try journal.append(record)
            trials.append(record)
            progress(record, trials.count, plan.trials.count)
        }
        environment.loadAverageEnd = EnvironmentProbe.loadAverage
        if let cpuAtStart, let cpuAtEnd = EnvironmentProbe.CPUTimes.now() {
            environment.stealFraction = cpuAtEnd.stealFraction(since: cpuAtStart)
        }
        var usage = rusage()
        getrusage(Int32(RUSAGE_SELF.rawValue), &usage)
        let run = RunRecord(
            suite: plan.suite.resolved, environment: environment, startedAt: startedAt,
            finishedAt: Date().formatted(.iso8601), runnerPeakRSSBytes: usage.ru_maxrss * 1024, trials: trials,
            customMetrics: customMetrics.isEmpty ? nil : customMetrics,
            plan: planRecord ?? PlanRecord(hash: plan.identity, trialCount: plan.trials.count, shard: nil)
        )
        try RunRecordFile.write(run, to: runJSONPath)
        return run
    }
}

