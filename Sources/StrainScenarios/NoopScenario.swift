import StrainKit

/// Does nothing on its strategy: what a trial costs the harness itself.
public struct NoopScenario: Scenario {
    public static let name = "noop"
    public static let summary = "does nothing; the harness's own cost per trial"
    public static let typicalOutcomes = [TypicalOutcome(.completed, because: "there is nothing to go wrong")]

    /// Takes no parameters.
    public init(parameters: ParameterValues) {}

    public func prepare(context: ScenarioContext) throws -> Workload {
        { executor in try executor.perform {} }
    }
}
