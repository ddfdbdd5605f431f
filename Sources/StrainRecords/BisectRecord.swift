/// What `strain bisect` found: run.json's `bisect` section.
///
/// A bisect answers one of two questions by experiment, each probe an isolated
/// trial recorded among the run's trials: the smallest thread stack on which a
/// scenario completes, or the largest value of an integer parameter that
/// completes on a given strategy and profile.
public struct BisectSection: Codable, Hashable, Sendable {
    /// The searches run, one per boundary point (two when a slope was asked for).
    public var searches: [BisectSearch]
    /// Bytes of stack per unit of the parameter, from two boundary points.
    public var slope: StackSlope?
    /// Seconds from the first probe's start to the last probe's end.
    public var wallSeconds: Double

    /// A bisect section of these searches.
    public init(searches: [BisectSearch], slope: StackSlope?, wallSeconds: Double) {
        self.searches = searches
        self.slope = slope
        self.wallSeconds = wallSeconds
    }
}

extension BisectSearch {
    /// Whether the failing side of the boundary overflowed its stack (rather than
    /// throwing, crashing otherwise or timing out): only such a boundary moves with
    /// the stack and can measure bytes of stack per unit.
    public var failedByOverflow: Bool {
        failure.map { $0 == TrialOutcome.Kind.stackOverflow.rawValue || $0.hasPrefix(TrialOutcome.Kind.stackOverflow.rawValue + ":") || $0.hasPrefix(TrialOutcome.Kind.stackOverflow.rawValue + "(") } ?? false
    }
}

extension BisectSection {
    /// Why two boundary searches gave no slope, or nil: a boundary the code holds
    /// whatever the stack (it threw there) is a limit of the code, not of the stack.
    public var noSlopeReason: String? {
        guard slope == nil, searches.count >= 2 else { return nil }
        let found = searches.prefix(2).filter { ($0.verdict == .boundary || $0.verdict == .nondeterministic) && $0.passing != nil }
        guard found.count == 2, let limited = found.first(where: { !$0.failedByOverflow }) else { return nil }
        let values = found.map { "\($0.passing!) on \($0.strategy)" }.joined(separator: " and ")
        let moved = found[0].passing == found[1].passing ? "did not move with the stack" : "is not where the stack ran out"
        return "No bytes-of-stack slope: the boundary (\(values)) \(moved); the probes past it failed with \(limited.failure ?? "no overflow"), not a stack overflow, so it is a limit of the code, not of the stack."
    }
}

/// One boundary search and its answer.
public struct BisectSearch: Codable, Hashable, Sendable {
    /// What was searched.
    public enum Question: String, Codable, Hashable, Sendable {
        /// The smallest `thread(stack)` on which the scenario completes.
        case stack
        /// The largest value of `parameter` that completes on `strategy`.
        case parameter
    }

    /// What the search concluded.
    public enum Verdict: String, Codable, Hashable, Sendable {
        /// One boundary, the same in every repetition: `passing` completes, `failing` does not.
        case boundary
        /// Outcomes mix between `mixedLow` and `mixedHigh`: the scenario is not deterministic there.
        case nondeterministic
        /// Every stack tried overflowed in the same cycle, deeper the larger the stack: no stack is enough.
        case unbounded
        /// It completes even at the easy end of the range (the smallest stack, the largest value).
        case alwaysCompletes
        /// It fails even at the hard end of the range (the largest stack, the smallest value).
        case neverCompletes
    }

    /// What the search asked.
    public var question: Question
    /// The scenario searched.
    public var scenario: String
    /// Every parameter the probes ran with, the searched one excluded.
    public var parameters: [String: String]
    /// The searched parameter, for `parameter` searches.
    public var parameter: String?
    /// The strategy the probes ran on; `thread(stack)` for a stack search.
    public var strategy: String
    /// The profile the probes ran on.
    public var profile: String
    /// The search's resolution: 4096 bytes (a page) for stacks, 1 for a parameter.
    public var unit: Int
    /// The range searched (bytes or parameter values).
    public var low: Int
    /// See `low`.
    public var high: Int
    /// Repetitions of each probe that confirms the boundary.
    public var repetitions: Int
    /// What the search concluded.
    public var verdict: Verdict
    /// The value on the completing side of the boundary: the smallest stack, or the
    /// largest parameter value, that completed in every repetition.
    public var passing: Int?
    /// The value one step past it, on the failing side (one unit away for a `boundary`).
    public var failing: Int?
    /// For `nondeterministic`: the range where some repetitions completed and some did not.
    public var mixedLow: Int?
    /// See `mixedLow`.
    public var mixedHigh: Int?
    /// How the failing side failed (`stackOverflow`, `threw`, …), with the first message.
    public var failure: String?
    /// The deepest recursion the scenario marked at the failing boundary probe.
    public var depthAtFailure: Int?
    /// Stack sizes that overflowed with their frame counts and cycles: the evidence for `unbounded`.
    public var overflows: [OverflowEvidence]
    /// The run's trial indices of this search's probes, in the order they ran.
    public var probes: [Int]
    /// Seconds this search took, probes included.
    public var wallSeconds: Double
    /// The answer in a sentence, as the reports print it.
    public var explanation: String

    /// A search described by these values.
    public init(
        question: Question, scenario: String, parameters: [String: String], parameter: String?, strategy: String,
        profile: String, unit: Int, low: Int, high: Int, repetitions: Int, verdict: Verdict, passing: Int?, failing: Int?,
        mixedLow: Int?, mixedHigh: Int?, failure: String?, depthAtFailure: Int?, overflows: [OverflowEvidence],
        probes: [Int], wallSeconds: Double, explanation: String
    ) {
        self.question = question
        self.scenario = scenario
        self.parameters = parameters
        self.parameter = parameter
        self.strategy = strategy
        self.profile = profile
        self.unit = unit
        self.low = low
        self.high = high
        self.repetitions = repetitions
        self.verdict = verdict
        self.passing = passing
        self.failing = failing
        self.mixedLow = mixedLow
        self.mixedHigh = mixedHigh
        self.failure = failure
        self.depthAtFailure = depthAtFailure
        self.overflows = overflows
        self.probes = probes
        self.wallSeconds = wallSeconds
        self.explanation = explanation
    }
}

/// One stack size that overflowed, as the unbounded verdict cites it.
public struct OverflowEvidence: Codable, Hashable, Sendable {
    /// The stack size that overflowed.
    public var stackBytes: Int
    /// Frames on the faulting thread's stack.
    public var frames: Int?
    /// The recursion cycle's frames, innermost first, by name.
    public var cycle: [String]?
    /// How many times the cycle repeated.
    public var repetitions: Int?
    /// The deepest recursion the scenario marked.
    public var depth: Int?

    /// Evidence of an overflow at `stackBytes`.
    public init(stackBytes: Int, frames: Int?, cycle: [String]?, repetitions: Int?, depth: Int?) {
        self.stackBytes = stackBytes
        self.frames = frames
        self.cycle = cycle
        self.repetitions = repetitions
        self.depth = depth
    }
}

/// Stack per unit of a parameter, fitted through two boundary points, and what
/// it means for the stacks platforms give.
public struct StackSlope: Codable, Hashable, Sendable {
    /// The parameter the slope is per (`size`).
    public var parameter: String
    /// The boundary points: (parameter value, stack bytes).
    public var points: [BoundaryPoint]
    /// Bytes of stack each unit of the parameter costs.
    public var bytesPerUnit: Double
    /// Bytes the line puts at a parameter of 0: the fixed cost of the thread and the harness.
    public var interceptBytes: Double
    /// The largest value the line predicts completes on each stack platforms give.
    public var capacities: [StackCapacity]

    /// A slope fitted through `points`.
    public init(parameter: String, points: [BoundaryPoint], bytesPerUnit: Double, interceptBytes: Double, capacities: [StackCapacity]) {
        self.parameter = parameter
        self.points = points
        self.bytesPerUnit = bytesPerUnit
        self.interceptBytes = interceptBytes
        self.capacities = capacities
    }
}

/// A parameter value and the stack at its boundary.
public struct BoundaryPoint: Codable, Hashable, Sendable {
    /// The parameter's value.
    public var value: Int
    /// The smallest stack on which it completed.
    public var stackBytes: Int

    /// A boundary of `value` at `stackBytes`.
    public init(value: Int, stackBytes: Int) {
        self.value = value
        self.stackBytes = stackBytes
    }
}

/// The largest parameter value a stack is predicted to take.
public struct StackCapacity: Codable, Hashable, Sendable {
    /// `Apple secondary thread`, `Apple main thread (iOS)`, `Linux default`.
    public var name: String
    /// The platform stack's size.
    public var stackBytes: Int
    /// Nil when the line predicts that not even the smallest value fits.
    public var largestValue: Int?

    /// A platform stack of `stackBytes`, and the largest value that fits it.
    public init(name: String, stackBytes: Int, largestValue: Int?) {
        self.name = name
        self.stackBytes = stackBytes
        self.largestValue = largestValue
    }
}
