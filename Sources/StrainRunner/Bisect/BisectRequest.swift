import StrainKit

/// One boundary search `strain bisect` runs: what to search, over what range,
/// with what confirmation. Built and validated by the command; every number in
/// it is in range.
package struct BisectRequest: Sendable {
    /// What the search varies.
    package enum Question: Sendable, Hashable {
        /// The stack of a `thread(stack)`: the smallest on which the scenario completes.
        case stack
        /// An integer parameter of the scenario: the largest value that completes on the strategy.
        case parameter(String)
    }

    package var scenario: String
    /// Every parameter of the scenario with its value (the searched one is set per probe).
    package var parameters: [String: String]
    /// The scenario's parameter names in its declared order: the order of a probe's `TrialKey`.
    package var parameterOrder: [String]
    package var question: Question
    /// Where a parameter search's probes run; a stack search runs on `thread(stack)`.
    package var strategy: StrategySpec
    package var profile: Profile
    /// The range searched: bytes (multiples of `unit`) or parameter values.
    package var low: Int
    package var high: Int
    /// Repetitions of the two probes either side of the boundary that confirm it.
    package var repetitions: Int
    package var timeoutSeconds: Double
    package var stallSeconds: Double
    /// Keep probing larger stacks up to `high` even when the evidence already says unbounded.
    package var exhaustive: Bool
    /// The seed every probe uses, so every probe builds the same input.
    package var seed: UInt64

    /// A page: the resolution of a stack search.
    package static let pageBytes = 4096
    /// The smallest stack a search may try: the strategies' one floor.
    package static let minimumStackBytes = StrategySpec.minimumStackBytes
    /// The largest stack a search may try: more is clamped by Foundation.
    package static let maximumStackBytes = StrategySpec.maximumThreadStackBytes
    /// Where a stack search starts: Apple's secondary-thread stack.
    package static let firstStackBytes = 512 * 1024
    /// The larger stacks a stack search tries when the first one fails, before bisecting.
    package static let stackLadder = [8 << 20, 64 << 20, 512 << 20, 1 << 30]
    /// Overflows on this many stack sizes, the largest at least this big, in the same cycle
    /// and filling each stack in proportion, make the unbounded verdict.
    package static let unboundedEvidenceSizes = 3
    package static let unboundedEvidenceBytes = 64 << 20
    /// Probes one search may run before it stops and says what it has.
    package static let probeBudget = 400

    package init(
        scenario: String, parameters: [String: String], parameterOrder: [String]? = nil, question: Question, strategy: StrategySpec, profile: Profile,
        low: Int, high: Int, repetitions: Int, timeoutSeconds: Double, stallSeconds: Double, exhaustive: Bool, seed: UInt64
    ) {
        self.scenario = scenario
        self.parameters = parameters
        self.parameterOrder = parameterOrder ?? parameters.keys.sorted()
        self.question = question
        self.strategy = strategy
        self.profile = profile
        self.low = low
        self.high = high
        self.repetitions = repetitions
        self.timeoutSeconds = timeoutSeconds
        self.stallSeconds = stallSeconds
        self.exhaustive = exhaustive
        self.seed = seed
    }

    /// The search's step: a page for stacks, 1 for a parameter.
    package var unit: Int {
        switch question {
        case .stack: Self.pageBytes
        case .parameter: 1
        }
    }

    /// The strategy a probe at `value` runs on.
    func strategy(at value: Int) -> StrategySpec {
        switch question {
        case .stack: .thread(stackBytes: value)
        case .parameter: strategy
        }
    }

    /// The parameters a probe at `value` runs with.
    func parameters(at value: Int) -> [String: String] {
        switch question {
        case .stack: parameters
        case .parameter(let name): parameters.merging([name: String(value)]) { $1 }
        }
    }

    /// The key of a probe at `value`.
    func key(at value: Int) -> TrialKey {
        let values = parameters(at: value)
        return TrialKey(scenario: scenario, parameters: parameterOrder.compactMap { name in values[name].map { TrialKey.Parameter(name: name, value: $0) } },
                        strategy: strategy(at: value), profile: profile)
    }

    /// Every parameter but the searched one, for the record.
    var fixedParameters: [String: String] {
        switch question {
        case .stack: parameters
        case .parameter(let name): parameters.filter { $0.key != name }
        }
    }

    /// `thread(stack)` for a stack search, the strategy otherwise.
    var strategyName: String {
        switch question {
        case .stack: "thread(stack)"
        case .parameter: strategy.description
        }
    }
}
