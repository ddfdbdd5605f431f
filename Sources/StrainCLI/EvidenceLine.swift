import StrainGate
import StrainRecords
import StrainReports
import StrainText

/// A trial's evidence in one line, for where a reader cannot follow a link to the
/// page (a pull-request comment, a CI log): its outcome with its message (or how long
/// it went without progress) and what the suite expected when it was not that, then the first frames of its trace, its stall's summary and
/// the thread group holding the work, or its first sanitizer report or confinement
/// violation. Cut to a length, with an ellipsis, so a row of a comment stays a line.
enum EvidenceLine {
    /// Frames of a trace or a sanitizer stack the line names.
    static let frames = 3

    /// `trial`'s evidence in at most `limit` characters (at least 40).
    static func line(_ trial: TrialRecord, limit: Int = 400) -> String {
        var outcome = trial.outcome.description + (trial.outcome.message.map { ": \($0)" } ?? "")
        if trial.outcome.message == nil, let stall = trial.stall {
            outcome += " after \(Format.duration(stall.silentSeconds)) without progress (threshold \(Format.duration(stall.thresholdSeconds)))"
        }
        if !trial.expected, !trial.expectedOutcomes.isEmpty { outcome += ", expected \(trial.expectedOutcomes.joined(separator: " or "))" }
        var parts = [outcome]
        if let trace = trial.trace {
            parts.append(TraceText.headline(trace))
            let names = trace.firstFrames.prefix(frames).map { ($0.symbol ?? "0x" + String($0.address, radix: 16)) + ($0.location.map { " at \($0)" } ?? "") }
            if !names.isEmpty { parts.append("at " + names.joined(separator: " ← ") + (trace.firstFrames.count > frames ? " ← …" : "")) }
        } else if let dump = trial.dump {
            if let cycle = dump.waitCycle { parts.append("wait cycle: \(cycle.description)") }
            if let group = dump.groups.first(where: \.inWork) ?? dump.groups.first { parts.append(DumpText.group(group)) }
        } else if let report = trial.sanitizerReports?.first {
            parts.append(report.headline)
            if let access = report.accesses.first { parts.append("\(access.title): \(SanitizerText.stack(Array(access.frames.prefix(frames))))") }
        } else if let violation = trial.confinementViolations?.first {
            parts.append(violation.summary)
        }
        return capped(parts.joined(separator: "; "), limit: limit)
    }

    /// `text`, or as much of it as fits `limit - 1` characters, cut after a whole word, and `…`
    /// (the terminal and gate.html cut `swift::ConcurrentRea…`: re-trial 35n, F2).
    static func capped(_ text: String, limit: Int) -> String {
        GateReport.capped(text, limit: max(40, limit))
    }
}
