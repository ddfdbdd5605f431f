import Foundation
import StrainRecords
import Testing

/// `strain compare` through the built binary: its table, whatever the verdicts.
@Suite(.serialized) struct CompareCommandTests {
    @Test func compareTablesEveryRowWithItsVerdictOutcomesAndMediansAndNeverFails() async throws {
        let fixture = try await ChangedRuns.make()
        let compared = try await StrainBinary.run(["compare", "base", fixture.candidateRun, "--baselines", fixture.store], timeout: 30)
        #expect(compared.status == 0, "compare never fails on a regression: \(compared.stderr)")
        #expect(compared.stderr.isEmpty, "\(compared.stderr)")
        let lines = compared.stdout.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        #expect(lines.first == "Compared \(fixture.candidateRun) (suite gate-cli) against baseline base: 1 harness error, 1 outcome changed, 1 inconclusive; strain gate would say incomplete (exit 3)",
                "both sides named, and what a gate would say: \(compared.stdout)")

        /// The lines of the row whose header is `header`: up to the next row.
        func block(_ header: String) async -> [String] {
            guard let start = lines.firstIndex(of: header) else { return [] }
            let rest = lines[(start + 1)...]
            return Array(rest.prefix { $0.hasPrefix("    ") })
        }
        let harness = await block("noop thread(512KiB) linux  [harness error]")
        #expect(harness.first?.hasPrefix("    outcome: completed ×1 → harnessError ×1 — the harness failed in the candidate: memory-limit 64MiB leaves no room") == true,
                "\(compared.stdout)")
        let changed = await block("noop main linux  [outcome changed]")
        #expect(changed.first == "    outcome: completed ×1 → completed ×1 — completed is not what the suite expects; the baseline's outcomes all were", "\(compared.stdout)")
        // Every judged metric: both medians, the change and the verdict with its reason.
        let metricLine = /\ {4}([a-z-]+): (\S+ ?\S*) → (\S+ ?\S*), ([+-]\d+\.\d%)( \(95% ×\d\.\d{3}–×\d\.\d{3}\))?  ([a-z ]+): (.+)/
        let metrics = changed.dropFirst().compactMap { $0.wholeMatch(of: metricLine).map { String($0.1) } }
        #expect(["wall", "cpu", "rss", "stack-high-water"].allSatisfy(metrics.contains), "\(changed)")
        #expect(changed.dropFirst().allSatisfy { $0.wholeMatch(of: metricLine) != nil }, "\(changed)")
        // Cross-run timings without a calibration are never judged: the third row is inconclusive, and says why.
        let third = await block("noop gcd-global linux  [inconclusive]")
        #expect(!third.isEmpty, "\(compared.stdout)")
        #expect(third.allSatisfy { $0.wholeMatch(of: metricLine) != nil }, "\(third)")
        #expect(third.contains { $0.hasPrefix("    wall: ") && $0.hasSuffix("  inconclusive: a cross-run timing needs a δ calibrated from an A/A run of the baseline (strain gate --calibrate), or an interleaved gate") },
                "\(third)")
        #expect(!compared.stdout.contains("\u{1B}"), "plain text")

        // A run.json as the baseline gives the same rows, named by its file.
        let byPath = try await StrainBinary.run(["compare", fixture.baselineRun + "/run.json", fixture.candidateRun, "--baselines", fixture.store], timeout: 30)
        #expect(byPath.status == 0)
        #expect(byPath.stdout.hasPrefix("Compared \(fixture.candidateRun) (suite gate-cli) against the run \(fixture.baselineRun)/run.json: 1 harness error"), "\(byPath.stdout)")
        let rowHeaders = { (text: String) in text.split(separator: "\n").filter { $0.hasPrefix("noop ") } }
        #expect(rowHeaders(byPath.stdout) == rowHeaders(compared.stdout))

        // At 80 columns (COLUMNS, or a terminal's width) every line fits, between words:
        // the same words as the whole lines (it printed lines of 203 characters).
        let narrow = try await StrainBinary.run(["compare", "base", fixture.candidateRun, "--baselines", fixture.store], timeout: 30, environment: ["COLUMNS": "80"])
        #expect(narrow.status == 0)
        let wide = narrow.stdout.split(separator: "\n").filter { $0.count > 80 }
        #expect(wide.isEmpty, "\(wide)")
        #expect(narrow.stdout.split(whereSeparator: \.isWhitespace) == compared.stdout.split(whereSeparator: \.isWhitespace), "\(narrow.stdout)")

        let missing = try await StrainBinary.run(["compare", "nope", fixture.candidateRun, "--baselines", fixture.store], timeout: 30)
        #expect(missing.status == 2)
        #expect(missing.stderr == "error: no baseline named 'nope' in \(fixture.store); known: base\n", "\(missing.stderr)")
    }
}
