import Foundation
import Glibc
import StrainKit
import StrainWire

// One trial pipeline for `run`, `bisect` and `exec`, in four stages:
//
// 1. launch: `ProcessSpawn` starts every process (a spawned trial, the trial server
//    whose copies are trials, `strain exec`'s program);
// 2. watch: `ChildWatch` (a trial: its pipes, deadline and teardown) or the exec
//    watch (a program that owns the terminal) fills one `Watched`, sampling /proc
//    the same way (`Watched.sample`);
// 3. classify: `OutcomeClassifier` makes one `Classified` from what the process
//    said (a trial's result pipe, a program's probe folder); a fault record is
//    classified by the same code whoever wrote it;
// 4. record: `TrialRecordBuilder` joins the classified evidence with the parent's
//    own measurements and the sanitizer's reports, graded against the trial's spec.
//
// `TrialSupervisor` runs a suite's trials (and bisect's probes) through it;
// `ExecSupervisor` (StrainExec) runs a program through it as a one-trial run.

/// The one record builder every trial goes through, a suite's, a bisect probe's or
/// `strain exec`'s program: what the classifier made of the process, the parent's own
/// measurements of it (resource use, peak RSS and threads, the thread-count
/// timeline, the seconds it took) and the sanitizer's reports, graded against what
/// the trial's spec expects.
package struct TrialRecordBuilder: Sendable {
    /// Points kept in a trial's thread-count timeline; longer ones are thinned.
    package var timelineCap = 2000

    package init(timelineCap: Int = 2000) { self.timelineCap = timelineCap }

    /// The graded record of the trial `spec` describes.
    package func record(_ spec: TrialSpec, _ classified: OutcomeClassifier.Classified, watched: Watched, trialSeconds: Double,
                sanitizerReports: [SanitizerReport], startedAt: String) -> TrialRecord {
        var metrics = classified.metrics
        // What only the parent can see: the whole process's resource use, and the thread count it sampled.
        let usage = ResourceUsage(watched.usage)
        if metrics.userSeconds == nil { metrics.userSeconds = usage.userSeconds }
        if metrics.systemSeconds == nil { metrics.systemSeconds = usage.systemSeconds }
        // getrusage's ru_maxrss is inherited from the parent across posix_spawn's exec: use VmHWM.
        if metrics.peakRSSBytes == nil, watched.peakRSSBytes > 0 { metrics.peakRSSBytes = watched.peakRSSBytes }
        if metrics.voluntaryContextSwitches == nil { metrics.voluntaryContextSwitches = usage.voluntaryContextSwitches }
        if metrics.involuntaryContextSwitches == nil { metrics.involuntaryContextSwitches = usage.involuntaryContextSwitches }
        // A process that ended before its first sample and said nothing has no thread count, rather than 0.
        if metrics.peakThreads != nil || watched.peakThreads > 0 { metrics.peakThreads = max(metrics.peakThreads ?? 0, watched.peakThreads) }
        metrics.trialSeconds = trialSeconds

        let outcome = SanitizedTrials.outcome(classified.outcome, reports: sanitizerReports, childEndedWithoutResult: classified.childEndedWithoutResult)
        var record = TrialRecord(graded: spec, outcome: outcome, metrics: metrics, trace: classified.trace,
                                 stdout: watched.output.text, stderr: watched.error.text, startedAt: startedAt)
        record.dump = classified.dump
        record.stall = classified.stall
        record.confinementViolations = classified.confinement
        record.allocationSites = classified.allocationSites
        record.lastWords = classified.lastWords
        record.sanitizerReports = sanitizerReports.isEmpty ? nil : sanitizerReports
        record.threadTimeline = watched.timeline.isEmpty ? nil : Self.thinned(watched.timeline, to: timelineCap)
        return record
    }

    /// At most `cap` points, keeping the first, the last and each stretch's highest count.
    static func thinned(_ samples: [ThreadSample], to cap: Int) -> [ThreadSample] {
        guard samples.count > cap, cap >= 2 else { return samples }
        let stride = Double(samples.count - 2) / Double(cap - 2)
        var result = [samples[0]]
        var index = 1.0
        while Int(index) < samples.count - 1 && result.count < cap - 1 {
            let end = min(samples.count - 1, Int(index + stride))
            let stretch = samples[Int(index)..<max(Int(index) + 1, end)]
            result.append(stretch.max { $0.threads < $1.threads }!)
            index += stride
        }
        result.append(samples[samples.count - 1])
        return result
    }
}

extension Watched {
    /// Reads the process's thread count and peak RSS from /proc (`statusPath`), keeping
    /// the peaks and a timeline point where the count changed, `now - start` into the trial.
    package mutating func sample(_ statusPath: String, now: UInt64, start: UInt64) {
        guard let status = ProcessStatus.read(statusPath) else { return }
        let threads = status.threads ?? 0
        peakThreads = max(peakThreads, threads)
        peakRSSBytes = max(peakRSSBytes, status.peakRSSBytes ?? 0)
        if threads > 0, timeline.last?.threads != threads {
            timeline.append(ThreadSample(seconds: Double(now &- start) / 1e9, threads: threads))
        }
    }

    /// The timeline's last count carried to the process's end, `end - start` into the trial.
    package mutating func closeTimeline(end: UInt64, start: UInt64) {
        if let last = timeline.last {
            timeline.append(ThreadSample(seconds: Double(end &- start) / 1e9, threads: last.threads))
        }
    }
}
