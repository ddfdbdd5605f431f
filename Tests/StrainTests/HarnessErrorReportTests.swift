import Foundation
import StrainRecords
import Testing

/// A trial the harness failed, through the built binary: an `<error>` in junit.xml,
/// never a `<failure>` (which is the scenario's), and exit 3.
@Suite(.serialized) struct HarnessErrorReportTests {
    @Test func aTrialTheHarnessFailedIsAJUnitErrorAndAnUnexpectedOutcomeIsAFailure() async throws {
        // memory-limit 64MiB leaves no room for the trial's preparation thread: a
        // harness error at once, whatever the machine (the Limits article, StrainCLI.docc).
        let (result, record, out) = try await StrainBinary.runSuite("""
            name: harness-error
            timeout: 30s
            profiles: [linux]
            runs:
              - scenario: noop
                strategies: [main]
                memory-limit: 64MiB
              - scenario: noop
                strategies: [thread(512KiB)]
                expect: threw
              - scenario: noop
                strategies: [gcd-global]
            """, timeout: 60)
        #expect(result.status == 3, "a harness error outranks an unexpected outcome: \(result.stdout)\(result.stderr)")
        let run = try #require(record)
        let broken = try #require(run.trials.first { $0.strategy.description == "main" })
        #expect(broken.outcome.kind == .harnessError)
        let message = try #require(broken.outcome.message)
        #expect(message.hasPrefix("memory-limit 64MiB leaves no room") && message.hasSuffix("; raise the limit"), "\(message)")

        let junit = TestFiles.read(out + "/junit.xml")
        #expect(junit.contains("<testsuites name=\"strain: harness-error\" tests=\"3\" failures=\"1\" errors=\"1\""), "\(junit)")
        let cases = junit.split(separator: "<testcase ").dropFirst().map(String.init)
        #expect(cases.count == 3, "\(junit)")
        let errorCase = try #require(cases.first { $0.contains("noop main linux") }, "\(junit)")
        #expect(errorCase.contains("<error ") && !errorCase.contains("<failure"), "\(errorCase)")
        #expect(errorCase.contains("<error message=\"harnessError, expected completed: memory-limit 64MiB leaves no room"),
                "the error says what failed: \(errorCase)")
        #expect(errorCase.contains("type=\"harnessError\">outcome: harnessError\nmemory-limit 64MiB leaves no room"), "\(errorCase)")
        let failureCase = try #require(cases.first { $0.contains("noop thread(512KiB) linux") })
        #expect(failureCase.contains("<failure message=\"completed, expected threw\" type=\"completed\">") && !failureCase.contains("<error"), "\(failureCase)")
        let passingCase = try #require(cases.first { $0.contains("noop gcd-global linux") })
        #expect(!passingCase.contains("<failure") && !passingCase.contains("<error"), "\(passingCase)")
        let check = try await XMLSchemaCheck.validate(out + "/junit.xml", schema: ReportTests.fixtures.appendingPathComponent("junit-jenkins-xunit.xsd").path)
        #expect(check.valid, "\(check.output)")

        let summary = TestFiles.read(out + "/summary.md")
        #expect(summary.contains("harnessError"), "\(summary)")
        #expect(result.stdout.contains("harnessError"), "\(result.stdout)")
    }
}
