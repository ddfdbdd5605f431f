/// A piece of concurrent work Strain can run, measure and break.
///
/// Each trial runs in a child process of its own. The child creates the
/// scenario from the suite's parameters with `init(parameters:)`, calls
/// ``prepare(context:)`` on a harness thread with a 1 GiB stack (unmeasured:
/// build the graph, encode the archive, fill the cache there), then runs the
/// returned ``Workload``, measured, on the trial's strategy.
///
/// # Implementation requirements
///
/// - `init(parameters:)` only reads parameters, each declared in
///   ``parameters``: the runner also creates the scenario before the run, to
///   refuse a suite whose scenario reads a parameter it does not declare.
/// - The workload reports its progress: ``Heartbeat/queued(_:)`` before it
///   hands units of work to the strategy, ``ScenarioContext/unit(_:)`` around
///   each unit, ``Heartbeat/beat()`` inside units that run long. The watchdog
///   calls a trial `starved` or `deadlocked` when work is queued and nothing
///   moved for the suite's `stall` time.
/// - Calls that may block (a `sync`, a semaphore, a lock) go inside
///   ``ScenarioContext/blocking(on:holding:_:)``, so a deadlock names its wait cycle.
/// - A broken invariant throws (``ScenarioContext/check(_:_:)``): the trial
///   ends `invariantViolated`, not `threw`.
/// - Metrics recorded with ``ScenarioContext/record(_:_:)-(_,Value)`` are declared in
///   ``metrics`` with their unit and direction.
///
/// `ScenarioCatalog.validate()` checks the declarations; the article
/// "Writing a scenario" in StrainKit's documentation walks through one.
public protocol Scenario: Sendable {
    /// The name suites use (`cyclic-graph`): lower case, words joined by `-`.
    static var name: String { get }
    /// One line of help for `strain list`.
    static var summary: String { get }
    /// The parameters the scenario takes, each a ``Parameter`` it declares once
    /// as a `static let` and reads back in `init(parameters:)`.
    static var parameters: [any ParameterDeclaration] { get }
    /// The metrics the scenario records with `ScenarioContext.record`, each a
    /// ``Metric`` it declares once as a `static let` with its unit, direction and
    /// noise class, so the reports show them with units and the gate can judge
    /// them. A recorded metric not listed here is never judged.
    static var metrics: [any MetricDeclaration] { get }
    /// The outcomes the scenario typically ends in and why, for `strain explain`
    /// (`stackOverflow`: "a cyclic graph archived on a 512 KiB stack").
    static var typicalOutcomes: [TypicalOutcome] { get }
    /// The runs of the suite `strain explain` offers to start from: parameters,
    /// strategies and the outcomes they end in, chosen so that the suite passes on
    /// its first run (Strain's own scenarios are checked to).
    static var starterRuns: [StarterRun] { get }
    /// The ranking tables the scenario asks the reports for
    /// (`RankingRequest(by: "throughput", across: Self.guardKind)`).
    static var rankings: [RankingRequest] { get }
    /// Whether what the work does depends on timing (waits with deadlines, sleeps,
    /// stalls, a thread pool that grows with time): its instruction count would vary
    /// between repetitions of the same code, so a counted run (`measure: [instructions]`)
    /// records it as not countable instead of counting it.
    static var workDependsOnTiming: Bool { get }

    /// Creates the scenario; the values have already passed their declarations' checks.
    init(parameters: ParameterValues) throws

    /// Builds what the work needs and returns the work itself.
    func prepare(context: ScenarioContext) throws -> Workload
}

extension Scenario {
    /// No parameters, by default.
    public static var parameters: [any ParameterDeclaration] { [] }
    /// Work that does the same whatever the clock says, by default.
    public static var workDependsOnTiming: Bool { false }
    /// No metrics of its own, by default.
    public static var metrics: [any MetricDeclaration] { [] }
    /// The declarations of ``metrics``, as the reports and the gate read them.
    package static var metricDescriptors: [MetricDescriptor] { metrics.map(\.descriptor) }
    /// Nothing said about outcomes, by default.
    public static var typicalOutcomes: [TypicalOutcome] { [] }
    /// By default, one run at the default parameters on a GCD worker and an 8 MiB
    /// thread, expected to complete: declare your own where that is not what the
    /// scenario does.
    public static var starterRuns: [StarterRun] { [StarterRun(strategies: ["gcd-global", "thread(8MiB)"])] }
    /// No ranking tables, by default.
    public static var rankings: [RankingRequest] { [] }
}

/// An outcome a scenario typically ends in, and why.
public struct TypicalOutcome: Sendable, Hashable {
    /// The outcome.
    public var outcome: TrialOutcome.Kind
    /// When and why the scenario ends in it.
    public var because: String

    /// `TypicalOutcome(.stackOverflow, because: "archiving recurses once per node")`.
    public init(_ outcome: TrialOutcome.Kind, because: String) {
        self.outcome = outcome
        self.because = because
    }
}

/// One run of the suite `strain explain` offers: the parameters that differ from
/// their defaults, the strategies, and the outcomes the run ends in there.
public struct StarterRun: Sendable, Hashable {
    /// Parameters that differ from their defaults, each value as a suite writes it
    /// (`["operation": "unarchive"]`).
    public var parameters: [String: String]
    /// The suite's strategy names (`thread(512KiB)`).
    public var strategies: [String]
    /// The outcomes the run's trials end in: one, or several where chance decides.
    public var expect: [TrialOutcome.Kind]
    /// Outcomes for the strategies that end differently from ``expect``.
    public var expectOn: [String: [TrialOutcome.Kind]]
    /// The run's stall threshold as a suite writes it (`750ms`), or nil for the default.
    public var stall: String?

    /// `StarterRun(parameters: ["guard": "NSLock"], strategies: ["thread(512KiB)"], expect: [.deadlocked], stall: "500ms")`.
    public init(parameters: [String: String] = [:], strategies: [String], expect: [TrialOutcome.Kind] = [.completed],
                expectOn: [String: [TrialOutcome.Kind]] = [:], stall: String? = nil) {
        self.parameters = parameters
        self.strategies = strategies
        self.expect = expect
        self.expectOn = expectOn
        self.stall = stall
    }
}

/// The measured part of a scenario: given the trial's strategy, it runs the work
/// there and returns when the work is done.
public typealias Workload = @Sendable (_ executor: any StrategyExecutor) throws -> Void

/// The error a scenario throws when what it checks does not hold: the trial
/// ends `invariantViolated` (anything else it throws ends it `threw`).
public struct InvariantViolation: Error, Sendable, CustomStringConvertible {
    /// What did not hold, with the numbers (`3 of 1000 elements lost`).
    public var description: String
    /// A violation described by `description`.
    public init(_ description: String) { self.description = description }
}

/// A report table a scenario asks for: its trials ranked by one metric across
/// the values of one of its parameters, one table per combination of the
/// others ("guards by throughput"). List them in ``Scenario/rankings``.
public struct RankingRequest: Sendable {
    let parameter: String
    let metric: String
    let ignoring: [String]

    /// Ranks the values of `parameter` by `metric` (one of Strain's own, such
    /// as `throughput` or `wall`, or one the scenario declares); parameters in
    /// `ignoring` are measurement knobs, so trials that differ only in them
    /// share a table.
    public init(by metric: String, across parameter: any ParameterDeclaration, ignoring: [any ParameterDeclaration] = []) {
        self.parameter = parameter.spec.name
        self.metric = metric
        self.ignoring = ignoring.map(\.spec.name)
    }

    /// The request as run.json records it for `scenario`.
    package func record(for scenario: String) -> MetricRanking {
        MetricRanking(scenario: scenario, parameter: parameter, metric: metric, ignoring: ignoring)
    }
}
