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
}
