import StrainRecords
import StrainText

/// Every trial with its verdict, per scenario in run order: a trial the suite
/// did not expect is a failure (a harness error is an error) with its message
/// and the head of its trace or dump.
package struct TrialCases: Sendable {
    /// Why a trial failed, as junit.xml says it.
    package struct Failure: Sendable {
        /// `failure`, or `error` for a harness error.
        package var tag: String
        /// `crashed(SIGABRT), expected completed: … — reason`.
        package var message: String
        /// The outcome's kind: `crashed`.
        package var type: String
        /// The outcome, its message and reason, then the trace's or dump's lines.
        package var details: String
    }

    /// One trial.
    package struct Case: Sendable {
        /// `noop main linux #1`.
        package var name: String
        /// The trial's time.
        package var seconds: Double
        /// nil when the outcome was expected.
        package var failure: Failure?
        /// The child's standard output and error, as kept.
        package var stdout: String?
        package var stderr: String?
    }

    /// One scenario's trials.
    package struct Scenario: Sendable {
        /// The scenario.
        package var name: String
        /// Its trials, in run order.
        package var cases: [Case]
        /// Its unexpected trials but harness errors, and its harness errors.
        package var failures: Int
        package var errors: Int
        /// Its trials' time, summed.
        package var seconds: Double
        /// When its first trial started.
        package var startedAt: String?
        /// Its trials, for the page's thread timelines.
        package var trials: [TrialRecord]
    }

    /// The scenarios, in run order.
    package var scenarios: [Scenario]
    /// Trials in the run.
    package var count: Int
    /// Unexpected trials but harness errors; harness errors; all trials' time.
    package var failures: Int { scenarios.map(\.failures).reduce(0, +) }
    package var errors: Int { scenarios.map(\.errors).reduce(0, +) }
    package var seconds: Double

    init(_ run: RunRecord) {
        let names = run.trials.map(\.scenario).reduce(into: [String]()) { if !$0.contains($1) { $0.append($1) } }
        scenarios = names.map { name in
            let trials = run.trials.filter { $0.scenario == name }
            return Scenario(name: name, cases: trials.map(Self.testCase),
                            failures: trials.filter { !$0.expected && $0.outcome.kind != .harnessError }.count,
                            errors: trials.filter { !$0.expected && $0.outcome.kind == .harnessError }.count,
                            seconds: trials.compactMap(\.metrics.trialSeconds).reduce(0, +), startedAt: trials.first?.startedAt, trials: trials)
        }
        count = run.trials.count
        seconds = run.trials.compactMap(\.metrics.trialSeconds).reduce(0, +)
    }

    static func testCase(_ trial: TrialRecord) -> Case {
        var failure: Failure?
        if !trial.expected {
            var message = "\(trial.outcome.description), expected \(trial.expectedOutcomes.joined(separator: " or "))"
            if let detail = trial.outcome.message { message += ": \(detail)" }
            if let reason = CrashReason.message(for: trial) { message += " — \(reason)" }
            failure = Failure(tag: trial.outcome.kind == .harnessError ? "error" : "failure", message: message, type: trial.outcome.kind.rawValue, details: details(trial))
        }
        return Case(name: trial.id.description, seconds: trial.metrics.trialSeconds ?? 0, failure: failure, stdout: trial.stdout, stderr: trial.stderr)
    }

    /// The outcome's message, then the head of its trace or its dump.
    static func details(_ trial: TrialRecord) -> String {
        var lines = ["outcome: \(trial.outcome.description)"]
        if let message = trial.outcome.message { lines.append(message) }
        if let reason = CrashReason.message(for: trial) { lines.append("reason: \(reason)") }
        if let trace = trial.trace {
            lines.append(TraceText.headline(trace))
            lines += TraceText.lines(trace)
        }
        if let dump = trial.dump {
            if let cycle = dump.waitCycle { lines.append("wait cycle: \(cycle.description)") }
            lines += dump.groups.prefix(6).map { DumpText.group($0) }
        }
        return lines.joined(separator: "\n")
    }
}
