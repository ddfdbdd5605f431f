import Foundation
import StrainRecords
import StrainText

/// The trials of a run grouped the way the reports show them: per scenario,
/// per parameter combination and profile, one row per strategy.
package struct RunSummary: Sendable {
    package struct Row: Sendable {
        package var strategy: StrategySpec
        package var trials: [TrialRecord]

        /// `completed`, or `2 completed, 1 stackOverflow` when repetitions differ.
        package var outcomes: String {
            var counts: [String: Int] = [:]
            var order: [String] = []
            for trial in trials {
                let name = trial.outcome.description
                if counts[name] == nil { order.append(name) }
                counts[name, default: 0] += 1
            }
            if order.count == 1, trials.count == 1 { return order[0] }
            if order.count == 1 { return "\(order[0]) ×\(trials.count)" }
            return order.map { "\(counts[$0]!) \($0)" }.joined(separator: ", ")
        }

        package var allExpected: Bool { trials.allSatisfy(\.expected) }
        package var medianWallSeconds: Double? { Statistics.median(trials.compactMap(\.metrics.wallSeconds)) }
        package var medianPeakRSSBytes: Double? { Statistics.median(trials.compactMap { $0.metrics.peakRSSBytes.map(Double.init) }) }
        package var stackSizeBytes: Int? { trials.compactMap(\.metrics.stackSizeBytes).max() }
        package var stackHighWaterBytes: Int? { trials.compactMap(\.metrics.stackHighWaterBytes).max() }
        package var medianDepth: Double? { Statistics.median(trials.compactMap { $0.metrics.depth.map(Double.init) }) }
        /// The most threads any of the trials had at once.
        package var peakThreads: Int? { trials.compactMap(\.metrics.peakThreads).max() }
        package var medianFrames: Double? { Statistics.median(trials.compactMap { $0.metrics.frames.map(Double.init) }) }
        /// Allocations the work made, counted (the median over repetitions).
        package var medianAllocations: Double? { Statistics.median(trials.compactMap { $0.metrics.allocations.map(Double.init) }) }
        /// Bytes those allocations asked for (the median over repetitions).
        package var medianAllocatedBytes: Double? { Statistics.median(trials.compactMap { $0.metrics.allocatedBytes.map(Double.init) }) }
        /// Instructions the work retired, counted by a perf counter or under callgrind (the median over repetitions).
        package var medianInstructions: Double? { Statistics.median(trials.compactMap { $0.metrics.instructions.map(Double.init) }) }
        /// `3.1 M instr`, or `–` when the trials counted none.
        package var instructionsText: String { Format.value(medianInstructions, unit: .instructions) }
        /// `12.4 k allocs, 1.2 MiB`, or `–` when the trials counted none.
        package var allocationsText: String {
            guard let count = medianAllocations else { return "–" }
            return "\(Format.value(count, unit: .allocations)), \(Format.value(medianAllocatedBytes, unit: .bytes))"
        }
    }

    package struct Group: Sendable {
        /// What the rows share: scenario, parameters and profile.
        package var key: ComparisonKey
        package var rows: [Row]

        package var scenario: String { key.scenario }
        /// Whether any trial counted its allocations (records before allocation counting did not).
        package var countsAllocations: Bool { rows.contains { $0.medianAllocations != nil } }
        /// Whether any trial counted its instructions (`measure: [instructions]`).
        package var countsInstructions: Bool { rows.contains { $0.medianInstructions != nil } }
        package var profile: Profile { key.profile }
        /// `cyclic-graph[operation=archive, size=200] on ios`.
        package var title: String { key.title }
    }

    package let groups: [Group]
    package let trialCount: Int
    package let unexpected: [TrialRecord]
    package let harnessErrors: [TrialRecord]

    package init(_ run: RunRecord) {
        var groups: [Group] = []
        var groupIndex: [ComparisonKey: Int] = [:]
        for trial in run.trials {
            let key = trial.key.comparison
            guard let index = groupIndex[key] else {
                groupIndex[key] = groups.count
                groups.append(Group(key: key, rows: [Row(strategy: trial.strategy, trials: [trial])]))
                continue
            }
            if let row = groups[index].rows.firstIndex(where: { $0.strategy == trial.strategy }) {
                groups[index].rows[row].trials.append(trial)
            } else {
                groups[index].rows.append(Row(strategy: trial.strategy, trials: [trial]))
            }
        }
        self.groups = groups
        trialCount = run.trials.count
        unexpected = run.trials.filter { !$0.expected }
        harnessErrors = run.trials.filter { $0.outcome.kind == .harnessError }
    }
}

extension RunRecord {
    /// ` (interrupted after 28 of 35 planned trials)`, or empty for a run that finished its plan.
    package var interruptionNote: String {
        guard interrupted == true else { return "" }
        let planned = plan.map { $0.shard?.trialCount ?? $0.trialCount }
        return planned.map { " (interrupted after \(trials.count) of \($0) planned trials)" } ?? " (interrupted)"
    }
}

/// The statistics the reports quote.
package enum Statistics {
    package static func median(_ values: [Double]) -> Double? {
        guard !values.isEmpty else { return nil }
        let sorted = values.sorted()
        let middle = sorted.count / 2
        return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
    }
}
