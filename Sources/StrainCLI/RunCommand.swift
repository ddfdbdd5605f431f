import ArgumentParser
import Foundation
import StrainKit
import StrainReports
import StrainRunner

struct RunCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "Run a suite: every trial in its own child, then run.json, summary.md and a comparison table."
    )

    @Argument(help: "The suite file to run.")
    var suite: String = "Scenarios/smoke.yaml"

    @Option(help: "Where to write run.json, trials.jsonl and summary.md (default: Reports/<suite>-<timestamp>).")
    var out: String?

    func run() throws {
        let catalog = activeCatalog.withLock { $0 }
        let parsed: Suite
        do {
            parsed = try SuiteParser(catalog: catalog).parse(contentsOf: suite)
        } catch {
            FileHandle.standardError.write(Data("\(error.description)\n".utf8))
            throw ExitCode(StrainExitCode.inputError)
        }
        let plan = Plan(suite: parsed)
        let directory = out ?? "Reports/\(parsed.name)-\(Self.timestamp())"
        let interactive = isatty(STDOUT_FILENO) == 1
        let terminal = TerminalReport(color: interactive && ProcessInfo.processInfo.environment["NO_COLOR"] == nil)
        let controller = RunController(supervisor: TrialSupervisor(executable: currentExecutablePath()), outputDirectory: directory)

        print("Running \(parsed.name): \(plan.trials.count) trials from \(suite)")
        let record: RunRecord
        do {
            record = try controller.run(plan) { trial, index, total in
                let line = terminal.trialLine(trial, index: index, total: total)
                if interactive, trial.expected, index < total {
                    // On a terminal, expected trials overwrite one progress line.
                    print("\r\u{1B}[2K" + line, terminator: "")
                } else {
                    print((interactive ? "\r\u{1B}[2K" : "") + line)
                }
                fflush(nil)
            }
        } catch {
            FileHandle.standardError.write(Data("error: could not write the run's records under \(directory): \(error)\n".utf8))
            throw ExitCode(StrainExitCode.harnessError)
        }
        let summaryPath = (directory as NSString).appendingPathComponent("summary.md")
        do {
            try MarkdownReport.render(record).write(toFile: summaryPath, atomically: true, encoding: .utf8)
        } catch {
            FileHandle.standardError.write(Data("error: could not write \(summaryPath): \(error)\n".utf8))
            throw ExitCode(StrainExitCode.harnessError)
        }
        print(terminal.render(record))
        print("Wrote \(controller.runJSONPath), \(controller.journalPath) and \(summaryPath)")

        if record.trials.contains(where: { $0.outcome.kind == .harnessError }) { throw ExitCode(StrainExitCode.harnessError) }
        if record.trials.contains(where: { !$0.expected }) { throw ExitCode(StrainExitCode.unexpectedOutcome) }
    }

    static func timestamp() -> String {
        let formatter = DateFormatter()
        formatter.dateFormat = "yyyyMMdd-HHmmss"
        formatter.timeZone = TimeZone(identifier: "UTC")
        return formatter.string(from: Date())
    }
}
