internal import CStrainProbe
import Foundation
import Glibc
import StrainKit
import StrainSymbols
import StrainWire

/// Turns what the parent saw of a child (`Watched`) and what the child said
/// (`ChildMessages`) into the trial's outcome, metrics, trace and dump.
///
/// A pure function of its inputs (apart from symbolizing addresses), so every
/// path can be tested without a child. The stall verdict at a deadline comes from
/// `StallVerdict`, the rule the child's watchdog uses too.
package struct OutcomeClassifier: Sendable {
    package let traceBuilder: TraceBuilder
    package let dumpBuilder: ThreadDumpBuilder
    /// Names the frames of confinement violations (and a program's data objects under `strain exec`).
    package let symbolizer: Symbolizer

    package init(traceBuilder: TraceBuilder, dumpBuilder: ThreadDumpBuilder, symbolizer: Symbolizer = Symbolizer()) {
        self.traceBuilder = traceBuilder
        self.dumpBuilder = dumpBuilder
        self.symbolizer = symbolizer
    }

    /// The classified trial, before the parent's own measurements are merged in.
    package struct Classified {
        package var outcome: TrialOutcome
        package var metrics = TrialMetrics()
        package var trace: FaultTrace?
        package var dump: ThreadDump?
        package var stall: StallReport?
        package var confinement: [ConfinementViolation]?
        package var allocationSites: [AllocationSite]?
        /// The runtime's last words, as the child's fault handler read them.
        package var lastWords: String?
        /// A `harnessError` the child itself caused (it broke the result protocol, or
        /// exited without a result), not the runner: in a process where a race was seen,
        /// the race may have corrupted the harness's memory (`SanitizedTrials.outcome`).
        package var childEndedWithoutResult = false

        /// An outcome with no evidence yet.
        package init(outcome: TrialOutcome) { self.outcome = outcome }
    }

    package func classify(_ watched: Watched, timeoutSeconds: Double, stallSeconds: Double) -> Classified {
        let messages = ChildProtocol.decode(watched.result.bytes)
        var classified = classify(watched, messages: messages, timeoutSeconds: timeoutSeconds, stallSeconds: stallSeconds)
        // What `prepare` recorded survives a trial that crashed or hung after it; a
        // report's own values, recorded later, win.
        if let prepared = messages.preparedMetrics {
            classified.metrics.custom.merge(prepared.custom) { reported, _ in reported }
        }
        return classified
    }

    private func classify(_ watched: Watched, messages: ChildMessages, timeoutSeconds: Double, stallSeconds: Double) -> Classified {
        if let limit = watched.overThreadLimit {
            return Classified(outcome: TrialOutcome(kind: .crashed, signal: SIGKILL,
                message: "the child started more than its limit of \(limit) threads (\(watched.peakThreads) sampled) and was killed with its process group"))
        }
        if let fault = messages.fault {
            return classify(fault)
        }
        if let report = messages.report {
            return classify(report, watched: watched)
        }
        if let problem = messages.problem {
            let ended = watched.termination.map { "; the child \($0)" } ?? ""
            var classified = Classified(outcome: TrialOutcome(kind: .harnessError, message: "the result pipe broke the child protocol: \(problem)\(ended)"))
            classified.childEndedWithoutResult = true
            return classified
        }
        if watched.timedOut {
            return classifyDeadline(watched, timeoutSeconds: timeoutSeconds, stallSeconds: stallSeconds)
        }
        switch watched.termination {
        case .signaled(let signal)?:
            return Classified(outcome: TrialOutcome(kind: .crashed, signal: signal,
                message: "the child died of \(SignalName.of(signal)) without a fault record (a thread without an alternate signal stack, or a signal from outside)"))
        case .exited(let code)?:
            let tail = String(decoding: watched.error.bytes.suffix(400), as: UTF8.self)
            var classified = Classified(outcome: TrialOutcome(kind: .harnessError,
                message: "the child exited with status \(code) without a result (the scenario called exit, or the harness failed)\(tail.isEmpty ? "" : ": \(tail)")"))
            classified.childEndedWithoutResult = true
            return classified
        case nil:
            return Classified(outcome: TrialOutcome(kind: .harnessError, message: "the child was never reaped"))
        }
    }

    /// A fault record's outcome (overflow or crash), trace and stack metrics, whoever
    /// wrote it: a trial's handler on the result pipe, or the probe in a program under
    /// `strain exec` (and in each of its processes).
    package func classify(_ fault: FaultRecord) -> Classified {
        let built = traceBuilder.trace(from: fault)
        var classified = Classified(outcome: TrialOutcome(kind: fault.isOverflow ? .stackOverflow : .crashed, signal: fault.signal,
                                                          message: fault.isComplete ? nil : "the fault record was cut short"))
        classified.trace = built
        classified.lastWords = fault.lastWords
        classified.metrics.stackSizeBytes = built.stackSizeBytes
        classified.metrics.stackHighWaterBytes = fault.isOverflow ? built.stackSizeBytes : nil
        classified.metrics.depth = built.markedDepth
        classified.metrics.frames = fault.totalFrames
        // As it faulted: the parent's samples, 5 ms apart, can miss a trial that dies at once.
        classified.metrics.peakThreads = fault.threads
        classified.metrics.peakRSSBytes = fault.peakRSSBytes
        return classified
    }

    private func classify(_ report: HostReport, watched: Watched) -> Classified {
        var classified = Classified(outcome: report.outcome)
        classified.metrics = report.metrics
        if var raw = report.dump {
            for index in raw.threads.indices {
                guard let stack = watched.remoteStacks[raw.threads[index].tid] else { continue }
                raw.threads[index].frames = stack.frames
                raw.threads[index].viaPtrace = true
            }
            classified.dump = dumpBuilder.dump(from: raw)
        }
        classified.stall = report.stall
        if let raw = report.confinementViolations {
            classified.confinement = raw.map { ConfinementNaming.named($0, maps: report.maps ?? "", symbolizer: symbolizer) }
        }
        if let raw = report.allocationSites, !raw.isEmpty {
            classified.allocationSites = AllocationNaming.named(raw, maps: report.maps ?? "", symbolizer: symbolizer)
        }
        if let last = report.lastHeartbeatNanoseconds, watched.lastResultRead > last {
            classified.stall?.recordedAfterSeconds = Double(watched.lastResultRead - last) / 1e9
        }
        return classified
    }

    /// A child that said nothing by its deadline: timed out, or starved or
    /// deadlocked when the shared heartbeat and its threads (walked with ptrace) say so.
    private func classifyDeadline(_ watched: Watched, timeoutSeconds: Double, stallSeconds: Double) -> Classified {
        let prefix = "no result within \(DurationText.format(timeoutSeconds))"
        var classified = Classified(outcome: TrialOutcome(kind: .timedOut, message: "\(prefix); the child was stopped"))
        guard let raw = watched.deadlineDump, raw.threads.contains(where: { !$0.frames.isEmpty }) else { return classified }
        classified.dump = dumpBuilder.dump(from: raw)
        let stuck = raw.threads.filter { $0.name != ChildEnvironment.watchdogThreadName }
        let allWaiting = !stuck.isEmpty && stuck.allSatisfy { ThreadState.isUntimedWait($0.wait) }
        let walked = "the child's watchdog did not report, so its threads were unwound through ptrace"
        if let beat = watched.deadlineHeartbeat {
            let silent = Double(watched.deadlineAt &- beat.last_event_ns) / 1e9
            let verdict = StallVerdict.judge(
                pending: beat.queued - beat.finished, waitingForThread: beat.queued - beat.started,
                silentSeconds: silent, thresholdSeconds: stallSeconds, anyHolderRunning: false,
                holdersInUntimedWait: allWaiting, othersQuiet: true, queued: beat.queued)
            let silentText = DurationText.format(silent)
            switch verdict {
            case .starved(let waiting, let queued)?:
                classified.outcome = TrialOutcome(kind: .starved, message: "\(prefix) and no progress for \(silentText): \(waiting) of \(queued) units wait for a thread (read from the shared heartbeat; \(walked))")
                return classified
            case .deadlocked?:
                classified.outcome = TrialOutcome(kind: .deadlocked, message: "\(prefix) and no progress for \(silentText); every thread waits with no timeout (\(walked))")
                return classified
            case nil:
                break
            }
            if beat.queued - beat.finished > 0, silent >= stallSeconds {
                classified.outcome.message! += "; its threads, unwound through ptrace, are in the record"
                return classified
            }
        }
        if allWaiting {
            // Every thread waiting with no timeout (the watchdog's sleep aside) can never go on.
            // The count is the dump's, less the watchdog's thread: it read `every thread (5)`
            // beside `6 threads dumped`.
            let every = stuck.count == raw.threads.count ? "every thread (\(stuck.count))"
                : "every thread but Strain's watchdog (\(stuck.count) of the \(raw.threads.count) dumped)"
            classified.outcome = TrialOutcome(kind: .deadlocked, message: "\(prefix) and \(every) waits with no timeout; the child reported no pending work, so its threads were unwound through ptrace")
        } else {
            classified.outcome.message! += "; its threads, unwound through ptrace, are in the record"
        }
        return classified
    }
}
