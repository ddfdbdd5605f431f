import Foundation
import StrainRecords
import StrainReports
import Testing

/// A run's reports write counted instructions with their unit (`3.1 M instr`), as they
/// write allocations (`12.4 k allocs`), while run.json keeps the plain numbers.
@Suite struct CountedInstructionsReportTests {
    /// The report fixture with instructions counted on the stack-depth rows: 3,100,000 a
    /// trial at limit 100, 842,000 at limit 1,000 and 950 at limit 3,000.
    static func countedRun() throws -> RunRecord {
        var run = try ReportTests.fixture()
        let counts = ["100": 3_100_000, "1000": 842_000, "3000": 950]
        for index in run.trials.indices where run.trials[index].scenario == "stack-depth" {
            guard let limit = run.trials[index].key.parameters.first(where: { $0.name == "limit" })?.value, let count = counts[limit] else { continue }
            run.trials[index].metrics.instructions = count
            run.trials[index].instructionCount = InstructionCount(source: "callgrind", instructions: count)
        }
        return run
    }

    @Test func aCountedRunsTablesWriteInstructionsInInstrInTheTerminalMarkdownAndHTMLReports() throws {
        let run = try Self.countedRun()
        let terminal = TerminalReport(color: false).render(run)
        let markdown = MarkdownReport.render(run)
        let html = HTMLReport.render(run)
        for (name, text) in [("terminal", terminal), ("Markdown", markdown), ("HTML", html)] {
            #expect(text.contains("instructions"), "\(name) has no instructions column")
            for cell in ["3.1 M instr", "842 k instr", "950 instr"] {
                #expect(text.contains(cell), "\(name) lacks \(cell)")
            }
        }
        // Only the groups that counted get the column: the fixture's other tables do not.
        let uncounted = TerminalReport(color: false).render(try ReportTests.fixture())
        #expect(!uncounted.contains(" instr"), "\(uncounted)")
    }

    @Test func theUnitIsPresentationRunJSONKeepsThePlainCount() throws {
        let run = try Self.countedRun()
        let trial = try #require(run.trials.first { $0.metrics.instructions == 3_100_000 })
        let json = String(decoding: try JSONEncoder().encode(trial.metrics), as: UTF8.self)
        #expect(json.contains("\"instructions\":3100000"), "\(json)")
        #expect(MetricDescriptor.builtIn(named: "instructions")?.unit.rawValue == "instructions")
        #expect(MetricDescriptor.builtIn(named: "instructions")?.unit.symbol == "instr")
    }
}
