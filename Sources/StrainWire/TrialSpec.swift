import StrainRecords

/// Everything a child needs to run one trial; sent from the parent as JSON.
package struct TrialSpec: Codable, Hashable, Sendable {
    /// Position of the trial in its plan, from 0.
    package var index: Int
    /// The trial's identity: its key and repetition.
    package var id: TrialID
    /// The seed the scenario derives its randomness from.
    package var seed: UInt64
    package var timeoutSeconds: Double
    /// Seconds without progress, while work is pending, after which the
    /// watchdog calls the trial starved or deadlocked.
    package var stallSeconds: Double
    /// The outcomes the suite accepts for this trial.
    package var expected: [ExpectedOutcome]
    /// The child's address-space limit (RLIMIT_AS) in bytes, from `memory-limit:`; nil for none.
    package var memoryLimitBytes: Int?
    /// Threads the child may have before the parent kills it, from `thread-limit:`; nil for none.
    package var threadLimit: Int?

    package init(index: Int, id: TrialID, seed: UInt64, timeoutSeconds: Double, stallSeconds: Double, expected: [ExpectedOutcome]) {
        self.index = index
        self.id = id
        self.seed = seed
        self.timeoutSeconds = timeoutSeconds
        self.stallSeconds = stallSeconds
        self.expected = expected
    }

    package var key: TrialKey { id.key }
    package var scenario: String { id.key.scenario }
    package var strategy: StrategySpec { id.key.strategy }
    package var profile: Profile { id.key.profile }
    package var repetition: Int { id.repetition }
    /// Parameter values by name.
    package var parameters: [String: String] {
        Dictionary(id.key.parameters.map { ($0.name, $0.value) }, uniquingKeysWith: { first, _ in first })
    }

    /// `cyclic-graph[operation=archive, size=200] thread(512KiB) ios #1`.
    package var name: String { id.description }
}
