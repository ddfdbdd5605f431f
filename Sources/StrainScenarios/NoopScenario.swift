import StrainKit

/// Does nothing on its strategy: what a trial costs the harness itself.
struct NoopScenario: Scenario {
    static let name = "noop"
    static let summary = "does nothing; the harness's own cost per trial"
    static let typicalOutcomes = [TypicalOutcome(.completed, because: "there is nothing to go wrong")]

    /// Takes no parameters.
    init(parameters: ParameterValues) {}

    func prepare(context: ScenarioContext) throws -> Workload {
        { executor in try executor.perform {} }
    }
}
