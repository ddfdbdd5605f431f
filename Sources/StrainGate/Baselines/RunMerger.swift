import Foundation
import StrainRecords

/// Joins runs: shards of one plan into the whole, or single-repetition runs of an
/// interleaved gate into one run per side.
package enum RunMerger {
    /// Joins shard runs of one plan. Refuses mixed suites, plans, commits or schema
    /// versions (input error) and incomplete coverage (incomplete).
    package static func mergeShards(_ runs: [(path: String, run: RunRecord)]) throws(GateError) -> RunRecord {
        guard let (firstPath, first) = runs.first else { throw GateError(.input, "no shard runs given; name each shard's run.json or its directory") }
        guard let plan = first.plan, let firstShard = plan.shard else {
            throw GateError(.input, "\(firstPath) is not a shard: it was not run with --shard K/N")
        }
        // Read records are ranged already (`RecordRanges`); one built in memory is checked here too.
        guard RecordRanges.shardCount.contains(firstShard.count) else {
            throw GateError(.input, "\(firstPath): has a number out of range: plan.shard.count is \(firstShard.count); a valid value is a whole number from \(RecordRanges.shardCount.lowerBound) to \(RecordRanges.shardCount.upperBound)")
        }
        var seenShards: [Int: String] = [:]
        var seenIDs = Set<TrialID>()
        var trials: [TrialRecord] = []
        var shards: [ShardRecord] = []
        for (path, run) in runs {
            guard let runPlan = run.plan, let shard = runPlan.shard else {
                throw GateError(.input, "\(path) is not a shard: it was not run with --shard K/N")
            }
            func refuse(_ what: String, _ mine: String, _ theirs: String) -> GateError {
                GateError(.input, "\(path) is from another \(what) (\(theirs)) than \(firstPath) (\(mine)); merge only shards of one run of one plan")
            }
            guard run.suite.name == first.suite.name else { throw refuse("suite", first.suite.name, run.suite.name) }
            guard runPlan.hash == plan.hash else { throw refuse("plan", plan.hash, runPlan.hash) }
            guard run.schemaVersion == first.schemaVersion else { throw refuse("schema version", "\(first.schemaVersion)", "\(run.schemaVersion)") }
            guard run.environment.gitCommit == first.environment.gitCommit else {
                throw refuse("commit", first.environment.gitCommit ?? "none", run.environment.gitCommit ?? "none")
            }
            guard shard.count == firstShard.count else { throw refuse("shard count", "\(firstShard.count)", "\(shard.count)") }
            if let other = seenShards[shard.index] {
                throw GateError(.input, "shard \(shard.index)/\(shard.count) is given twice: \(other) and \(path)")
            }
            seenShards[shard.index] = path
            for trial in run.trials {
                guard seenIDs.insert(trial.id).inserted else {
                    throw GateError(.input, "trial \(trial.id) is in two shards (the second: \(path)); were they run from different suites?")
                }
                trials.append(trial)
            }
            shards.append(ShardRecord(index: shard.index, count: shard.count, trialCount: run.trials.count, environment: run.environment))
        }
        let missing = (1...firstShard.count).filter { seenShards[$0] == nil }
        guard missing.isEmpty else {
            throw GateError(.incomplete, "shard\(missing.count == 1 ? "" : "s") \(missing.map { "\($0)/\(firstShard.count)" }.joined(separator: ", ")) missing: the merged run would not cover its plan")
        }
        guard trials.count == plan.trialCount else {
            throw GateError(.incomplete, "the shards hold \(trials.count) trials of a plan of \(plan.trialCount): a shard was interrupted or filtered; run it again")
        }
        trials.sort { $0.index < $1.index }
        var merged = first
        merged.trials = trials
        merged.plan = PlanRecord(hash: plan.hash, trialCount: plan.trialCount, shard: nil)
        merged.shards = shards.sorted { $0.index < $1.index }
        merged.startedAt = runs.map(\.run.startedAt).min() ?? first.startedAt
        merged.finishedAt = runs.map(\.run.finishedAt).max() ?? first.finishedAt
        merged.runnerPeakRSSBytes = runs.map(\.run.runnerPeakRSSBytes).max() ?? 0
        merged.interrupted = runs.contains { $0.run.interrupted == true } ? true : nil
        return merged
    }

    /// Joins runs of one repetition each into one run whose repetitions are the
    /// rounds, in order: one side of an interleaved gate.
    package static func joinRounds(_ rounds: [RunRecord]) throws(GateError) -> RunRecord {
        guard var joined = rounds.first else { throw GateError(.incomplete, "no rounds to join") }
        var trials: [TrialRecord] = []
        for (round, run) in rounds.enumerated() {
            for var trial in run.trials {
                trial.id.repetition = round + 1
                trial.index = trials.count
                trials.append(trial)
            }
        }
        joined.trials = trials
        joined.finishedAt = rounds.last?.finishedAt ?? joined.finishedAt
        joined.suite.repetitions = rounds.count
        for index in joined.suite.runs.indices { joined.suite.runs[index].repetitions = rounds.count }
        return joined
    }
}
