import Foundation
import StrainKit
import StrainRecords
@testable import StrainScenarios
import Testing

/// `reflective-coding` in real children, through the built binary: the round trip's
/// verdict, the article's fix, and what swift-corelibs-foundation does with an
/// object that does not adopt NSCoding inside a collection. Outcomes, paths and
/// counts, never timings.
@Suite(.serialized, .timeLimit(.minutes(10))) struct ReflectiveCodingTests {
    @Test func genericDecodingThroughCascadingSettersEndsInvariantViolatedNamingEachPathWithBothValues() async throws {
        let (result, run, out) = try await StrainBinary.runSuite("""
        name: cascading
        runs:
          - scenario: reflective-coding
            parameters: {coding: generic, setters: cascading, properties: 12, depth: 3, fanout: 2}
            strategies: [thread(512KiB)]
        """, timeout: 120)
        #expect(result.status == 1, "an unexpected invariantViolated fails the run: \(result.stdout)\n\(result.stderr)")
        let trial = try #require(run?.trials.first)
        #expect(trial.outcome.kind == .invariantViolated, "\(trial.outcome)")
        let message = try #require(trial.outcome.message)
        // The form's root is built with a region its country's setter clears, and
        // every section's total is what the user typed over the computed one.
        #expect(message.contains("`Form.region`: encoded \""), "\(message)")
        #expect(message.contains("decoded \"\""), "the cleared region, both values: \(message)")
        #expect(message.contains("`Form.sections[0].region`: encoded \""), "nested paths are named: \(message)")
        #expect(message.contains("(generic coding, setters: cascading)"), "\(message)")
        #expect(message.contains("What to do: generic decoding assigns every property through its setter"), "\(message)")
        #expect(message.contains("setters: guarded"), "the fix is named: \(message)")
        let mismatches = try #require(trial.metrics.custom["mismatches"])
        #expect(mismatches >= 7, "at least every section's region (7 sections): \(mismatches)")
        #expect(trial.metrics.custom["objects"] == 7)
        #expect(trial.metrics.custom["codedProperties"] == 154, "7 sections of 10 declared and 12 generated properties")
        // The reports show it as any other unexpected outcome, with its message.
        let summary = try String(contentsOfFile: (out as NSString).appendingPathComponent("summary.md"), encoding: .utf8)
        #expect(summary.contains("invariantViolated"), "\(summary.prefix(2_000))")
        #expect(summary.contains("Form.region"), "summary.md carries the differing paths: \(summary.prefix(2_000))")
        let schema = try await SchemaCheck.validate((out as NSString).appendingPathComponent("run.json"))
        #expect(schema.valid, "run.json does not match the schema: \(schema.output)")
        try? FileManager.default.removeItem(atPath: (out as NSString).deletingLastPathComponent)
    }

    @Test func theArticlesNotWhileDecodingFlagMakesTheMismatchDisappearAndHandWrittenCodingNeverHasIt() async throws {
        let (result, run, out) = try await StrainBinary.runSuite("""
        name: guarded
        runs:
          - scenario: reflective-coding
            parameters: {coding: generic, setters: guarded, properties: 12, depth: 3, fanout: 2}
            strategies: [thread(512KiB), gcd-global]
          - scenario: reflective-coding
            parameters: {coding: hand-written, setters: [cascading, guarded], properties: 12, depth: 3, fanout: 2}
            strategies: [thread(512KiB)]
        """, timeout: 120)
        #expect(result.status == 0, "\(result.stdout)\n\(result.stderr)")
        let trials = try #require(run).trials
        #expect(trials.count == 4)
        for trial in trials {
            #expect(trial.outcome.kind == .completed, "\(trial.id): \(trial.outcome) \(trial.outcome.message ?? "")")
            #expect(trial.metrics.custom["mismatches"] == 0, "\(trial.id)")
            #expect(trial.metrics.custom["archiveBytes"].map { $0 > 0 } == true, "\(trial.id)")
        }
        try? FileManager.default.removeItem(atPath: (out as NSString).deletingLastPathComponent)
    }

    @Test func aNonCodingMemberInAnArrayOrADictionaryStopsTheArchiverWithItsFatalErrorAndATrace() async throws {
        let (result, run, out) = try await StrainBinary.runSuite("""
        name: member
        runs:
          - scenario: reflective-coding
            parameters: {member: [in-array, in-dictionary], coding: [generic, hand-written], properties: 4, depth: 2, fanout: 2}
            strategies: [thread(512KiB)]
            expect: crashed
        """, timeout: 120)
        #expect(result.status == 0, "\(result.stdout)\n\(result.stderr)")
        let trials = try #require(run).trials
        #expect(trials.count == 4)
        for trial in trials {
            // Measured on swift-corelibs-foundation (Swift 6.3.1): a Swift trap, not a
            // thrown error and not a silent drop.
            #expect(trial.outcome.kind == .crashed && trial.outcome.signal == SIGILL, "\(trial.id): \(trial.outcome)")
            let words = try #require(trial.lastWords, "\(trial.id): the runtime's fatal error is kept")
            #expect(words.contains("NSKeyedArchiver.swift"), "\(words)")
            #expect(words.contains("Fatal error: Object Optional(Signature(strokes: 12)) does not conform to NSCoding"), "\(words)")
            let trace = try #require(trial.trace, "\(trial.id) carries its trace")
            let symbols = (trace.firstFrames + trace.lastFrames).compactMap(\.symbol)
            let collection = trial.key[parameter: "member"] == "in-array" ? "NSArray.encode(with:)" : "NSDictionary.encode(with:)"
            #expect(symbols.contains { $0.contains(collection) }, "\(trial.id): the collection that held it is on the stack: \(symbols)")
            #expect(symbols.contains { $0.contains("NSKeyedArchiver._encodeObject") }, "\(symbols)")
        }
        let schema = try await SchemaCheck.validate((out as NSString).appendingPathComponent("run.json"))
        #expect(schema.valid, "run.json does not match the schema: \(schema.output)")
        try? FileManager.default.removeItem(atPath: (out as NSString).deletingLastPathComponent)
    }

    @Test func aWidthOutOfRangeAndAFormTooLargeAreRefusedNamingTheValues() async throws {
        let (refused, _, refusedOut) = try await StrainBinary.runSuite("""
        name: wide
        runs:
          - scenario: reflective-coding
            parameters: {properties: 1001}
            strategies: [main]
        """, timeout: 60)
        #expect(refused.status == 2, "\(refused.stdout)\n\(refused.stderr)")
        #expect(refused.stderr.contains("properties") && refused.stderr.contains("1000"), "\(refused.stderr)")
        try? FileManager.default.removeItem(atPath: (refusedOut as NSString).deletingLastPathComponent)

        let (result, run, out) = try await StrainBinary.runSuite("""
        name: large
        runs:
          - scenario: reflective-coding
            parameters: {depth: 30, fanout: 2, properties: 1}
            strategies: [main]
            expect: threw
        """, timeout: 60)
        #expect(result.status == 0, "\(result.stdout)\n\(result.stderr)")
        let trial = try #require(run?.trials.first)
        #expect(trial.outcome.message?.contains("depth 30 with fanout 2 makes more than 1000000 sections; lower depth or fanout") == true,
                "\(trial.outcome.message ?? "")")
        try? FileManager.default.removeItem(atPath: (out as NSString).deletingLastPathComponent)
    }
    @Test func theRoundTripComparisonNamesNestedPathsKeepsSharedObjectsSharedAndEndsOnACycle() async throws {
        func form() -> (FormSection, Applicant) {
            let applicant = Applicant(name: "Ada", taxNumber: 1815)
            let root = FormSection(generated: 3, setters: .plain)
            root.applicant = applicant
            root.sections = (0..<2).map { _ in
                let section = FormSection(generated: 3, setters: .plain)
                section.applicant = applicant
                return section
            }
            return (root, applicant)
        }
        let (original, _) = form()
        let (same, _) = form()
        #expect(RoundTripComparison(original: original, decoded: same).count == 0)

        // A generated property two levels down, and a copy of the shared applicant.
        let (changed, _) = form()
        changed.sections[1][string: 2] = "typed"
        changed.sections[0].applicant = Applicant(name: "Ada", taxNumber: 1815)
        let comparison = RoundTripComparison(original: original, decoded: changed)
        #expect(comparison.count == 2, "\(comparison.differences)")
        #expect(comparison.differences.map(\.description).contains("`Form.sections[1].field2`: encoded \"\", decoded \"typed\""), "\(comparison.differences)")
        #expect(comparison.differences.map(\.description).contains("`Form.sections[0].applicant`: encoded the form's shared applicant, decoded a copy of its own"),
                "\(comparison.differences)")

        // A section that holds itself: the walk visits each pair once and ends.
        let (cyclic, _) = form()
        let (cyclicCopy, _) = form()
        cyclic.sections[0].sections = [cyclic]
        cyclicCopy.sections[0].sections = [cyclicCopy]
        #expect(RoundTripComparison(original: cyclic, decoded: cyclicCopy).count == 0)
        cyclic.sections[0].sections = []
        cyclicCopy.sections[0].sections = []
    }
}
