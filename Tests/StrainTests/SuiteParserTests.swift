import StrainKit
import StrainRunner
import StrainScenarios
import StrainSuite
import Testing

@Suite struct SuiteParserTests {
    let parser = SuiteParser(catalog: .builtIn)

    func problem(_ yaml: String) -> SuiteError? {
        do {
            _ = try parser.parse(yaml, path: "bad.yaml")
            return nil
        } catch {
            return error
        }
    }

    @Test func parsesTheDocumentedShapeWithDefaultsFilledIn() throws {
        let suite = try parser.parse("""
        name: stack
        description: Deep graphs
        repetitions: 3
        timeout: 90s
        profiles: [linux, ios]
        runs:
          - scenario: cyclic-graph
            parameters:
              operation: [archive, unarchive]
              shape: chain
              size: [200, 2000]
            strategies: [gcd-global, gcd-serial, thread(512KiB), thread(8MiB), thread-queue(1MiB)]
            expect:
              thread(8MiB): completed
              default: [completed, stackOverflow]
          - scenario: noop
            strategies: main
            repetitions: 1
            timeout: 500ms
        """, path: "stack.yaml")
        #expect(suite.name == "stack")
        #expect(suite.profiles == [.linux, .ios])
        #expect(suite.runs.count == 2)
        let graph = suite.runs[0]
        #expect(graph.repetitions == 3)
        #expect(graph.timeoutSeconds == 90)
        #expect(graph.strategies == [.gcdGlobal(.default), .gcdSerial, .thread(stackBytes: 512 * 1024), .thread(stackBytes: 8 << 20), .threadQueue(stackBytes: 1 << 20)])
        #expect(graph.parameters.first { $0.name == "size" }?.values == ["200", "2000"])
        #expect(graph.parameters.first { $0.name == "players" }?.values == ["3"], "unset parameters take their defaults")
        #expect(graph.expected(for: .thread(stackBytes: 8 << 20), profile: .linux).map(\.description) == ["completed"])
        #expect(graph.expected(for: .gcdSerial, profile: .linux).map(\.description) == ["completed", "stackOverflow"])
        #expect(suite.runs[1].timeoutSeconds == 0.5)
        #expect(suite.runs[1].expected(for: .main, profile: .linux).map(\.description) == ["completed"], "no expect means completed")
    }

    @Test func expectVariesByProfileAndTheMostSpecificEntryWins() throws {
        let suite = try parser.parse("""
        name: per-profile
        profiles: [linux, ios, macos]
        runs:
          - scenario: cyclic-graph
            strategies: [gcd-global, thread(8MiB)]
            expect:
              ios: {gcd-global: stackOverflow, default: [completed, stackOverflow]}
              macos: [crashed]
              thread(8MiB): threw
              default: completed
        """, path: "per-profile.yaml")
        let run = try #require(suite.runs.first)
        func expected(_ strategy: StrategySpec, _ profile: Profile) -> [String] { run.expected(for: strategy, profile: profile).map(\.description) }
        #expect(expected(.gcdGlobal(.default), .ios) == ["stackOverflow"], "the profile's entry for the strategy")
        #expect(expected(.thread(stackBytes: 8 << 20), .ios) == ["completed", "stackOverflow"], "the profile's default beats the strategy's")
        #expect(expected(.gcdGlobal(.default), .macos) == ["crashed"])
        #expect(expected(.thread(stackBytes: 8 << 20), .linux) == ["threw"], "no profile entry: the strategy's")
        #expect(expected(.gcdGlobal(.default), .linux) == ["completed"])
        // Each trial carries its own profile's expectation, and run.json records the keys.
        let plan = Plan(suite: suite)
        let iosGCD = try #require(plan.trials.first { $0.id.key.profile == .ios && $0.id.key.strategy == .gcdGlobal(.default) })
        #expect(iosGCD.expected.map(\.description) == ["stackOverflow"])
        #expect(suite.resolved.runs[0].expect["ios/gcd-global"] == ["stackOverflow"])
        #expect(suite.resolved.runs[0].expect["macos/default"] == ["crashed"])
    }

    @Test func unknownStrategyNamesTheLineColumnAndTheValidNames() throws {
        let error = try #require(problem("""
        name: s
        runs:
          - scenario: noop
            strategies: [gcd-global, gcd-turbo]
        """))
        #expect(error.line == 4)
        #expect(error.column == 30)
        #expect(error.description.hasPrefix("bad.yaml:4:30: error: unknown strategy 'gcd-turbo'"))
        #expect(error.message.contains("thread-queue(stack)"))
    }

    @Test func stackSizesUnderTheFloorAreRejectedWithTheReason() throws {
        let error = try #require(problem("name: s\nruns:\n  - scenario: noop\n    strategies: [thread(8KiB)]\n"))
        #expect(error.line == 4)
        #expect(error.message.contains("under 32KiB, too small for Swift's runtime"))
        #expect(error.message.contains("Foundation ignores a stack under 16KiB"))
    }

    @Test func unparsableStackSizeSuggestsAValidOne() throws {
        let error = try #require(problem("name: s\nruns:\n  - scenario: noop\n    strategies: [thread(lots)]\n"))
        #expect(error.message.contains("512KiB"))
    }

    @Test func unknownScenarioListsTheCatalog() throws {
        let error = try #require(problem("name: s\nruns:\n  - scenario: cyclic\n    strategies: [main]\n"))
        #expect(error.line == 3)
        #expect(error.message.contains("unknown scenario 'cyclic'"))
        #expect(error.message.contains("cyclic-graph"))
    }

    @Test func unknownKeyAndUnknownParameterAreNamed() throws {
        let key = try #require(problem("name: s\nrepeats: 3\nruns:\n  - scenario: noop\n    strategies: [main]\n"))
        #expect(key.line == 2)
        #expect(key.message.contains("unknown key 'repeats'"))
        #expect(key.message.contains("repetitions"))

        let parameter = try #require(problem("name: s\nruns:\n  - scenario: cyclic-graph\n    parameters: {sise: 3}\n    strategies: [main]\n"))
        #expect(parameter.line == 4)
        #expect(parameter.message.contains("unknown key 'sise'"))
        #expect(parameter.message.contains("size"))
    }

    @Test func invalidParameterValueSaysWhatIsValid() throws {
        let error = try #require(problem("name: s\nruns:\n  - scenario: cyclic-graph\n    parameters: {operation: [archive, zip]}\n    strategies: [main]\n"))
        #expect(error.line == 4)
        #expect(error.message.contains("'zip' is not a valid value for operation; use one of archive, unarchive, traverse"))
    }

    @Test func expectationsMustNameListedStrategiesAndKnownOutcomes() throws {
        let strategy = try #require(problem("name: s\nruns:\n  - scenario: noop\n    strategies: [main]\n    expect: {thread(8MiB): completed}\n"))
        #expect(strategy.message.contains("does not list"))
        let outcome = try #require(problem("name: s\nruns:\n  - scenario: noop\n    strategies: [main]\n    expect: exploded\n"))
        #expect(outcome.message.contains("unknown outcome 'exploded'"))
    }

    @Test func malformedYAMLIsReportedWithItsPlace() throws {
        let error = try #require(problem("name: s\nruns: [\n  - scenario: noop\n"))
        #expect(error.line != nil)
        #expect(error.message.contains("not valid YAML"))
    }

    @Test func missingFileSaysSo() throws {
        #expect(throws: SuiteError.self) { try parser.parse(contentsOf: "/nonexistent/suite.yaml") }
    }
}

@Suite struct PlanTests {
    @Test func expandsParametersProfilesRepetitionsAndStrategiesInOrder() throws {
        let suite = try SuiteParser(catalog: .builtIn).parse("""
        name: p
        repetitions: 2
        profiles: [linux, ios]
        runs:
          - scenario: cyclic-graph
            parameters: {operation: [archive, unarchive], size: [10, 20, 30]}
            strategies: [gcd-global, thread(1MiB)]
        """, path: "p.yaml")
        let plan = Plan(suite: suite)
        #expect(plan.trials.count == 2 * 3 * 2 * 2 * 2)
        #expect(plan.trials.map(\.index) == Array(0..<plan.trials.count))
        // Strategies are innermost: one repetition runs them side by side on the same seed.
        #expect(plan.trials[0].strategy == .gcdGlobal(.default))
        #expect(plan.trials[1].strategy == .thread(stackBytes: 1 << 20))
        #expect(plan.trials[0].seed == plan.trials[1].seed)
        #expect(plan.trials[0].seed != plan.trials[2].seed, "another repetition gets another seed")
        #expect(plan.trials[0].repetition == 1 && plan.trials[2].repetition == 2)
        #expect(Set(plan.trials.map { $0.parameters["size"]! }) == ["10", "20", "30"])
        #expect(Set(plan.trials.map(\.profile)) == [.linux, .ios])
    }
}
