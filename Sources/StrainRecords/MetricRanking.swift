/// A table a scenario asks the reports for: its trials ranked by one metric
/// across the values of one parameter ("guards by throughput", "coders by
/// wall"), one table per combination of its other parameters.
public struct MetricRanking: Codable, Hashable, Sendable {
    /// The scenario whose trials are ranked.
    public var scenario: String
    /// The parameter whose values are ranked (`guard`).
    public var parameter: String
    /// The metric they are ranked by: one of Strain's own (`throughput`, `wall`)
    /// or one the scenario declares; its polarity says which end is best.
    public var metric: String
    /// Parameters that are measurement knobs, not conditions: trials that differ
    /// only in them share a table.
    public var ignoring: [String]

    /// A ranking of `scenario`'s trials by `metric` across `parameter`.
    public init(scenario: String, parameter: String, metric: String, ignoring: [String] = []) {
        self.scenario = scenario
        self.parameter = parameter
        self.metric = metric
        self.ignoring = ignoring
    }
}
