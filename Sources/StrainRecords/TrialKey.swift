/// What a trial is, apart from its repetition: the scenario, its parameter values,
/// the strategy and the profile. Every report, the journal, resume, shards and the
/// gate join trials by it.
///
/// Two keys are equal when they name the same scenario, strategy and profile and the
/// same value for each parameter, whatever order the parameters were listed in: a
/// suite that reorders or extends its matrix still joins to its baseline.
/// `description` is the one place a trial's name is spelled.
public struct TrialKey: Codable, Hashable, Sendable, Comparable, CustomStringConvertible {
    /// One parameter's value, as the suite wrote it.
    public struct Parameter: Codable, Hashable, Sendable {
        /// The parameter's name.
        public var name: String
        /// Its value, as the suite wrote it.
        public var value: String

        /// Parameter `name` set to `value`.
        public init(name: String, value: String) {
            self.name = name
            self.value = value
        }
    }

    /// The scenario the trial runs.
    public var scenario: String
    /// The parameter values in the scenario's declared order (its suite's sweep order).
    public var parameters: [Parameter]
    /// Where the work runs.
    public var strategy: StrategySpec
    /// The platform the child emulates.
    public var profile: Profile

    /// The key of a trial of `scenario` with these values on `strategy` and `profile`.
    public init(scenario: String, parameters: [Parameter], strategy: StrategySpec, profile: Profile) {
        self.scenario = scenario
        self.parameters = parameters
        self.strategy = strategy
        self.profile = profile
    }

    /// The value of parameter `name`, or nil when the trial has none by that name.
    public subscript(parameter name: String) -> String? {
        parameters.first { $0.name == name }?.value
    }

    /// `operation=archive, size=200`, in the key's order; empty without parameters.
    public var parameterSummary: String {
        parameters.map { "\($0.name)=\($0.value)" }.joined(separator: ", ")
    }

    /// `cyclic-graph[operation=archive, size=200]`: the scenario and its parameters.
    public var configuration: String {
        parameters.isEmpty ? scenario : "\(scenario)[\(parameterSummary)]"
    }

    /// `cyclic-graph[operation=archive, size=200] thread(512KiB) ios`.
    public var description: String {
        "\(configuration) \(strategy) \(profile.rawValue)"
    }

    /// The key with its parameters sorted by name: what equality, hashing and the
    /// shard hash see.
    public var canonicalText: String {
        let sorted = parameters.sorted { $0.name < $1.name }.map { "\($0.name)=\($0.value)" }.joined(separator: ", ")
        return "\(scenario)[\(sorted)] \(strategy) \(profile.rawValue)"
    }

    /// FNV-1a of `canonicalText`: the same for the same key on every machine, run and
    /// suite order (shards are assigned by it).
    public var stableHash: UInt64 { StableHash.fnv1a(canonicalText) }

    /// Equal when scenario, strategy, profile and every parameter value agree, whatever their order.
    public static func == (left: TrialKey, right: TrialKey) -> Bool {
        left.scenario == right.scenario && left.strategy == right.strategy && left.profile == right.profile
            && Set(left.parameters) == Set(right.parameters) && left.parameters.count == right.parameters.count
    }

    /// Hashes the key's canonical text, the parameters in name order.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(canonicalText)
    }

    /// Orders keys by their canonical text, for stable listings.
    public static func < (left: TrialKey, right: TrialKey) -> Bool {
        left.canonicalText < right.canonicalText
    }
}

/// One trial: its key and its repetition (from 1).
public struct TrialID: Codable, Hashable, Sendable, Comparable, CustomStringConvertible {
    /// The trial's configuration.
    public var key: TrialKey
    /// Which repetition, from 1.
    public var repetition: Int

    /// Repetition `repetition` of `key`.
    public init(key: TrialKey, repetition: Int) {
        self.key = key
        self.repetition = repetition
    }

    /// `cyclic-graph[size=200] thread(512KiB) ios #1`.
    public var description: String { "\(key) #\(repetition)" }

    /// The trial's id on report.html, from its key and repetition alone, so the same in
    /// every rendering of every run that has the trial: `trial-`, the key's canonical
    /// text in lower-case letters and digits with dashes between (at most 30: a gate's link fits 80
    /// columns), six hex digits of its stable hash (keys that read alike stay apart), `-r` and the repetition.
    package var anchor: String {
        let words = key.canonicalText.lowercased().unicodeScalars.split { !("a"..."z").contains($0) && !("0"..."9").contains($0) }
        let slug = String(words.map { String(String.UnicodeScalarView($0)) }.joined(separator: "-").prefix(30))
        let hash = String(key.stableHash & 0xFF_FFFF | 0x100_0000, radix: 16).dropFirst()
        return "trial-\(slug.hasSuffix("-") ? String(slug.dropLast()) : slug)-\(hash)-r\(repetition)"
    }

    /// Orders by key, then repetition.
    public static func < (left: TrialID, right: TrialID) -> Bool {
        left.key == right.key ? left.repetition < right.repetition : left.key < right.key
    }
}

/// What trials share when they are compared side by side: the key without its
/// strategy (scenario, parameters, profile). Equal whatever the parameters' order.
public struct ComparisonKey: Hashable, Sendable {
    /// The scenario.
    public var scenario: String
    /// Its parameter values, in the scenario's order.
    public var parameters: [TrialKey.Parameter]
    /// The platform the child emulated.
    public var profile: Profile

    /// The comparison key of `key`: all of it but the strategy.
    public init(_ key: TrialKey) {
        scenario = key.scenario
        parameters = key.parameters
        profile = key.profile
    }

    /// `cyclic-graph[operation=archive, size=200] on ios`.
    public var title: String {
        let text = parameters.map { "\($0.name)=\($0.value)" }.joined(separator: ", ")
        return "\(scenario)\(text.isEmpty ? "" : "[\(text)]") on \(profile.rawValue)"
    }

    /// Equal when scenario, profile and every parameter value agree, whatever their order.
    public static func == (left: ComparisonKey, right: ComparisonKey) -> Bool {
        left.scenario == right.scenario && left.profile == right.profile
            && left.parameters.count == right.parameters.count && Set(left.parameters) == Set(right.parameters)
    }

    /// Hashes what `==` compares, the parameters as a set.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(scenario)
        hasher.combine(profile)
        hasher.combine(Set(parameters))
    }
}

extension TrialKey {
    /// The key without its strategy.
    public var comparison: ComparisonKey { ComparisonKey(self) }
}

extension TrialKey {
    /// The scenario name of a program's trial under `strain exec` (its record's key, and
    /// what the reports look for to advise a program rather than a suite).
    package static let execScenario = "exec"
}
