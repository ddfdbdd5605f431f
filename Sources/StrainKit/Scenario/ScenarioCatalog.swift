/// The scenarios a `strain` binary knows, by name.
///
/// ```swift
/// StrainCommand.main(catalog: ScenarioCatalog([DecodeOrders.self, OrderCache.self]) + .builtIn)
/// ```
///
/// `StrainCommand.main` refuses a catalog that ``validate()`` rejects (two
/// scenarios of one name, a default outside its range) with exit code 2.
public struct ScenarioCatalog: Sendable {
    /// The scenarios, in the order `strain list` shows them.
    public let scenarios: [any Scenario.Type]

    /// A catalog of `scenarios`.
    public init(_ scenarios: [any Scenario.Type]) {
        self.scenarios = scenarios
    }

    /// The scenarios of both catalogs, `left`'s first.
    public static func + (left: ScenarioCatalog, right: ScenarioCatalog) -> ScenarioCatalog {
        ScenarioCatalog(left.scenarios + right.scenarios)
    }

    /// The scenarios' names.
    public var names: [String] { scenarios.map { $0.name } }

    /// The scenario called `name`, if the catalog has one.
    public func scenario(named name: String) -> (any Scenario.Type)? {
        scenarios.first { $0.name == name }
    }

    /// The metrics the named scenarios declare, each name once.
    public func declaredMetrics(of names: some Sequence<String>) -> [MetricDescriptor] {
        var seen = Set<String>()
        var descriptors: [MetricDescriptor] = []
        for name in names {
            for descriptor in scenario(named: name)?.metricDescriptors ?? [] where seen.insert(descriptor.name).inserted {
                descriptors.append(descriptor)
            }
        }
        return descriptors
    }

    /// The ranking tables the named scenarios ask for, as run.json records them.
    public func rankings(of names: some Sequence<String>) -> [MetricRanking] {
        var seen = Set<String>()
        return names.filter { seen.insert($0).inserted }.flatMap { name in
            (scenario(named: name)?.rankings ?? []).map { $0.record(for: name) }
        }
    }

    /// Checks every declaration: names unique and well formed, each parameter's
    /// default valid, each metric named once and apart from Strain's own.
    ///
    /// - Throws: ``ScenarioCatalogError`` listing every problem, each with its fix.
    public func validate() throws(ScenarioCatalogError) {
        var problems: [String] = []
        var seen: [String: String] = [:]
        for scenario in scenarios {
            let name = scenario.name
            let typeName = String(describing: scenario)
            if let other = seen[name] {
                problems.append("two scenarios are named '\(name)' (\(other) and \(typeName)); rename one or leave one out of the catalog")
            }
            seen[name] = seen[name] ?? typeName
            if name.isEmpty || !name.allSatisfy({ $0.isLowercase || $0.isNumber || $0 == "-" }) {
                problems.append("scenario name '\(name)' (\(typeName)) must be lower case letters, digits and '-', as suites write it")
            }
            var parameterNames = Set<String>()
            for spec in scenario.parameterSpecs {
                if !parameterNames.insert(spec.name).inserted {
                    problems.append("scenario '\(name)' declares parameter '\(spec.name)' twice; declare it once")
                }
                if case .choice(let choices) = spec.kind, choices.isEmpty {
                    problems.append("scenario '\(name)': parameter '\(spec.name)' offers no choices")
                } else if let problem = spec.problem(with: spec.defaultValue) {
                    problems.append("scenario '\(name)': the default of parameter '\(spec.name)' is invalid: \(problem)")
                }
            }
            for ranking in scenario.rankings.map({ $0.record(for: name) }) {
                if !parameterNames.contains(ranking.parameter) {
                    problems.append("scenario '\(name)' asks for a ranking across '\(ranking.parameter)', which is not one of its parameters")
                }
                if MetricDescriptor.builtIn(named: ranking.metric) == nil && !scenario.metricDescriptors.contains(where: { $0.name == ranking.metric }) {
                    problems.append("scenario '\(name)' asks for a ranking by '\(ranking.metric)', which neither Strain nor the scenario declares; declare it in `metrics`")
                }
            }
            var metricNames = Set<String>()
            for metric in scenario.metricDescriptors {
                if !metricNames.insert(metric.name).inserted {
                    problems.append("scenario '\(name)' declares metric '\(metric.name)' twice; declare it once")
                }
                if MetricDescriptor.builtIn(named: metric.name) != nil {
                    problems.append("scenario '\(name)' declares metric '\(metric.name)', which is one of Strain's own; give it another name")
                }
            }
        }
        if !problems.isEmpty { throw ScenarioCatalogError(problems: problems) }
    }
}

/// What is wrong with a catalog's declarations.
public struct ScenarioCatalogError: Error, Sendable, CustomStringConvertible {
    /// Each problem, with what to change.
    public var problems: [String]
    /// The problems, one a line.
    public var description: String { problems.joined(separator: "\n") }
}
