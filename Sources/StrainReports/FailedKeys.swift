import StrainRecords

/// What failed, once for every format: the trial keys with trials that ended
/// unexpectedly, in plan order, each with its outcomes counted, what the suite
/// expects, and its first unexpected trial (the one a report links to and whose
/// reason it quotes). Ten timed-out repetitions of one key are one line, "×10 of 10".
package struct FailedKeys: Sendable {
    /// One key's unexpected trials.
    package struct Key: Sendable {
        package var key: TrialKey
        /// The key's unexpected trials, in plan order.
        package var trials: [TrialRecord]
        /// All the key's trials in the run.
        package var total: Int
        /// `timedOut ×9, crashed(SIGSEGV) ×1`, by outcome name.
        package var outcomes: String
        /// `crashed or stackOverflow`, or empty.
        package var expected: String
        /// The first unexpected trial.
        package var first: TrialRecord { trials[0] }
        /// The unexpected trials by outcome, each group in plan order, the groups by their first trial.
        package var byOutcome: [[TrialRecord]] {
            Dictionary(grouping: trials, by: \.outcome.description).values.sorted { $0[0].index < $1[0].index }
        }
    }

    package let keys: [Key]

    package init(_ run: RunRecord) {
        var order: [TrialKey] = []
        var failed: [TrialKey: [TrialRecord]] = [:]
        var totals: [TrialKey: Int] = [:]
        for trial in run.trials {
            totals[trial.id.key, default: 0] += 1
            guard !trial.expected else { continue }
            if failed[trial.id.key] == nil { order.append(trial.id.key) }
            failed[trial.id.key, default: []].append(trial)
        }
        keys = order.map { key in
            let trials = failed[key] ?? []
            let outcomes = Dictionary(grouping: trials, by: \.outcome.description).sorted { $0.key < $1.key }.map { "\($0.key) ×\($0.value.count)" }
            return Key(key: key, trials: trials, total: totals[key] ?? trials.count, outcomes: outcomes.joined(separator: ", "),
                       expected: trials[0].expectedOutcomes.joined(separator: " or "))
        }
    }

    /// `completed ×1 of 1; expects crashed`.
    package static func line(_ key: Key) -> String {
        "\(key.outcomes) of \(key.total)" + (key.expected.isEmpty ? "" : "; expects \(key.expected)")
    }
}
