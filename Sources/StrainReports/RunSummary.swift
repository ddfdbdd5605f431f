import Foundation
import StrainRecords

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
        /// `cyclic-graph (operation=archive, size=200) on ios`.
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

/// Number formats shared by the renderers.
package enum Format {
    /// `1.23 ms`, `45.6 ms`, `2.31 s`, `850 µs`.
    package static func duration(_ seconds: Double?) -> String {
        guard let seconds else { return "–" }
        if seconds >= 1 { return String(format: "%.2f s", seconds) }
        if seconds >= 0.01 { return String(format: "%.1f ms", seconds * 1000) }
        if seconds >= 0.001 { return String(format: "%.2f ms", seconds * 1000) }
        return String(format: "%.0f µs", seconds * 1e6)
    }

    /// `0.201 s`, `12.3 s`, `340 s`, `0.0000662 s`: a time in seconds to 3 significant
    /// digits, for a column whose unit is `s`; never in exponent form (`6.62e-05 s`),
    /// down to a nanosecond (below it, `0 s`).
    package static func seconds(_ seconds: Double?) -> String {
        guard let seconds else { return "–" }
        guard seconds.isFinite else { return "\(seconds) s" }
        if abs(seconds) >= 100 { return String(format: "%.0f s", seconds) }
        if abs(seconds) >= 0.001 || seconds == 0 { return String(format: "%.3g s", seconds) }
        if abs(seconds) < 5e-10 { return "0 s" }
        let decimals = min(9, 2 - Int(log10(abs(seconds)).rounded(.down)))
        return String(format: "%.\(decimals)f s", seconds)
    }

    /// `38.2 MiB`.
    package static func bytes(_ bytes: Double?) -> String {
        guard let bytes else { return "–" }
        if bytes >= Double(1 << 30) { return String(format: "%.1f GiB", bytes / Double(1 << 30)) }
        if bytes >= Double(1 << 20) { return String(format: "%.1f MiB", bytes / Double(1 << 20)) }
        if bytes >= Double(1 << 10) { return String(format: "%.0f KiB", bytes / Double(1 << 10)) }
        return String(format: "%.0f B", bytes)
    }

    /// The note under a table with a `– / SIZE` stack cell (it read `? / 8.0 MiB`, unexplained).
    package static let stackNotMeasured = "– / SIZE under stack: the thread's stack size; how much of it was used is not known, "
        + "because the trial died of a signal before it could measure it (an overflow's use is its whole stack)."

    /// `1,532`.
    package static func count(_ value: Double?) -> String {
        guard let value else { return "–" }
        let formatter = NumberFormatter()
        formatter.numberStyle = .decimal
        formatter.maximumFractionDigits = 0
        return formatter.string(from: NSNumber(value: value)) ?? String(Int(value))
    }

    /// `312 KiB / 512 KiB`; `– / 8.0 MiB` where the use was not measured (a table that
    /// shows one says why under it: ``stackNotMeasured``).
    package static func stack(used: Int?, size: Int?) -> String {
        switch (used, size) {
        case (nil, nil): "–"
        case (let used?, nil): bytes(Double(used))
        case (nil, let size?): "– / \(bytes(Double(size)))"
        case (let used?, let size?): "\(bytes(Double(used))) / \(bytes(Double(size)))"
        }
    }
}
