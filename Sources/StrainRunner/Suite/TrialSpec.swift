import StrainKit

/// Everything a child needs to run one trial; sent from the parent as JSON.
public struct TrialSpec: Codable, Hashable, Sendable {
    /// Position of the trial in its plan, from 0.
    public var index: Int
    /// The trial's identity: its key and repetition.
    public var id: TrialID
    /// The seed the scenario derives its randomness from.
    public var seed: UInt64
    public var timeoutSeconds: Double
    /// Seconds without progress, while work is pending, after which the
    /// watchdog calls the trial starved or deadlocked.
    public var stallSeconds: Double
    /// The outcomes the suite accepts for this trial.
    public var expected: [ExpectedOutcome]

    public init(index: Int, id: TrialID, seed: UInt64, timeoutSeconds: Double, stallSeconds: Double, expected: [ExpectedOutcome]) {
        self.index = index
        self.id = id
        self.seed = seed
        self.timeoutSeconds = timeoutSeconds
        self.stallSeconds = stallSeconds
        self.expected = expected
    }

    public var key: TrialKey { id.key }
    public var scenario: String { id.key.scenario }
    public var strategy: StrategySpec { id.key.strategy }
    public var profile: Profile { id.key.profile }
    public var repetition: Int { id.repetition }
    /// Parameter values by name.
    public var parameters: [String: String] {
        Dictionary(id.key.parameters.map { ($0.name, $0.value) }, uniquingKeysWith: { first, _ in first })
    }

    /// `cyclic-graph[operation=archive, size=200] thread(512KiB) ios #1`.
    public var name: String { id.description }
}
