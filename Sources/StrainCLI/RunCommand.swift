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

    @Option(name: .customLong("filter"), help: ArgumentHelp(
        "Run only trials that match: scenario=NAME, strategy=NAME, profile=NAME, PARAMETER=VALUE, or text in the trial's name. Repeat for more (a trial runs when it matches any).",
        valueName: "text"))
    var filters: [String] = []

    @Option(name: .customLong("skip"), help: ArgumentHelp("Leave out trials that match (same forms as --filter). Repeatable.", valueName: "text"))
    var skips: [String] = []

    @Option(help: ArgumentHelp("Repetitions of every run, over the suite's (1 to \(Self.maximumRepetitions)).", valueName: "n"))
    var repetitions: Int?

    @Option(help: ArgumentHelp("Run shard K of N (1 ≤ K ≤ N ≤ \(Shard.maximumCount)): the trials whose key hashes to it, the same on every machine. Join the shards with `strain merge`.", valueName: "K/N"))
    var shard: String?

    @Flag(help: "Print the plan, one trial a line, and run nothing.")
    var list = false

    /// The most repetitions `--repetitions` takes.
    static let maximumRepetitions = 10_000

    func run() throws {
        let catalog = activeCatalog.withLock { $0 }
        var parsed: Suite
        do {
            parsed = try SuiteParser(catalog: catalog).parse(contentsOf: suite)
        } catch {
            FileHandle.standardError.write(Data("\(error.description)\n".utf8))
            throw ExitCode(StrainExitCode.inputError)
        }
        if let repetitions {
            guard (1...Self.maximumRepetitions).contains(repetitions) else {
                throw ValidationError("--repetitions \(repetitions) is out of range; give a whole number from 1 to \(Self.maximumRepetitions)")
            }
            parsed.repetitions = repetitions
            for index in parsed.runs.indices { parsed.runs[index].repetitions = repetitions }
        }
        var selectedShard: Shard?
        if let shard {
            guard let parsedShard = Shard(parsing: shard) else {
                throw ValidationError("--shard '\(shard)' is not K/N with 1 ≤ K ≤ N ≤ \(Shard.maximumCount); write e.g. --shard 2/4")
            }
            selectedShard = parsedShard
        }
        let selected = Plan(suite: parsed).selecting(TrialSelection(filters: filters, skips: skips))
        guard !selected.trials.isEmpty else {
            FileHandle.standardError.write(Data("error: no trial of \(suite) matches the --filter and --skip given; `strain run \(suite) --list` prints the plan\n".utf8))
            throw ExitCode(StrainExitCode.inputError)
        }
        let plan = selectedShard.map { selected.shard($0) } ?? selected
        let planRecord = PlanRecord(
            hash: selected.identity, trialCount: selected.trials.count,
            shard: selectedShard.map { ShardRecord(index: $0.index, count: $0.count, trialCount: plan.trials.count) }
        )
        if list {
            for trial in plan.trials { print(TerminalReport.safe(trial.name)) }
            let shardText = selectedShard.map { " (shard \($0) of a plan of \(selected.trials.count))" } ?? ""
            print("\(plan.trials.count) trials\(shardText)")
            return
        }
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
            record = try controller.run(plan, planRecord: planRecord) { trial, index, total in
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
