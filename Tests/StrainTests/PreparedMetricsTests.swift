import Foundation
import StrainKit
import StrainWire
import Testing

/// What a scenario records in `prepare` outlives a trial that then crashes.
@Suite struct PreparedMetricsTests {
    @Test func metricsRecordedInPrepareSurviveAStackOverflowIntoRunJSON() async throws {
        // cyclic-graph's unarchive counts and archives the league in `prepare`, then
        // overflows a 512 KiB stack unarchiving it: a fault record, never a report.
        let (result, record, _) = try await StrainBinary.runSuiteLeavingNothing("""
            name: prepared-metrics
            timeout: 60s
            profiles: [linux]
            runs:
              - scenario: cyclic-graph
                parameters: {operation: unarchive, size: 20}
                strategies: [thread(512KiB)]
                expect: [stackOverflow]
            """)
        #expect(result.status == 0, "\(result.stdout)\n\(result.stderr)")
        let trial = try #require(record?.trials.first)
        #expect(trial.outcome.kind == .stackOverflow)
        #expect(trial.metrics.custom["objects"] ?? 0 > 0, "\(trial.metrics.custom)")
        #expect(trial.metrics.custom["archiveBytes"] ?? 0 > 0, "\(trial.metrics.custom)")
    }

    @Test func preparedMetricsDecodeBeforeAFaultRecordAndDoNotEndTheTrial() throws {
        let line = PreparedMetrics.linePrefix + String(decoding: try JSONEncoder().encode(PreparedMetrics(custom: ["objects": 81])), as: UTF8.self) + "\n"
        let prepared = ChildProtocol.decode(Array(line.utf8), final: false)
        #expect(prepared.problem == nil)
        #expect(prepared.preparedMetrics?.custom == ["objects": 81])
        // At the deadline the parent still walks a child that said only this.
        #expect(!prepared.saysHowItEnded)
        let messages = ChildProtocol.decode(Array((line + "STRAIN-FAULT 1\nsignal 11\noverflow 1\nframes_total 0\nEND\n").utf8))
        #expect(messages.problem == nil)
        #expect(messages.preparedMetrics?.custom == ["objects": 81])
        #expect(messages.fault?.isOverflow == true)
        #expect(messages.saysHowItEnded)
    }

    @Test func preparedMetricsOfAnotherVersionAreRefused() {
        let messages = ChildProtocol.decode(Array("METRICS {\"version\":9,\"custom\":{}}\n".utf8))
        #expect(messages.preparedMetrics == nil)
        #expect(messages.problem == "prepared metrics of version 9; this runner reads version 1 (a child built from another Strain?)")
    }
}
