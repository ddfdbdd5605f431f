import StrainKit

/// The trials a suite expands to: every run's scenario × parameter combination ×
/// profile × repetition × strategy, in that nesting, so each repetition runs
/// the strategies side by side and drift on the machine touches them alike.
public struct Plan: Sendable {
    public let suite: Suite
    public let trials: [TrialSpec]

    /// A plan of exactly these trials.
    public init(suite: Suite, trials: [TrialSpec]) {
        self.suite = suite
        self.trials = trials
    }

    public init(suite: Suite) {
        self.suite = suite
        var trials: [TrialSpec] = []
        for run in suite.runs {
            for combination in Self.combinations(run.parameters) {
                for profile in run.profiles {
                    for repetition in 1...run.repetitions {
                        // One seed per combination and repetition: every strategy gets the same graph.
                        let seed = Self.seed("\(suite.name)|\(run.scenario)|\(combination.sorted { $0.key < $1.key })|\(repetition)")
                        for strategy in run.strategies {
                            let key = TrialKey(scenario: run.scenario, parameters: Self.ordered(combination, as: run.parameters), strategy: strategy, profile: profile)
                            var spec = TrialSpec(
                                index: trials.count, id: TrialID(key: key, repetition: repetition), seed: seed,
                                timeoutSeconds: run.timeoutSeconds, stallSeconds: run.stallSeconds, expected: run.expected(for: strategy)
                            )
                            spec.memoryLimitBytes = run.memoryLimitBytes
                            spec.threadLimit = run.threadLimit
                            trials.append(spec)
                        }
                    }
                }
            }
        }
        self.trials = trials
    }

    /// The cartesian product of the parameters' values, in the suite's order.
    static func combinations(_ parameters: [(name: String, values: [String])]) -> [[String: String]] {
        parameters.reduce([[:]]) { partial, parameter in
            partial.flatMap { combination in
                parameter.values.map { value in combination.merging([parameter.name: value]) { $1 } }
            }
        }
    }

    /// A combination's values in the run's parameter order.
    static func ordered(_ combination: [String: String], as parameters: [(name: String, values: [String])]) -> [TrialKey.Parameter] {
        parameters.compactMap { parameter in combination[parameter.name].map { TrialKey.Parameter(name: parameter.name, value: $0) } }
    }

    /// FNV-1a: a seed that is the same for the same text on every machine and run.
    static func seed(_ text: String) -> UInt64 { StableHash.fnv1a(text) }
}
