/// The scenarios a `strain` binary knows, by name.
public struct ScenarioCatalog: Sendable {
    public let scenarios: [any Scenario.Type]

    public init(_ scenarios: [any Scenario.Type]) {
        self.scenarios = scenarios
    }

    public var names: [String] { scenarios.map { $0.name } }

    public func scenario(named name: String) -> (any Scenario.Type)? {
        scenarios.first { $0.name == name }
    }

    /// The metrics the named scenarios declare, each name once.
    public func declaredMetrics(of names: some Sequence<String>) -> [MetricDescriptor] {
        var seen = Set<String>()
        var descriptors: [MetricDescriptor] = []
        for name in names {
            for descriptor in scenario(named: name)?.metrics ?? [] where seen.insert(descriptor.name).inserted {
                descriptors.append(descriptor)
            }
        }
        return descriptors
    }
}
