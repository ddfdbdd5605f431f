import StrainKit
import StrainWire

/// The trials a suite expands to: every run's scenario × parameter combination ×
/// profile × repetition × strategy, in that nesting, so each repetition runs
/// the strategies side by side and drift on the machine touches them alike.
package struct Plan: Sendable {
    package let suite: Suite
    package let trials: [TrialSpec]

    /// A plan of exactly these trials.
    package init(suite: Suite, trials: [TrialSpec]) {
        self.suite = suite
        self.trials = trials
    }

    package init(suite: Suite) {
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
                                timeoutSeconds: run.timeoutSeconds, stallSeconds: run.stallSeconds, expected: run.expected(for: strategy, profile: profile)
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

    /// The cartesian product of the parameters' values, in the suite's order (the
    /// last parameter varies fastest), made one combination at a time: a suite whose
    /// product is too large to plan is refused by its count before any is made.
    static func combinations(_ parameters: [(name: String, values: [String])]) -> Combinations {
        Combinations(parameters: parameters)
    }

    /// Every combination of a run's parameter values, lazily.
    struct Combinations: Sequence {
        let parameters: [(name: String, values: [String])]

        func makeIterator() -> Iterator { Iterator(parameters: parameters) }

        /// An odometer over the values' indexes.
        struct Iterator: IteratorProtocol {
            let parameters: [(name: String, values: [String])]
            var indexes: [Int]
            var done: Bool

            init(parameters: [(name: String, values: [String])]) {
                self.parameters = parameters
                indexes = Array(repeating: 0, count: parameters.count)
                done = parameters.contains { $0.values.isEmpty }
            }

            mutating func next() -> [String: String]? {
                guard !done else { return nil }
                var combination: [String: String] = [:]
                for (parameter, index) in zip(parameters, indexes) { combination[parameter.name] = parameter.values[index] }
                // Advance the last parameter first; past the first one's end, stop.
                var position = parameters.count - 1
                while position >= 0 {
                    indexes[position] += 1
                    if indexes[position] < parameters[position].values.count { break }
                    indexes[position] = 0
                    position -= 1
                }
                if position < 0 { done = true }
                return combination
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
