import StrainRecords

/// Whether the two sides of a gate ran the same suite: their text hashes, and what
/// each run resolved. A difference is a warning, not a failure: rows still join by
/// trial key, but a changed timeout, expectation or threshold changes what a row means.
/// Repetitions are not a difference (`--repetitions`, or the suite's): the gate's rules
/// already say what each side's count of repetitions allows it to judge.
package enum SuiteDifference {
    /// The sides' stack limits (`ulimit -s`, run.json's `rlimits.stack`) when they differ:
    /// the main thread's stack is that limit, so an outcome on it (and on a strategy that
    /// takes its size from it) can change for that alone, and the machines' fingerprint
    /// does not hold it (a flip under `ulimit -s 512` was blamed on the code: re-trial 35q, F3).
    package static func stackLimitWarning(baseline: EnvironmentRecord, candidate: EnvironmentRecord) -> String? {
        guard let old = baseline.rlimits["stack"], let new = candidate.rlimits["stack"], old != new else { return nil }
        let said = { (bytes: Int) in bytes < 0 ? "unlimited" : ByteSize.prose(bytes) }
        return "The runs' stack limits differ (ulimit -s: \(said(old)) for the baseline, \(said(new)) for the candidate): "
            + "an outcome on the main thread, whose stack that limit sets, can change for that alone."
    }

    /// One sentence naming what differs, or nil when the suites agree (or neither
    /// side recorded enough to tell).
    package static func warning(baseline: ResolvedSuite, candidate: ResolvedSuite) -> String? {
        var changed: [String] = []
        if baseline.name != candidate.name { changed.append("name \(baseline.name) → \(candidate.name)") }
        if baseline.description != candidate.description { changed.append("description") }
        if baseline.timeoutSeconds != candidate.timeoutSeconds { changed.append("timeout \(seconds(baseline.timeoutSeconds)) → \(seconds(candidate.timeoutSeconds))") }
        if baseline.stallSeconds != candidate.stallSeconds, baseline.stallSeconds != nil, candidate.stallSeconds != nil {
            changed.append("stall \(seconds(baseline.stallSeconds ?? 0)) → \(seconds(candidate.stallSeconds ?? 0))")
        }
        if baseline.profiles != candidate.profiles { changed.append("profiles \(baseline.profiles.joined(separator: ", ")) → \(candidate.profiles.joined(separator: ", "))") }
        if baseline.gate != candidate.gate { changed.append("the suite's gate thresholds") }
        // Entries by scenario, ignoring the line each sits on (moving an entry is not a
        // change) and the repetitions: they change how many samples a row has, not what
        // it measures (Strain's CI gates 1 repetition against a baseline of 3).
        func entries(_ suite: ResolvedSuite) -> [String: [ResolvedRun]] {
            Dictionary(grouping: suite.runs.map { run in var run = run; run.line = nil; run.repetitions = 0; return run }, by: \.scenario)
        }
        let (old, new) = (entries(baseline), entries(candidate))
        let scenarios = Set(old.keys).union(new.keys).sorted().filter { old[$0].map(Set.init) != new[$0].map(Set.init) }
        if !scenarios.isEmpty { changed.append("the runs: entries of \(scenarios.joined(separator: ", "))") }
        let textDiffers = baseline.textHash != nil && candidate.textHash != nil && baseline.textHash != candidate.textHash
        guard textDiffers || !changed.isEmpty else { return nil }
        var sentence = "The two sides ran different suite text"
        if let old = baseline.textHash, let new = candidate.textHash, old != new {
            sentence += " (baseline \(baseline.path) hashes \(old), candidate \(candidate.path) hashes \(new))"
        }
        sentence += changed.isEmpty
            ? "; what they resolved agrees (a comment or layout changed)."
            : "; changed: \(changed.joined(separator: "; ")). Rows still compare by trial key, but a row's settings may differ between the sides."
        return sentence
    }

    static func seconds(_ value: Double) -> String {
        value == value.rounded() ? "\(Int(value)) s" : "\(value) s"
    }
}
