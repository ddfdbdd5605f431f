import StrainKit

/// A suite file, parsed and validated: every name and value checked.
public struct Suite: Sendable {
    public var name: String
    public var description: String?
    /// The file it was read from.
    public var path: String
    public var repetitions: Int
    public var timeoutSeconds: Double
    /// Seconds without progress, while work is pending, before the watchdog steps in.
    public var stallSeconds: Double
    public var profiles: [Profile]
    public var runs: [SuiteRun]
    /// The gate's thresholds for the whole suite, by metric name.
    public var gate: [String: MetricThreshold] = [:]

    /// The watchdog's threshold when a suite does not set `stall:`.
    public static let defaultStallSeconds = 2.0

    /// The suite with its defaults filled in, as `run.json` records it.
    public var resolved: ResolvedSuite {
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
            gate: gate.isEmpty ? nil : gate
        )
    }
}

/// One `runs:` entry: a scenario, its parameter matrix and the strategies to run it on.
public struct SuiteRun: Sendable {
    public var scenario: String
    /// Every parameter of the scenario with the values to sweep, in the scenario's order.
    public var parameters: [(name: String, values: [String])]
    public var strategies: [StrategySpec]
    public var profiles: [Profile]
    public var repetitions: Int
    public var timeoutSeconds: Double
    public var stallSeconds: Double
    /// Accepted outcomes by strategy name; the key `default` covers the rest.
    public var expectations: [String: [ExpectedOutcome]]
    /// The gate's thresholds for this run's trials, by metric name.
    public var gate: [String: MetricThreshold] = [:]
    /// The line of the suite file where the entry starts.
    public var line: Int?

    /// What the suite accepts for a trial on `strategy`.
    public func expected(for strategy: StrategySpec) -> [ExpectedOutcome] {
        expectations[strategy.description] ?? expectations["default"] ?? [ExpectedOutcome(kind: .completed)]
    }
}
