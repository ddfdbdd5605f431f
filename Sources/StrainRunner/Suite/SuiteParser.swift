import Foundation
import StrainKit
import Yams

/// A problem in a suite file, with the place and the fix.
public struct SuiteError: Error, Sendable, CustomStringConvertible {
    public var file: String
    /// 1-based line and column; nil when the problem is the whole file.
    public var line: Int?
    public var column: Int?
    public var message: String

    public init(file: String, line: Int?, column: Int?, message: String) {
        self.file = file
        self.line = line
        self.column = column
        self.message = message
    }

    /// `Scenarios/stack.yaml:12:7: error: unknown strategy 'gcd'; valid strategies: …`
    public var description: String {
        var place = file
        if let line { place += ":\(line)" }
        if let column { place += ":\(column)" }
        return "\(place): error: \(message)"
    }
}

/// Reads suite files: YAML in, a validated `Suite` out, or a `SuiteError` that
/// names the file, the line and column, and what to write instead.
public struct SuiteParser: Sendable {
    public let catalog: ScenarioCatalog

    public init(catalog: ScenarioCatalog) {
        self.catalog = catalog
    }

    static let suiteKeys = ["name", "description", "repetitions", "timeout", "stall", "profiles", "gate", "runs"]
    static let runKeys = ["scenario", "parameters", "strategies", "profiles", "repetitions", "timeout", "stall", "expect", "gate"]

    public func parse(contentsOf path: String) throws(SuiteError) -> Suite {
        guard let data = FileManager.default.contents(atPath: path) else {
            let exists = FileManager.default.fileExists(atPath: path)
            throw SuiteError(file: path, line: nil, column: nil, message: exists
                ? "cannot read the suite file; check its permissions"
                : "no such suite file; give the path of a .yaml suite (see Scenarios/README.md)")
        }
        guard let text = String(data: data, encoding: .utf8) else {
            throw SuiteError(file: path, line: nil, column: nil, message: "the suite file is not UTF-8 text")
        }
        return try parse(text, path: path)
    }

    public func parse(_ text: String, path: String) throws(SuiteError) -> Suite {
        let root: Node
        do {
            guard let node = try Yams.compose(yaml: text) else {
                throw SuiteError(file: path, line: nil, column: nil, message: "the suite file is empty; it needs at least `name:` and `runs:`")
            }
            root = node
        } catch let error as SuiteError {
            throw error
        } catch let error as YamlError {
            throw Self.yamlError(error, path: path)
        } catch {
            throw SuiteError(file: path, line: nil, column: nil, message: "not valid YAML: \(error)")
        }
        return try SuiteReader(path: path, catalog: catalog).suite(root)
    }

    private static func yamlError(_ error: YamlError, path: String) -> SuiteError {
        switch error {
        case .scanner(_, let problem, let mark, _), .parser(_, let problem, let mark, _), .composer(_, let problem, let mark, _):
            return SuiteError(file: path, line: mark.line, column: mark.column, message: "not valid YAML: \(problem)")
        default:
            return SuiteError(file: path, line: nil, column: nil, message: "not valid YAML: \(error)")
        }
    }
}

/// Walks the YAML tree of one file, keeping the file name for errors.
private struct SuiteReader {
    let path: String
    let catalog: ScenarioCatalog

    func error(_ node: Node?, _ message: String) -> SuiteError {
        SuiteError(file: path, line: node?.mark?.line, column: node?.mark?.column, message: message)
    }

    func mapping(_ node: Node, _ what: String, keys: [String]) throws(SuiteError) -> [(key: String, keyNode: Node, value: Node)] {
        guard case .mapping(let mapping) = node else {
            throw error(node, "\(what) must be a mapping of keys to values (\(keys.joined(separator: ", ")))")
        }
        var entries: [(key: String, keyNode: Node, value: Node)] = []
        for (keyNode, value) in mapping {
            guard let key = keyNode.scalar?.string else { throw error(keyNode, "\(what) has a key that is not plain text") }
            guard keys.contains(key) else {
                throw error(keyNode, "unknown key '\(key)' in \(what); valid keys: \(keys.joined(separator: ", "))")
            }
            entries.append((key, keyNode, value))
        }
        return entries
    }

    func string(_ node: Node, _ what: String) throws(SuiteError) -> String {
        guard let scalar = node.scalar else { throw error(node, "\(what) must be a single value, not a list or mapping") }
        return scalar.string
    }

    /// A scalar or a list of scalars, as a list.
    func strings(_ node: Node, _ what: String) throws(SuiteError) -> [(String, Node)] {
        switch node {
        case .scalar(let scalar):
            return [(scalar.string, node)]
        case .sequence(let sequence):
            var values: [(String, Node)] = []
            for element in sequence {
                values.append((try string(element, "each value of \(what)"), element))
            }
            guard !values.isEmpty else { throw error(node, "\(what) is an empty list; give at least one value") }
            return values
        default:
            throw error(node, "\(what) must be a value or a list of values")
        }
    }

    func positiveInteger(_ node: Node, _ what: String) throws(SuiteError) -> Int {
        let text = try string(node, what)
        guard let value = Int(text), value >= 1 else {
            throw error(node, "'\(text)' is not a valid \(what); write a whole number of 1 or more")
        }
        return value
    }

    func duration(_ node: Node, _ what: String) throws(SuiteError) -> Double {
        let text = try string(node, what).trimmingCharacters(in: .whitespaces)
        let units: [(String, Double)] = [("ms", 0.001), ("s", 1), ("m", 60), ("h", 3600)]
        for (suffix, factor) in units where text.hasSuffix(suffix) {
            if let value = Double(text.dropLast(suffix.count)), value > 0 { return value * factor }
            break
        }
        if let value = Double(text), value > 0 { return value }
        throw error(node, "'\(text)' is not a valid \(what); write a duration such as 500ms, 60s or 5m")
    }

    /// The gate's thresholds: `metric: {delta: 10%, floor: 1ms}`, for metrics Strain or
    /// one of the catalog's scenarios declares.
    func thresholds(_ node: Node) throws(SuiteError) -> [String: MetricThreshold] {
        let known = MetricDescriptor.builtIn + catalog.declaredMetrics(of: catalog.names)
        var result: [String: MetricThreshold] = [:]
        for (name, keyNode, value) in try mapping(node, "`gate:`", keys: known.map(\.name)) {
            let descriptor = known.first { $0.name == name }!
            var threshold = MetricThreshold()
            for (field, _, fieldValue) in try mapping(value, "the gate's threshold for \(name)", keys: ["delta", "floor"]) {
                let text = try string(fieldValue, field).trimmingCharacters(in: .whitespaces)
                if field == "delta" {
                    let number = text.hasSuffix("%") ? Double(text.dropLast()).map { $0 / 100 } : Double(text)
                    guard let number, number.isFinite, (0...10).contains(number) else {
                        throw error(fieldValue, "'\(text)' is not a valid delta for \(name); write a relative change from 0% to 1000%, e.g. 10%")
                    }
                    threshold.delta = number
                } else {
                    guard let number = Self.floor(text, unit: descriptor.unit), number.isFinite, (0...1e15).contains(number) else {
                        throw error(fieldValue, "'\(text)' is not a valid floor for \(name) (\(descriptor.unit.rawValue)); write an amount from 0, e.g. \(Self.floorExample(descriptor.unit))")
                    }
                    threshold.floor = number
                }
            }
            _ = keyNode
            result[name] = threshold
        }
        return result
    }

    /// A floor in the metric's unit: durations for seconds and nanoseconds, sizes for bytes.
    static func floor(_ text: String, unit: MetricDescriptor.Unit) -> Double? {
        switch unit {
        case .bytes:
            return ByteSize.parse(text).map(Double.init)
        case .seconds, .nanoseconds:
            let units: [(String, Double)] = [("ns", 1e-9), ("µs", 1e-6), ("us", 1e-6), ("ms", 1e-3), ("s", 1)]
            for (suffix, factor) in units where text.hasSuffix(suffix) {
                guard let value = Double(text.dropLast(suffix.count).trimmingCharacters(in: .whitespaces)) else { return nil }
                return unit == .seconds ? value * factor : value * factor * 1e9
            }
            return Double(text)
        default:
            return Double(text)
        }
    }

    static func floorExample(_ unit: MetricDescriptor.Unit) -> String {
        switch unit {
        case .bytes: "4KiB"
        case .seconds, .nanoseconds: "1ms"
        default: "2"
        }
    }

    func profiles(_ node: Node) throws(SuiteError) -> [Profile] {
        var result: [Profile] = []
        for (text, element) in try strings(node, "profiles") {
            guard let profile = Profile(rawValue: text) else {
                throw error(element, "unknown profile '\(text)'; valid profiles: \(Profile.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            result.append(profile)
        }
        return result
    }

    func suite(_ root: Node) throws(SuiteError) -> Suite {
        var name: String?
        var description: String?
        var repetitions = 1
        var timeout = 60.0
        var stall = Suite.defaultStallSeconds
        var profiles: [Profile] = [.linux]
        var runNodes: Node?
        var gate: [String: MetricThreshold] = [:]
        for (key, _, value) in try mapping(root, "the suite", keys: SuiteParser.suiteKeys) {
            switch key {
            case "name": name = try string(value, "name")
            case "description": description = try string(value, "description")
            case "repetitions": repetitions = try positiveInteger(value, "repetitions")
            case "timeout": timeout = try duration(value, "timeout")
            case "stall": stall = try duration(value, "stall")
            case "profiles": profiles = try self.profiles(value)
            case "gate": gate = try thresholds(value)
            default: runNodes = value
            }
        }
        guard let name, !name.isEmpty else { throw error(root, "the suite has no `name:`; add one, e.g. `name: stack`") }
        guard let runNodes else { throw error(root, "the suite has no `runs:`; add a list of runs, each with `scenario:` and `strategies:`") }
        guard case .sequence(let sequence) = runNodes, !sequence.isEmpty else {
            throw error(runNodes, "`runs:` must be a list of runs, each starting with `- scenario: NAME`")
        }
        var runs: [SuiteRun] = []
        for node in sequence {
            runs.append(try run(node, repetitions: repetitions, timeout: timeout, stall: stall, profiles: profiles))
        }
        return Suite(name: name, description: description, path: path, repetitions: repetitions, timeoutSeconds: timeout,
                     stallSeconds: stall, profiles: profiles, runs: runs, gate: gate)
    }

    func run(_ node: Node, repetitions: Int, timeout: Double, stall: Double, profiles: [Profile]) throws(SuiteError) -> SuiteRun {
        let entries = try mapping(node, "a run", keys: SuiteParser.runKeys)
        guard let scenarioEntry = entries.first(where: { $0.key == "scenario" }) else {
            throw error(node, "this run has no `scenario:`; valid scenarios: \(catalog.names.joined(separator: ", "))")
        }
        let scenarioName = try string(scenarioEntry.value, "scenario")
        guard let scenario = catalog.scenario(named: scenarioName) else {
            throw error(scenarioEntry.value, "unknown scenario '\(scenarioName)'; valid scenarios: \(catalog.names.joined(separator: ", "))")
        }
        var run = SuiteRun(
            scenario: scenarioName, parameters: [], strategies: [], profiles: profiles,
            repetitions: repetitions, timeoutSeconds: timeout, stallSeconds: stall, expectations: [:]
        )
        run.line = node.mark?.line
        var given: [String: [String]] = [:]
        var expectNode: Node?
        for (key, _, value) in entries {
            switch key {
            case "parameters": given = try parameters(value, scenario: scenario)
            case "strategies": run.strategies = try strategies(value)
            case "profiles": run.profiles = try self.profiles(value)
            case "repetitions": run.repetitions = try positiveInteger(value, "repetitions")
            case "timeout": run.timeoutSeconds = try duration(value, "timeout")
            case "stall": run.stallSeconds = try duration(value, "stall")
            case "expect": expectNode = value
            case "gate": run.gate = try thresholds(value)
            default: break
            }
        }
        guard !run.strategies.isEmpty else {
            throw error(node, "the run of '\(scenarioName)' has no `strategies:`; add a list such as [gcd-global, thread(512KiB)]")
        }
        run.parameters = scenario.parameters.map { spec in (spec.name, given[spec.name] ?? [spec.defaultValue]) }
        if let expectNode { run.expectations = try expectations(expectNode, strategies: run.strategies) }
        return run
    }

    func parameters(_ node: Node, scenario: any Scenario.Type) throws(SuiteError) -> [String: [String]] {
        let specs = scenario.parameters
        let names = specs.map(\.name)
        guard !names.isEmpty else {
            throw error(node, "scenario '\(scenario.name)' takes no parameters; remove `parameters:`")
        }
        var result: [String: [String]] = [:]
        for (key, keyNode, value) in try mapping(node, "the parameters of '\(scenario.name)'", keys: names) {
            guard let spec = specs.first(where: { $0.name == key }) else { throw error(keyNode, "unknown parameter '\(key)'") }
            var values: [String] = []
            for (text, element) in try strings(value, "parameter '\(key)'") {
                if let problem = spec.problem(with: text) { throw error(element, problem) }
                values.append(text)
            }
            result[key] = values
        }
        return result
    }

    func strategies(_ node: Node) throws(SuiteError) -> [StrategySpec] {
        var result: [StrategySpec] = []
        for (text, element) in try strings(node, "strategies") {
            let strategy = try self.strategy(text, element)
            guard !result.contains(strategy) else { throw error(element, "strategy '\(text)' is listed twice; list each once") }
            result.append(strategy)
        }
        return result
    }

    func strategy(_ text: String, _ node: Node) throws(SuiteError) -> StrategySpec {
        do {
            return try StrategySpec(parsing: text)
        } catch {
            throw self.error(node, error.description)
        }
    }

    func expectations(_ node: Node, strategies: [StrategySpec]) throws(SuiteError) -> [String: [ExpectedOutcome]] {
        let outcomeNames = TrialOutcome.Kind.allCases.filter { $0 != .harnessError }.map(\.rawValue)
        func outcomes(_ value: Node) throws(SuiteError) -> [ExpectedOutcome] {
            var result: [ExpectedOutcome] = []
            for (text, element) in try strings(value, "expected outcomes") {
                guard let outcome = ExpectedOutcome(parsing: text), outcome.kind != .harnessError else {
                    throw error(element, "unknown outcome '\(text)'; valid outcomes: \(outcomeNames.joined(separator: ", ")) (crashed takes a signal: crashed(SIGSEGV))")
                }
                result.append(outcome)
            }
            return result
        }
        // `expect: completed` applies to every strategy.
        if node.scalar != nil || node.sequence != nil { return ["default": try outcomes(node)] }
        guard case .mapping(let mapping) = node else {
            throw error(node, "`expect:` must be outcomes, or a mapping from strategy (or `default`) to outcomes")
        }
        var result: [String: [ExpectedOutcome]] = [:]
        for (keyNode, value) in mapping {
            let key = try string(keyNode, "a strategy under expect")
            if key == "default" {
                result[key] = try outcomes(value)
                continue
            }
            let strategy = try self.strategy(key, keyNode)
            guard strategies.contains(strategy) else {
                throw error(keyNode, "expect names '\(key)', which this run does not list in `strategies:` (\(strategies.map(\.description).joined(separator: ", "))); name one of those or `default`")
            }
            result[strategy.description] = try outcomes(value)
        }
        return result
    }
}
