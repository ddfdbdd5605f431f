import Foundation
import StrainHelpers
import StrainKit
import StrainReports
import StrainRunner
import StrainScenarios
import StrainSuite
import Testing

/// A scenario that reads one parameter it declares and, when asked, one it does not.
private struct Sloppy: Scenario {
    static let name = "sloppy"
    static let summary = "reads `forgotten` only when `mode` is careless"
    enum Mode: String, CaseIterable, Sendable { case careful, careless }
    static let mode = Parameter<Mode>("mode", default: .careful, help: "careless reads an undeclared parameter")
    static let forgotten = Parameter<Int>("forgotten", in: 0...10, default: 3, help: "never declared")
    static let parameters: [any ParameterDeclaration] = [mode]

    let value: Int
    init(parameters: ParameterValues) {
        value = parameters[Self.mode] == .careless ? parameters[Self.forgotten] : 0
    }

    func prepare(context: ScenarioContext) throws -> Workload { { _ in } }
}

/// Declarations that clash: a default out of range, a ranking across nothing.
private struct Clashing: Scenario {
    static let name = "Clashing Name"
    static let summary = "every declaration wrong"
    static let size = Parameter<Int>("size", in: 1...10, default: 50, help: "a default outside its range")
    static let parameters: [any ParameterDeclaration] = [size, size]
    static let wall = Metric<Double>.seconds("wall", better: .lowerIsBetter, noise: .timing, summary: "Strain's own name")
    static let metrics: [any MetricDeclaration] = [wall, wall]
    static let rankings = [RankingRequest(by: "speed", across: Parameter<Int>("missing", in: 0...1, default: 0, help: ""))]

    init(parameters: ParameterValues) {}
    func prepare(context: ScenarioContext) throws -> Workload { { _ in } }
}

@Suite struct ScenarioSDKTests {
    @Test func typedParametersReadBackTheSuitesValuesAndTheirDefaults() throws {
        let stackDepth = try #require(ScenarioCatalog.builtIn.scenario(named: "stack-depth"))
        let values = ParameterValues(["frame": "1KiB", "limit": "7"], for: stackDepth)
        #expect(values[Parameter<Int>.byteSize("frame", in: 16...1024, default: 512, help: "bytes each level keeps on the stack")] == 1024)
        let defaults = ParameterValues([:], for: Sloppy.self)
        #expect(defaults[Sloppy.mode] == .careful)
        #expect(defaults.problems.isEmpty)
    }

    @Test func readingAnUndeclaredParameterGivesItsDefaultAndNamesTheMistake() {
        let values = ParameterValues(["mode": "careless"], for: Sloppy.self)
        #expect(values[Sloppy.forgotten] == 3)
        #expect(values.problems == ["scenario 'sloppy' reads parameter 'forgotten', which it does not declare; add it to its `static var parameters` (it declares mode)"])
    }

    @Test func aSuiteRunningAScenarioThatReadsAnUndeclaredParameterIsRefusedAtTheRunsScenarioLine() {
        let parser = SuiteParser(catalog: ScenarioCatalog([Sloppy.self]))
        #expect(throws: Never.self) { try parser.parse("name: ok\nruns:\n  - scenario: sloppy\n    strategies: [main]\n", path: "ok.yaml") }
        do {
            _ = try parser.parse("name: bad\nruns:\n  - scenario: sloppy\n    parameters: {mode: [careful, careless]}\n    strategies: [main]\n", path: "bad.yaml")
            Issue.record("the careless combination reads an undeclared parameter")
        } catch {
            #expect(error.description.contains("bad.yaml:3:15") && error.description.contains("reads parameter 'forgotten'"), "\(error.description)")
        }
    }

    @Test func theCatalogRefusesDuplicateNamesAndInvalidDeclarationsNamingEach() {
        #expect(throws: Never.self) { try ScenarioCatalog.builtIn.validate() }
        do {
            try (ScenarioCatalog([Sloppy.self, Clashing.self]) + ScenarioCatalog([Sloppy.self])).validate()
            Issue.record("the catalog is invalid")
        } catch {
            let text = error.description
            #expect(text.contains("two scenarios are named 'sloppy'"))
            #expect(text.contains("scenario name 'Clashing Name'"))
            #expect(text.contains("declares parameter 'size' twice"))
            #expect(text.contains("the default of parameter 'size' is invalid"))
            #expect(text.contains("declares metric 'wall', which is one of Strain's own"))
            #expect(text.contains("declares metric 'wall' twice"))
            #expect(text.contains("ranking across 'missing'") && text.contains("ranking by 'speed'"))
        }
    }

    @Test func aTypedMetricRecordsItsValueUnderItsOneNameWithTheUnitItsConstructorSays() {
        let context = ScenarioContext(parameters: ParameterValues([:], for: Clashing.self), seed: 1, profile: .linux)
        let bytes = Metric<Int>.bytes("archive", better: .lowerIsBetter, noise: .deterministic, summary: "bytes archived")
        let latency = Metric<Double>.nanoseconds("access", better: .lowerIsBetter, noise: .timing, summary: "one access")
        let rate = Metric<Double>.rate("drained", better: .higherIsBetter, noise: .timing, summary: "items a second")
        context.record(bytes, 4096)
        context.record(latency, 481.5)
        context.record(rate, 2.5e6)
        context.record(bytes, 8192)
        #expect(context.metrics == ["archive": 8192, "access": 481.5, "drained": 2.5e6], "a name recorded again keeps its last value")
        #expect(bytes.descriptor.unit == .bytes && latency.descriptor.unit == .nanoseconds && rate.descriptor.unit == .perSecond)
        #expect(bytes.descriptor.polarity == .lowerIsBetter && rate.descriptor.polarity == .higherIsBetter)
        #expect(Metric<Int>.count("objects", better: nil, noise: .counted, summary: "").descriptor.polarity == nil)
    }

    @Test func everyMetricABuiltInScenarioDeclaresIsListedOnceWithItsDescriptor() {
        for scenario in ScenarioCatalog.builtIn.scenarios {
            let names = scenario.metricDescriptors.map(\.name)
            #expect(Set(names).count == names.count, "\(scenario.name): \(names)")
            #expect(names.allSatisfy { MetricDescriptor.builtIn(named: $0) == nil }, "\(scenario.name): \(names)")
        }
        #expect(ScenarioCatalog.builtIn.scenarios.contains { !$0.metricDescriptors.isEmpty }, "some built-in scenario declares metrics")
    }

    @Test func everyBuiltInScenarioCreatesFromItsDefaultsReadingOnlyWhatItDeclares() {
        for scenario in ScenarioCatalog.builtIn.scenarios {
            #expect(scenario.undeclaredReads([:]).isEmpty, "\(scenario.name)")
        }
    }

    @Test func aRankingByADeclaredLowerIsBetterMetricPutsTheSmallestFirstAndTheFailedLast() {
        func trial(_ coding: String, _ seconds: Double?, _ outcome: TrialOutcome = .completed) -> TrialRecord {
            let key = TrialKey(scenario: "decode", parameters: [.init(name: "coding", value: coding), .init(name: "depth", value: "10")],
                               strategy: .thread(stackBytes: 512 * 1024), profile: .linux)
            var metrics = TrialMetrics()
            if let seconds { metrics.custom["decode seconds"] = seconds }
            return TrialRecord(id: TrialID(key: key, repetition: 1), index: 0, seed: 1, outcome: outcome, expected: true,
                               expectedOutcomes: ["completed"], metrics: metrics, startedAt: "")
        }
        var run = RunRecord(
            suite: ResolvedSuite(name: "t", description: nil, path: "t.yaml", repetitions: 1, timeoutSeconds: 10, stallSeconds: 1, profiles: ["linux"], runs: []),
            environment: EnvironmentRecord(host: "h", cores: 2, memoryBytes: 0, kernel: "k", architecture: "x86_64", swiftVersion: "6", rlimits: [:], gitCommit: nil),
            startedAt: "", finishedAt: "", runnerPeakRSSBytes: 0,
            trials: [trial("json", 0.3), trial("plist", 0.1), trial("archive", nil, TrialOutcome(kind: .stackOverflow)), trial("binary", 0.2)],
            customMetrics: [MetricDescriptor(name: "decode seconds", unit: .seconds, polarity: .lowerIsBetter, noise: .timing, summary: "")]
        )
        run.rankings = [MetricRanking(scenario: "decode", parameter: "coding", metric: "decode seconds")]
        let tables = GuardComparison(run).tables
        #expect(tables.count == 1)
        #expect(tables.first?.title == "decode[depth=10] on linux: codings by decode time")
        #expect(tables.first?.rows.map(\.value) == ["plist", "binary", "json", "archive"])
        #expect(tables.first.map { GuardComparison.cells($0.rows[0], rank: 1)[3] } == "100 ms")
        #expect(tables.first?.header == ["#", "coding", "strategy", "decode time", "p50", "p99", "p99.9", "fairness", "together", "outcomes"])
    }
}

/// `strain explain` and `strain list --json`, through the built binary.
@Suite struct CatalogCommandTests {
    @Test func explainShowsParametersWithTypesRangesAndDefaultsOutcomesAndASuiteThatParses() async throws {
        let result = try await StrainBinary.run(["explain", "cyclic-graph"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("size       integer: a whole number from 1 to 1000000; default 20"), "\(result.stdout)")
        #expect(result.stdout.contains("operation  choice: one of archive, unarchive, traverse; default archive"))
        #expect(result.stdout.contains("archiveBytes  bytes, lower is better, deterministic"))
        #expect(result.stdout.contains("stackOverflow"))
        let snippet = try #require(result.stdout.components(separatedBy: "A suite to start from (it passes as it is):\n\n").last)
        #expect(throws: Never.self) { try SuiteParser(catalog: .builtIn).parse(snippet, path: "snippet.yaml") }
    }

    @Test func explainOfAnUnknownScenarioSuggestsTheNearestAndExitsTwo() async throws {
        let result = try await StrainBinary.run(["explain", "cyclic-grph"])
        #expect(result.status == 2)
        #expect(result.stderr.contains("unknown scenario 'cyclic-grph' (did you mean 'cyclic-graph'?); valid scenarios: "), "\(result.stderr)")
        // Worded as bisect's and a suite's; with no near name, no suggestion and no missing ';' (re-trial 35m, N7).
        let far = try await StrainBinary.run(["explain", "nosuch"])
        #expect(far.status == 2 && far.stderr.contains("unknown scenario 'nosuch'; valid scenarios: "), "\(far.stderr)")
    }

    @Test func listJSONCarriesEveryScenarioWithTypedParametersMetricsAndOutcomes() async throws {
        let result = try await StrainBinary.run(["list", "--json"])
        #expect(result.status == 0, "\(result.stderr)")
        let listing = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        #expect(listing["version"] as? Int == 1)
        let scenarios = try #require(listing["scenarios"] as? [[String: Any]])
        #expect(scenarios.map { $0["name"] as? String } == ScenarioCatalog.builtIn.names)
        let stack = try #require(scenarios.first { $0["name"] as? String == "stack-depth" })
        let frame = try #require((stack["parameters"] as? [[String: Any]])?.first { $0["name"] as? String == "frame" })
        #expect(frame["type"] as? String == "byte size" && frame["minimum"] as? Int == 16 && frame["maximum"] as? Int == 1024 && frame["default"] as? String == "512B")
        let graph = try #require(scenarios.first { $0["name"] as? String == "cyclic-graph" })
        #expect((graph["metrics"] as? [[String: Any]])?.contains { $0["name"] as? String == "archiveBytes" && $0["unit"] as? String == "bytes" } == true)
        #expect((graph["typicalOutcomes"] as? [[String: Any]])?.isEmpty == false)
        #expect((listing["strategies"] as? [[String: Any]])?.isEmpty == false)
    }
}

/// Every suite `strain explain` offers is one a newcomer can run as it is: it
/// passes on its first run (issue 20: 5 of 15 used to exit 1).
@Suite(.timeLimit(.minutes(10))) struct StarterSuiteTests {
    @Test func everyScenariosStarterSuiteFromExplainPassesOnItsFirstRun() async throws {
        let names = ScenarioCatalog.builtIn.names
        #expect(names.count == 17, "the catalog's scenarios: \(names)")
        for name in names {
            let explained = try await StrainBinary.run(["explain", name])
            #expect(explained.status == 0, "\(name): \(explained.stderr)")
            let suite = try #require(explained.stdout.components(separatedBy: "A suite to start from (it passes as it is):\n\n").dropFirst().first, "\(name): \(explained.stdout)")
            let (result, record, _) = try await StrainBinary.runSuiteLeavingNothing(suite, timeout: 180)
            #expect(result.status == 0, "\(name)'s starter suite:\n\(suite)\n\(result.stdout)\n\(result.stderr)")
            let trials = record?.trials ?? []
            #expect(!trials.isEmpty && trials.allSatisfy { $0.scenario == name }, "\(name): \(trials.map(\.id.description))")
        }
    }
}
