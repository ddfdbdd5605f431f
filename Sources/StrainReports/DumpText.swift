import Foundation
import StrainRecords
import StrainText

/// Thread dumps and pool verdicts as lines of text.
package enum DumpText {
    /// `deadlocked after 1.00 s without progress; 7 threads dumped in 1.2 ms (signal)`.
    package static func headline(_ trial: TrialRecord) -> String {
        var text = trial.outcome.description
        if let stall = trial.stall {
            text += " after \(Format.duration(stall.silentSeconds)) without progress (threshold \(Format.duration(stall.thresholdSeconds)))"
        }
        if let dump = trial.dump {
            text += "; \(counted(dump.threadCount, "thread")) dumped in \(Format.duration(Double(dump.dumpNanoseconds) / 1e9)) (\(dump.method))"
            if !dump.unreached.isEmpty { text += ", \(dump.unreached.count) unreached" }
        }
        return text
    }

    /// `231 threads — futex wait ← DispatchQueue.sync ← … [strain.pool.0 …; sleeping]`.
    package static func group(_ group: ThreadGroup, names: Int = 3) -> String {
        let noun = group.count == 1 ? "thread" : "threads"
        let distinctNames = Array(Set(group.threads.map { ThreadNames.name($0.name) })).sorted()
        var who = distinctNames.prefix(names).joined(separator: ", ")
        if distinctNames.count > names { who += ", …" }
        let states = Set(group.threads.map(\.state)).sorted().map(ThreadNames.state).joined(separator: "/")
        let work = group.inWork ? ", holding work" : ""
        let traced = group.threads.contains(where: \.viaPtrace) ? ", via ptrace" : ""
        return "\(group.count) \(noun) — \(group.summary)  [\(who); \(states)\(work)\(traced)]"
    }

    /// A whole dump as text: `title`, then each group's line and its stack,
    /// indented; what `strain dump` prints and `strain exec` writes per dump.
    package static func document(_ dump: ThreadDump, title: String) -> String {
        let groupNoun = dump.groups.count == 1 ? "group" : "groups"
        var lines = ["\(title): \(counted(dump.threadCount, "thread")) in \(dump.groups.count) \(groupNoun), dumped in \(Format.duration(Double(dump.dumpNanoseconds) / 1e9)) (\(dump.method))"]
        if !dump.unreached.isEmpty { lines.append("not answered: \(dump.unreached.map(String.init).joined(separator: ", "))") }
        for group in dump.groups {
            lines.append("")
            lines.append(Self.group(group, names: 6))
            lines += frames(group).map { "    " + $0 }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// A group's stack, one frame a line, then how many frames below it were not kept.
    package static func frames(_ group: ThreadGroup) -> [String] {
        group.frames.enumerated().flatMap { TraceText.frameLines($0.element, index: $0.offset) } + (group.threads.compactMap(\.framesNotKept).max().map { ["… \(Format.count(Double($0))) more frames, not kept (the dump keeps a stack's innermost \(group.frames.count))"] } ?? [])
    }

    /// `2 caught by the heartbeat watchdog: …; their dumps took a median 1.50 ms, of 4–65 threads`:
    /// it read `2 stalls:` over a list of 4 (two found by ptrace), and a median of 34 threads, no dump's.
    /// `strain exec` has no heartbeat: `1 caught by --stall's watch: 2.04 s without progress …; its dump took …`.
    package static func watchdogSummary(_ run: RunRecord) -> String? {
        let stalled = run.trials.filter { $0.stall != nil }
        guard !stalled.isEmpty else { return nil }
        // Without progress, as each stall below (`median 415 ms` to the record sat over 405 ms and 402 ms).
        let overshoot = Statistics.median(stalled.compactMap { trial in trial.stall.map { $0.silentSeconds - $0.thresholdSeconds } })
        let silent = Statistics.median(stalled.compactMap { $0.stall?.silentSeconds })
        let recorded = Statistics.median(stalled.compactMap { $0.stall?.recordedAfterSeconds })
        let dumps = stalled.compactMap(\.dump)
        let dumpTime = Statistics.median(dumps.map { Double($0.dumpNanoseconds) / 1e9 })
        let fewest = dumps.map(\.threadCount).min() ?? 0, most = dumps.map(\.threadCount).max() ?? 0
        let one = stalled.count == 1, median = one ? "" : "a median ", watch = stalled.allSatisfy { $0.key.scenario == TrialKey.execScenario } ? "--stall's watch" : "the heartbeat watchdog"
        var text = "\(stalled.count) caught by \(watch): \(median)\(Format.duration(silent)) without progress"
        // The threshold named where the stalls share one: `411 ms (threshold + 10.7 ms)`
        // read as a sum that did not add up, each figure rounded to its three digits.
        let thresholds = Set(stalled.compactMap { $0.stall?.thresholdSeconds })
        let threshold = thresholds.count == 1 ? "threshold \(Format.duration(thresholds.first!))" : "threshold"
        if let overshoot { text += " (\(threshold) + \(Format.duration(overshoot)))" }
        if let recorded { text += one ? ", its outcome recorded \(Format.duration(recorded)) after the last heartbeat" : ", each outcome recorded a median \(Format.duration(recorded)) after the last heartbeat" }
        if !dumps.isEmpty { text += (dumps.count == 1 ? "; its dump took " : "; their dumps took a median ") + "\(Format.duration(dumpTime)), of \(fewest == most ? "\(most)" : "\(fewest)–\(most)") threads" }
        return text
    }

    /// One trial per distinct stall (scenario, parameters, strategy, profile, outcome).
    package static func distinctStalls(_ run: RunRecord) -> [TrialRecord] {
        struct Seen: Hashable {
            var key: TrialKey
            var outcome: TrialOutcome.Kind
        }
        var seen = Set<Seen>()
        return run.trials.filter { trial in
            guard trial.dump != nil else { return false }
            return seen.insert(Seen(key: trial.key, outcome: trial.outcome.kind)).inserted
        }
    }

    /// Distinct cap verdicts: `rw-barrier-collection[…] gcd-serial-queues linux: needed 131 …`.
    package static func capVerdicts(_ run: RunRecord) -> [(trial: TrialKey, verdict: CapVerdict)] {
        struct Seen: Hashable {
            var key: TrialKey
            var cap: Int
        }
        var seen = Set<Seen>()
        var result: [(TrialKey, CapVerdict)] = []
        for trial in run.trials {
            for verdict in trial.capVerdicts ?? [] {
                // Repetitions differ in the count; keep the largest per trial key and cap.
                if seen.insert(Seen(key: trial.key, cap: verdict.cap)).inserted {
                    let needed = run.trials.filter { $0.key == trial.key }.compactMap(\.metrics.peakBlockedWorkers).max() ?? verdict.needed
                    result.append((trial.key, CapVerdict(platforms: verdict.platforms, cap: verdict.cap, needed: needed)))
                }
            }
        }
        return result
    }
}
