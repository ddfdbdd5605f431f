import Foundation
import StrainSymbols
import Testing

/// The reader of callgrind's output, on a part captured from a real counted trial
/// (`nested-json` parsing 20 levels on `main`, kept with STRAIN_KEEP_CALLGRIND=1).
@Suite struct CallgrindProfileTests {
    static let fixture = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("Fixtures/callgrind-nested-json-parse-20.out").path

    static func profile() throws -> CallgrindProfile {
        try CallgrindProfile(parsing: String(contentsOfFile: fixture, encoding: .utf8))
    }

    @Test func aCountedTrialsPartReadsAsTheWorksTotalWithItsTrigger() throws {
        let profile = try Self.profile()
        #expect(profile.trigger == "Client Request: strain-work")
        #expect(profile.total == 137_625)
        // Every instruction belongs to exactly one function's own code.
        #expect(profile.functions.values.map(\.exclusive).reduce(0, +) == profile.total)
    }

    @Test func compressedNamesResolveToTheFunctionsTheyWereDefinedFor() throws {
        let profile = try Self.profile()
        // `fn=(452) $s…parseValue…` defines 452; later `cfn=(452)` lines refer to it.
        #expect(profile.functions["$s10Foundation10JSONParserV10parseValueAA9JSONValueOyKF"] != nil)
        // No function is left under its number alone, `(12)`.
        let unresolved = profile.functions.keys.filter { $0.wholeMatch(of: /\(\d+\)/) != nil }
        #expect(unresolved.isEmpty, "\(unresolved)")
        #expect(profile.functions.keys.contains { $0.hasPrefix("(anonymous namespace)::") })
        // Objects, files and functions number their names separately: `ob=(2)` is no function.
        let misnamed = profile.functions.keys.filter { $0.hasSuffix(".so") || $0.hasSuffix(".so.6") || $0.hasSuffix(".c") || $0.hasSuffix(".swift") || $0 == "???" }
        #expect(misnamed.isEmpty, "\(misnamed)")
        // The scenario's work closure holds nearly all of the part: it is what ran.
        let work = "$s15StrainScenarios18NestedJSONScenarioV7prepare7contexty0A3Kit16StrategyExecutor_pYbKcAF15ScenarioContextC_tKFyAfG_pYbKcfU1_"
        let share = Double(profile.functions[work]?.inclusive ?? 0) / Double(profile.total)
        #expect(share > 0.9 && share <= 1, "\(share)")
    }

    @Test func eachFunctionKeepsTheObjectItIsInForPlacingItLater() throws {
        let profile = try Self.profile()
        // `ob=(1) …/strain-stripped` names the copy; a later bare `ob=(12)` refers back to a library.
        let work = "$s15StrainScenarios18NestedJSONScenarioV7prepare7contexty0A3Kit16StrategyExecutor_pYbKcAF15ScenarioContextC_tKFyAfG_pYbKcfU1_"
        #expect(profile.objects[work] == "/tmp/strain-callgrind-28529-93DC13B2/strain-stripped")
        #expect(profile.objects["$s10Foundation10JSONParserV10parseValueAA9JSONValueOyKF"]?.hasSuffix(".so") == true,
                "\(profile.objects["$s10Foundation10JSONParserV10parseValueAA9JSONValueOyKF"] ?? "none")")
        // Every function has its object: callgrind names one before any fn=.
        #expect(Set(profile.functions.keys).subtracting(profile.objects.keys).isEmpty)
    }

    @Test func recursiveActivationsMergeIntoTheirFunctionWithoutCountingTheRecursionTwice() throws {
        let profile = try Self.profile()
        #expect(profile.functions.keys.allSatisfy { !$0.hasSuffix("'2") }, "\(profile.functions.keys.filter { $0.hasSuffix("'2") })")
        // Summed over the recursion, inclusive costs would pass the part's total.
        for (name, cost) in profile.functions {
            #expect(cost.inclusive <= profile.total, "\(name): \(cost.inclusive) > \(profile.total)")
            #expect(cost.exclusive <= cost.inclusive, "\(name)")
        }
        let parseValue = try #require(profile.functions["$s10Foundation10JSONParserV10parseValueAA9JSONValueOyKF"])
        #expect(parseValue.inclusive > parseValue.exclusive)
    }

    @Test func theMostCostlyFunctionsComeInclusiveFirstWithTheCostliestOwnCodeAdded() throws {
        let profile = try Self.profile()
        let top = profile.top(inclusive: 5, exclusive: 3)
        #expect(top.count == 8)
        #expect(top.first?.cost.inclusive == profile.functions.values.map(\.inclusive).max())
        let ownCode = profile.functions.values.map(\.exclusive).max()
        #expect(top.contains { $0.cost.exclusive == ownCode })
    }

    @Test func textThatIsNotCallgrindsIsRefusedWithWhere() throws {
        #expect(throws: CallgrindError.noSummary) { try CallgrindProfile(parsing: "events: Ir\nfn=(1) f\n0 5\n") }
        #expect(throws: CallgrindError.malformed(line: 2, text: "a cost line before any fn=")) {
            try CallgrindProfile(parsing: "events: Ir\n0 5\nsummary: 5\n")
        }
        #expect(throws: CallgrindError.malformed(line: 3, text: "0 five")) {
            try CallgrindProfile(parsing: "events: Ir\nfn=(1) f\n0 five\nsummary: 5\n")
        }
    }
}
