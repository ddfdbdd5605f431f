import StrainRecords
import StrainText

/// Whether more stack would help: for each scenario and parameter combination
/// that overflowed, what the stack sizes tried say about its recursion.
package struct StackVerdict: Sendable {
    package enum Kind: String, Sendable {
        /// It overflows small stacks and completes on a larger one.
        case deepButFinite
        /// It overflows every stack size tried, with the same cycle, deeper on larger stacks.
        case unbounded
        /// Only one stack size overflowed and none completed: not yet known.
        case undetermined
    }

    /// What the verdict is about: a trial's key, its scenario and parameter values
    /// (its strategy and profile are those of the first trial, and not part of it).
    package var key: TrialKey
    package var scenario: String { key.scenario }
    package var kind: Kind
    /// Stack sizes that overflowed and that completed, ascending.
    package var overflowedStacks: [Int]
    package var completedStacks: [Int]
    /// Frames at the overflow, by stack size (ascending).
    package var framesByStack: [(stack: Int, frames: Int)]
    /// The sentence the reports print.
    package var explanation: String
    /// Where it ran out, as a trial key ends (`thread(512KiB) linux`), in the run's order: the verdict spans them.
    package var ranOutOn: [String] = []

    /// The scenario and its parameter values, whatever their order: what a verdict
    /// joins across strategies and profiles.
    struct Configuration: Hashable {
        var scenario: String
        var parameters: Set<TrialKey.Parameter>

        init(_ key: TrialKey) {
            scenario = key.scenario
            parameters = Set(key.parameters)
        }
    }

    package static func verdicts(for run: RunRecord) -> [StackVerdict] {
        var order: [Configuration] = []
        var byConfiguration: [Configuration: [TrialRecord]] = [:]
        for trial in run.trials {
            let configuration = Configuration(trial.key)
            if byConfiguration[configuration] == nil { order.append(configuration) }
            byConfiguration[configuration, default: []].append(trial)
        }
        return order.compactMap { configuration in
            let trials = byConfiguration[configuration]!
            let overflows = trials.filter { $0.outcome.kind == .stackOverflow }
            guard !overflows.isEmpty else { return nil }
            let overflowed = Set(overflows.compactMap(\.metrics.stackSizeBytes)).sorted()
            let completed = Set(trials.filter { $0.outcome.kind == .completed }.compactMap(\.metrics.stackSizeBytes)).sorted()
            var frames: [Int: Int] = [:]
            for trial in overflows {
                if let stack = trial.metrics.stackSizeBytes, let count = trial.metrics.frames { frames[stack] = max(frames[stack] ?? 0, count) }
            }
            let framesByStack = frames.sorted { $0.key < $1.key }.map { (stack: $0.key, frames: $0.value) }
            let cycles = Set(overflows.compactMap { $0.trace?.cycle.map { cycle in Set(cycle.frames.map { $0.symbol ?? "?" }) } })
            // Sizes that read alike rounded (1296 and 1304 KiB, both `1.3 MiB`) are written exactly.
            let tried = Set(overflowed + completed)
            let exact = Set(tried.map { ByteSize.prose($0) }).count < tried.count
            let size = { (bytes: Int) in ByteSize.prose(bytes, exact: exact) }
            let sizes = overflowed.map(size).joined(separator: ", ")

            let kind: Kind
            let explanation: String
            if let largestOverflow = overflowed.last, let enough = completed.first(where: { $0 > largestOverflow }) {
                kind = .deepButFinite
                explanation = "Deep but finite: overflows \(sizes) and completes on \(size(enough)). A thread with a larger stackSize (or a thread-queue) is a fix."
            } else if overflowed.count >= 2, completed.allSatisfy({ $0 < overflowed[0] }),
                      cycles.count == 1, zip(framesByStack, framesByStack.dropFirst()).allSatisfy({ $0.frames < $1.frames }) {
                kind = .unbounded
                let growth = framesByStack.map { "\(Format.count(Double($0.frames))) frames on \(size($0.stack))" }.joined(separator: ", ")
                explanation = "Unbounded recursion: overflows every stack tried (\(sizes)) in the same cycle, and the stack fills deeper the more there is (\(growth)). A larger stack will not fix this; the recursion has no end."
            } else {
                kind = .undetermined
                // A program under `strain exec` has no strategies: its stacks are its own to raise, and
                // every view says what `strain exec` said (the reports left out the iterative fix).
                let completes = completed.isEmpty ? "" : ", completes on \(completed.map(size).joined(separator: ", "))"
                explanation = configuration.scenario == TrialKey.execScenario ? OutcomeAdvice.text(for: overflows[0])
                    : "Overflows \(sizes)\(completes). Run it on a larger stack too (e.g. thread(8MiB), thread(64MiB)) to tell deep recursion from unbounded."
            }
            return StackVerdict(key: trials[0].key, kind: kind, overflowedStacks: overflowed, completedStacks: completed, framesByStack: framesByStack,
                                explanation: explanation, ranOutOn: overflows.map { "\($0.key.strategy) \($0.key.profile.rawValue)" }.reduce(into: []) { if !$0.contains($1) { $0.append($1) } })
        }
    }

    /// `cyclic-graph[operation=unarchive, shape=league, size=20]`: the configuration as
    /// a trial key writes it, without a strategy or profile (the verdict spans them).
    package var title: String { key.configuration }
}
