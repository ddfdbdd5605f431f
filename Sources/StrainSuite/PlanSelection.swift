import StrainKit

/// Which trials of a plan to run: `--filter` and `--skip` texts.
///
/// A text `scenario=NAME`, `strategy=NAME` or `profile=NAME` matches that part of a
/// trial's key exactly; `PARAMETER=VALUE` matches a parameter's value; any other text
/// matches when it occurs in the trial's name (`TrialKey.description`). A trial runs
/// when it matches at least one filter (or none are given) and no skip.
package struct TrialSelection: Sendable {
    package var filters: [String]
    package var skips: [String]

    package init(filters: [String] = [], skips: [String] = []) {
        self.filters = filters
        self.skips = skips
    }

    package func includes(_ key: TrialKey) -> Bool {
        (filters.isEmpty || filters.contains { Self.matches($0, key) }) && !skips.contains { Self.matches($0, key) }
    }

    static func matches(_ text: String, _ key: TrialKey) -> Bool {
        guard let equals = text.firstIndex(of: "=") else { return key.description.contains(text) }
        let field = String(text[..<equals]).trimmingCharacters(in: .whitespaces)
        let value = String(text[text.index(after: equals)...]).trimmingCharacters(in: .whitespaces)
        switch field {
        case "scenario": return key.scenario == value
        case "strategy": return key.strategy.description == value || (try? StrategySpec(parsing: value)) == key.strategy
        case "profile": return key.profile.rawValue == value
        default: return key[parameter: field] == value
        }
    }
}

/// One of N deterministic parts of a plan, `--shard K/N`: a trial belongs to shard
/// `stableHash(key) mod N + 1`, so every repetition of a key runs on one machine, and a
/// reordered or extended suite keeps each key in its shard.
package struct Shard: Sendable, Hashable, CustomStringConvertible {
    package var index: Int
    package var count: Int

    /// The most shards a plan may be split into.
    package static let maximumCount = RecordRanges.shardCount.upperBound

    package init(index: Int, count: Int) {
        self.index = index
        self.count = count
    }

    /// Parses `K/N` with 1 ≤ K ≤ N ≤ 1000; nil otherwise.
    package init?(parsing text: String) {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, let index = Int(parts[0].trimmingCharacters(in: .whitespaces)),
              let count = Int(parts[1].trimmingCharacters(in: .whitespaces)),
              (1...Self.maximumCount).contains(count), (1...count).contains(index) else { return nil }
        self.init(index: index, count: count)
    }

    package func contains(_ key: TrialKey) -> Bool {
        Int(key.stableHash % UInt64(count)) == index - 1
    }

    package var description: String { "\(index)/\(count)" }
}

extension Plan {
    /// The plan's identity: a hash of every trial ID in it, whatever their order.
    package var identity: String {
        let text = trials.map { "\($0.key.canonicalText) #\($0.repetition)" }.sorted().joined(separator: "\n")
        return String(StableHash.fnv1a(text), radix: 16)
    }

    /// The trials `selection` keeps, in plan order (each keeps its plan index).
    package func selecting(_ selection: TrialSelection) -> Plan {
        Plan(suite: suite, trials: trials.filter { selection.includes($0.key) })
    }

    /// The trials of `shard`, in plan order.
    package func shard(_ shard: Shard) -> Plan {
        Plan(suite: suite, trials: trials.filter { shard.contains($0.key) })
    }
}
