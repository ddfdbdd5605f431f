/// Everything a child needs to run one trial; sent from the parent as JSON.
public struct TrialSpec: Codable, Hashable, Sendable {
    /// Position of the trial in its plan, from 0.
    public var index: Int
    public var scenario: String
    /// Parameter values as written in the suite, by name.
    public var parameters: [String: String]
    public var strategy: StrategySpec
    public var profile: Profile
    /// Repetition number, from 1.
    public var repetition: Int
    /// The seed the scenario derives its randomness from.
    public var seed: UInt64
    public var timeoutSeconds: Double
    /// Seconds without progress, while work is pending, after which the
    /// watchdog calls the trial starved or deadlocked.
    public var stallSeconds: Double
    /// The outcomes the suite accepts for this trial.
    public var expected: [ExpectedOutcome]

    public init(
        index: Int, scenario: String, parameters: [String: String], strategy: StrategySpec, profile: Profile,
        repetition: Int, seed: UInt64, timeoutSeconds: Double, stallSeconds: Double, expected: [ExpectedOutcome]
    ) {
        self.index = index
        self.scenario = scenario
        self.parameters = parameters
        self.strategy = strategy
        self.profile = profile
        self.repetition = repetition
        self.seed = seed
        self.timeoutSeconds = timeoutSeconds
        self.stallSeconds = stallSeconds
        self.expected = expected
    }

    /// `size=200, shape=chain`: the parameters sorted by name.
    public var parameterSummary: String {
        parameters.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: ", ")
    }

    /// `cyclic-graph[operation=archive, size=200] thread(512KiB) ios #1`.
    public var name: String {
        let parameterPart = parameters.isEmpty ? "" : "[\(parameterSummary)]"
        return "\(scenario)\(parameterPart) \(strategy) \(profile.rawValue) #\(repetition)"
    }
}

/// One finished trial as the run records it.
public struct TrialRecord: Codable, Hashable, Sendable {
    public var index: Int
    public var scenario: String
    public var parameters: [String: String]
    public var strategy: String
    public var profile: String
    public var repetition: Int
    public var seed: UInt64
    public var outcome: TrialOutcome
    /// Whether the suite listed this outcome among those it expects.
    public var expected: Bool
    /// What the suite expected, for the reader of a report.
    public var expectedOutcomes: [String]
    public var metrics: TrialMetrics
    /// The stack of the faulting thread, for `stackOverflow` and `crashed`.
    public var trace: FaultTrace?
    /// Every thread's stack, grouped, for `starved` and `deadlocked`.
    public var dump: ThreadDump?
    /// What the watchdog saw when it called the stall.
    public var stall: StallReport?
    /// The child's thread count over the whole trial, sampled by the parent
    /// (a point where the count changed).
    public var threadTimeline: [ThreadSample]?
    /// Platforms whose GCD cap this trial's blocked workers exceeded.
    public var capVerdicts: [CapVerdict]?
    /// The child's standard output and error, capped.
    public var stdout: String?
    public var stderr: String?
    /// ISO 8601 time the trial started.
    public var startedAt: String

    public init(
        spec: TrialSpec, outcome: TrialOutcome, metrics: TrialMetrics, trace: FaultTrace?,
        stdout: String?, stderr: String?, startedAt: String
    ) {
        self.index = spec.index
        self.scenario = spec.scenario
        self.parameters = spec.parameters
        self.strategy = spec.strategy.description
        self.profile = spec.profile.rawValue
        self.repetition = spec.repetition
        self.seed = spec.seed
        self.outcome = outcome
        self.expected = outcome.kind != .harnessError && spec.expected.contains { $0.accepts(outcome) }
        self.expectedOutcomes = spec.expected.map(\.description)
        self.metrics = metrics
        self.trace = trace
        self.capVerdicts = {
            let verdicts = CapVerdict.verdicts(strategy: spec.strategy, needed: metrics.peakBlockedWorkers)
            return verdicts.isEmpty ? nil : verdicts
        }()
        self.stdout = stdout
        self.stderr = stderr
        self.startedAt = startedAt
    }
}
