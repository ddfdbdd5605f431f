import ArgumentParser
import Foundation
import StrainKit
import StrainReports
import StrainRunner

struct RunCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "Run a suite: every trial in its own child, then run.json and the reports (HTML, Markdown, JUnit)."
    )

    @Argument(help: "The suite file to run.")
    var suite: String = "Scenarios/smoke.yaml"

    @Option(help: "Where to write run.json, trials.jsonl and the reports (default: Reports/<suite>-<timestamp>).")
    var out: String?

    @Option(parsing: .upToNextOption, help: "Reports to write besides run.json: html (report.html), md (summary.md), junit (junit.xml); default: all three. json names run.json itself, which is always written.")
    var format: [ReportFormat] = [.html, .md, .junit]

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
        let controller = RunController(
            supervisor: TrialSupervisor(executable: currentExecutablePath()), outputDirectory: directory,
            customMetrics: catalog.declaredMetrics(of: plan.trials.map(\.scenario))
        )

        print("Running \(parsed.name): \(plan.trials.count) trials from \(suite)")
        let record: RunRecord
        do {
            let started = Date()
            var estimate = ProgressEstimate()
            if interactive, let first = plan.trials.first {
                print(String(terminal.progressLine(done: 0, total: plan.trials.count, elapsedSeconds: 0, next: first.name.description, columns: Self.terminalColumns())), terminator: "")
                fflush(nil)
            }
            record = try controller.run(plan) { trial, index, total in
                let line = TerminalReport.safe(terminal.trialLine(trial, index: index, total: total))
                guard interactive else {
                    // Not a terminal (CI logs, pipes): a plain line per trial.
                    print(line)
                    return
                }
                // On a terminal, unexpected trials keep a line of their own and one
                // progress line below them says how far the run is and what runs next.
                if !trial.expected { print("\r\u{1B}[2K" + line) }
                let next = index < total ? plan.trials[index].name.description : nil
                let elapsed = Date().timeIntervalSince(started)
                estimate.finished(atElapsed: elapsed)
                // The line never reaches the last column: a line that wraps leaves its first half behind at each redraw.
                let progress = TerminalReport.safe(terminal.progressLine(done: index, total: total, elapsedSeconds: elapsed, next: next,
                                                                         secondsLeft: estimate.secondsLeft(remaining: total - index), columns: Self.terminalColumns()))
                print("\r\u{1B}[2K" + progress, terminator: index < total ? "" : "\n")
                fflush(nil)
            }
        } catch {
            FileHandle.standardError.write(Data("error: could not write the run's records under \(directory): \(error)\n".utf8))
            throw ExitCode(StrainExitCode.harnessError)
        }
        var written = [controller.runJSONPath, controller.journalPath]
        for format in format where format != .json {
            let path = (directory as NSString).appendingPathComponent(format.fileName)
            do {
                try format.render(record).write(to: URL(fileURLWithPath: path), options: .atomic)
                written.append(path)
            } catch {
                FileHandle.standardError.write(Data("error: could not write \(path): \(error)\n".utf8))
                throw ExitCode(StrainExitCode.harnessError)
            }
        }
        print(TerminalReport.safe(terminal.render(record)))
        print("Wrote " + written.dropLast().joined(separator: ", ") + " and " + written.last!)

        if record.trials.contains(where: { $0.outcome.kind == .harnessError }) { throw ExitCode(StrainExitCode.harnessError) }
        if record.trials.contains(where: { !$0.expected }) { throw ExitCode(StrainExitCode.unexpectedOutcome) }
    }

    /// The terminal's width in columns (TIOCGWINSZ, read at each redraw so a
    /// resized window is followed), else `COLUMNS`, else 80.
    static func terminalColumns() -> Int {
        var size = winsize()
        if ioctl(STDOUT_FILENO, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 { return Int(size.ws_col) }
        return Int(ProcessInfo.processInfo.environment["COLUMNS"] ?? "") ?? 80
    }

    static func timestamp() -> String {
        let formatter = DateFormatter()
        formatter.dateFormat = "yyyyMMdd-HHmmss"
        formatter.timeZone = TimeZone(identifier: "UTC")
        return formatter.string(from: Date())
    }
}
