/// A piece of concurrent work Strain can run, measure and break.
///
/// The child creates the scenario from the suite's parameters, calls `prepare`
/// on a harness thread with a large stack (unmeasured: building a graph or an
/// archive), then runs the returned workload, measured, on the trial's strategy.
public protocol Scenario: Sendable {
    /// The name suites use (`cyclic-graph`).
    static var name: String { get }
    /// One line of help for `strain list`.
    static var summary: String { get }
    /// The parameters the scenario takes, with their valid values.
    static var parameters: [ParameterSpec] { get }
    /// The metrics the scenario records with `ScenarioContext.record`, each with its
    /// unit, direction and noise class, so the reports show them with units and the
    /// gate can judge them. A recorded metric declared here is never judged.
    static var metrics: [MetricDescriptor] { get }

    /// Creates the scenario; the values have already passed their specs' checks.
    init(parameters: ParameterValues) throws

    /// Builds what the work needs and returns the work itself.
    func prepare(context: ScenarioContext) throws -> Workload
}

extension Scenario {
    /// No metrics of its own, by default.
    public static var metrics: [MetricDescriptor] { [] }
}

/// The measured part of a scenario: given the trial's strategy, it runs the work
/// there and returns when the work is done.
public typealias Workload = @Sendable (_ executor: any StrategyExecutor) throws -> Void

/// The errors a scenario reports as such (anything else it throws is `threw`).
public struct InvariantViolation: Error, Sendable, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}
