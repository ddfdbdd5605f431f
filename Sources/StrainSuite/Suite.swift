import StrainKit

/// A suite file, parsed and validated: every name and value checked.
package struct Suite: Sendable {
    package var name: String
    package var description: String?
    /// The file it was read from.
    package var path: String
    package var repetitions: Int
    package var timeoutSeconds: Double
    /// Seconds without progress, while work is pending, before the watchdog steps in.
    package var stallSeconds: Double
    package var profiles: [Profile]
    package var runs: [SuiteRun]
    /// The gate's thresholds for the whole suite, by metric name.
    package var gate: [String: MetricThreshold] = [:]
    /// The file's text, hashed (`Suite.textHash`): the gate warns when two sides' differ.
    package var textHash: String?
    /// `measure:`: the counted passes every trial of the suite runs under (none by default).
    package var measures: [CountedMeasure] = []

    /// FNV-1a of a suite's text, 16 hex digits.
    package static func textHash(_ text: String) -> String {
        let hash = String(StableHash.fnv1a(text), radix: 16)
        return String(repeating: "0", count: 16 - hash.count) + hash
    }

    /// The watchdog's threshold when a suite does not set `stall:`.
    package static let defaultStallSeconds = 2.0

    /// The suite with its defaults filled in, as `run.json` records it.
    package var resolved: ResolvedSuite {
        ResolvedSuite(
            name: name, description: description, path: path, repetitions: repetitions,
            timeoutSeconds: timeoutSeconds, stallSeconds: stallSeconds, profiles: profiles.map(\.rawValue),
            runs: runs.map { run in
                ResolvedRun(
                    scenario: run.scenario,
                    parameters: run.parameters.map { ParameterSweep(name: $0.name, values: $0.values) },
                    strategies: run.strategies.map(\.description),
                    profiles: run.profiles.map(\.rawValue),
                    repetitions: run.repetitions,
                    timeoutSeconds: run.timeoutSeconds,
                    stallSeconds: run.stallSeconds,
                    expect: run.expectations.mapValues { $0.map(\.description) },
                    gate: run.gate.isEmpty ? nil : run.gate, line: run.line
                )
            },
            gate: gate.isEmpty ? nil : gate, textHash: textHash
        )
    }
}

/// A cost counted by running each trial under a tool, asked for by `measure:` or `--measure`.
package enum CountedMeasure: String, CaseIterable, Sendable {
    /// Instructions the scenario's measured work retired, counted by a perf counter where the
    /// machine has a PMU, else by Valgrind's callgrind.
    case instructions
}

/// One `runs:` entry: a scenario, its parameter matrix and the strategies to run it on.
package struct SuiteRun: Sendable {
    package var scenario: String
    /// Every parameter of the scenario with the values to sweep, in the scenario's order.
    package var parameters: [(name: String, values: [String])]
    package var strategies: [StrategySpec]
    package var profiles: [Profile]
    package var repetitions: Int
    package var timeoutSeconds: Double
    package var stallSeconds: Double
    /// `memory-limit:` in bytes and `thread-limit:`, nil when not set.
    package var memoryLimitBytes: Int?
    package var threadLimit: Int?
    /// Accepted outcomes by key: `PROFILE/STRATEGY`, `PROFILE/default`, a strategy's
    /// name, or `default` for the rest (`expected(for:profile:)` says which wins).
    package var expectations: [String: [ExpectedOutcome]]
    /// The gate's thresholds for this run's trials, by metric name.
    package var gate: [String: MetricThreshold] = [:]
    /// The line of the suite file where the entry starts.
    package var line: Int?

    /// What the suite accepts for a trial on `strategy` under `profile`: the most
    /// specific entry wins (the profile's for this strategy, the profile's default,
    /// the strategy's, then `default`), else `completed`.
    package func expected(for strategy: StrategySpec, profile: Profile) -> [ExpectedOutcome] {
        expectations["\(profile.rawValue)/\(strategy.description)"] ?? expectations["\(profile.rawValue)/default"]
            ?? expectations[strategy.description] ?? expectations["default"] ?? [ExpectedOutcome(kind: .completed)]
    }
}
