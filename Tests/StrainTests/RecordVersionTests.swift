import Foundation
import StrainRecords
import Testing

/// run.json stays readable: version 4 is written, versions 1 to 3 are read.
struct RecordVersionTests {
    static func fixture(_ name: String) -> String { ReportTests.fixtures.appendingPathComponent(name).path }

    @Test(arguments: ["run-v1.json", "run-v2.json"])
    func olderRunFilesReadWithTheirTrialsKeyedAndTheirParametersInNameOrder(_ name: String) throws {
        let run = try RunRecordFile.read(from: Self.fixture(name))
        #expect(run.trials.count == 17)
        let first = try #require(run.trials.first)
        #expect(first.key.scenario == "cyclic-graph")
        #expect(first.key.parameters.map(\.name) == ["games", "operation", "players", "shape", "size"])
        #expect(first.key.description.hasPrefix("cyclic-graph[games=4, operation=unarchive, players=3, shape=chain, size=2000] "))
        #expect(run.suite.runs.first?.parameters.first?.name == "games")
        // Written again, it is version 3 and reads back to the same keys.
        let again = try JSONDecoder().decode(RunRecord.self, from: try RunRecordFile.encode(run))
        #expect(again.trials.map(\.id) == run.trials.map(\.id))
    }

    @Test func aVersionThreeRunFileReadsWithoutTheFieldsVersionFourAdded() throws {
        let run = try RunRecordFile.read(from: Self.fixture("run-v3.json"))
        #expect(run.trials.count == 20)
        #expect(run.execution == nil && run.bisect == nil)
        let current = try RunRecordFile.read(from: Self.fixture("run.json"))
        #expect(current.execution != nil && current.bisect != nil, "the report fixture is version 4, with both")
    }

    @Test func aVersionThisStrainDoesNotKnowIsRefusedBeforeAnythingElseIsRead() throws {
        let path = TestFolders.root.appendingPathComponent("strain-v99-\(UUID().uuidString).json").path
        try #"{"schemaVersion": 99, "trials": "not even the right shape"}"#.write(toFile: path, atomically: true, encoding: .utf8)
        #expect { try RunRecordFile.read(from: path) } throws: { "\($0)".contains("schema version 99 is not supported") }
    }

    @Test func aTrialKeyIsTheSameWhateverTheOrderOfItsParametersAndNamesThemInItsOwnOrder() {
        let one = TrialKey(scenario: "s", parameters: [.init(name: "a", value: "1"), .init(name: "b", value: "2")], strategy: .main, profile: .ios)
        let two = TrialKey(scenario: "s", parameters: [.init(name: "b", value: "2"), .init(name: "a", value: "1")], strategy: .main, profile: .ios)
        #expect(one == two)
        #expect(Set([one, two]).count == 1)
        #expect(one.stableHash == two.stableHash)
        #expect(one.description == "s[a=1, b=2] main ios")
        #expect(two.description == "s[b=2, a=1] main ios")
        #expect(TrialID(key: one, repetition: 3).description == "s[a=1, b=2] main ios #3")
    }

    @Test func aStrategyWithAStackThatIsNotWholeKiBStillNamesItselfExactly() throws {
        for text in ["thread(1025KiB)", "thread(40000)", "thread-pool(3, 1536KiB)"] {
            let strategy = try StrategySpec(parsing: text)
            #expect(try StrategySpec(parsing: strategy.description) == strategy, "\(strategy) reads back")
        }
    }
}
