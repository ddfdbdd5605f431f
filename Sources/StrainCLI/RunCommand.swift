import ArgumentParser
import Foundation
import StrainHost
import StrainKit
import StrainReports
import StrainRunner
import StrainSuite
import StrainText

struct RunCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "Run a suite: every trial in its own child, then run.json and the reports (HTML, Markdown, JUnit).",
        discussion: """
        Ctrl-C (SIGINT), SIGTERM or SIGQUIT stops the run cleanly: the trial in flight is killed with its process group, \
        finished trials are kept, run.json and the reports are written marked interrupted, and strain exits 130, 131 or 143. \
        `strain run --resume DIR` continues it.

        """ + "\n" + ExitCodeContract.help(for: .run)
    )

    @Argument(help: "The suite file to run (default: Scenarios/smoke.yaml; with --resume, the one the run read).")
    var suite: String?

    @Option(help: "Where to write run.json, trials.jsonl and the reports (default: Reports/<suite>-<timestamp>). Refused if it holds another run, unless --resume or --force.")
    var out: String?

    @Option(help: ArgumentHelp("Continue the stopped or killed run in this folder: the same plan (checked by its hash), skipping finished trials.", valueName: "dir"))
    var resume: String?

    @Flag(help: "Replace the run an --out folder already holds.")
    var force = false

    @Flag(help: "For GitHub Actions: an error annotation per trial key that ended unexpectedly, at its suite line (relative to $GITHUB_WORKSPACE), and the Markdown summary appended to $GITHUB_STEP_SUMMARY.")
    var github = false

    @Option(parsing: .upToNextOption, help: "Reports to write besides run.json: html (report.html), md (summary.md), junit (junit.xml). Also csv (metrics.csv), benchmark-smaller and benchmark-bigger (github-action-benchmark's JSON). json names run.json itself, which is always written.")
    var format: [ReportFormat] = [.html, .md, .junit]

    @Option(name: .customLong("filter"), help: ArgumentHelp(
        "Run only trials that match: scenario=NAME, strategy=NAME, profile=NAME, PARAMETER=VALUE, or text in the trial's name. Repeat for more (a trial runs when it matches any).",
        valueName: "text"))
    var filters: [String] = []

    @Option(name: .customLong("skip"), help: ArgumentHelp("Leave out trials that match (same forms as --filter). Repeatable.", valueName: "text"))
    var skips: [String] = []

    @Option(parsing: .unconditional, help: ArgumentHelp("Repetitions of every run, over the suite's (1 to \(SuiteLimits.repetitions.upperBound)).", valueName: "n"))
    var repetitions: Int?

    @Option(help: ArgumentHelp("Run shard K of N (1 ≤ K ≤ N ≤ \(Shard.maximumCount)): the trials whose key hashes to it, the same on every machine. Join the shards with `strain merge`.", valueName: "K/N"))
    var shard: String?

    @Flag(help: "Print the plan, one trial a line, and run nothing.")
    var list = false

    @Option(help: ArgumentHelp("How each trial starts: server (a copy of a pre-loaded trial server, the default) or spawn (a fresh process of the binary). Each trial is its own process either way. A resumed run keeps the one it started with.", valueName: "server|spawn"))
    var isolation: TrialIsolation?

    @Option(help: ArgumentHelp("Count a cost per trial besides the suite's `measure:`: instructions (by a perf counter where the machine has a PMU, else each trial under Valgrind's callgrind, about 50 times slower; timings are then not recorded). Repeatable.", valueName: "instructions"))
    var measure: [CountedMeasure] = []

    @Option(parsing: .unconditional, help: ArgumentHelp("Trials to run at once (1 to \(Self.maximumJobs); default 1, or what a resumed run started with). For runs where outcomes matter more than timings: trials that share the cores slow each other, and the gate will not compare such timings with a serial run's unless asked.", valueName: "n"))
    var jobs: Int?

    /// The most trials `--jobs` runs at once.
    static let maximumJobs = SuiteLimits.jobs.upperBound

    /// The most repetitions `--repetitions` takes (`SuiteLimits.repetitions`).
    static let maximumRepetitions = SuiteLimits.repetitions.upperBound

    /// The suite read when none is named: `Scenarios/smoke.yaml` in the current folder
    /// (Strain's repository), else the copy the release bundle ships beside its `bin/`
    /// (`share/strain/Scenarios/smoke.yaml`, where .ci/bundle puts Strain's suites), so the
    /// bundle runs `strain run` with no other file. A package's own strain has neither,
    /// and is told to name its suite.
    static var defaultSuite: String {
        let local = "Scenarios/smoke.yaml"
        guard !FileManager.default.fileExists(atPath: local),
              let executable = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") else { return local }
        let shipped = URL(fileURLWithPath: executable).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("share/strain/" + local).standardizedFileURL.path
        return FileManager.default.fileExists(atPath: shipped) ? shipped : local
    }

    func validate() throws {
        if resume != nil, force { throw ValidationError("--resume and --force contradict each other: --resume continues the run in the folder, --force replaces it; give one") }
        if let resume, let out, resume != out { throw ValidationError("--resume \(resume) and --out \(out) name two folders; a resumed run writes into the folder it continues, so drop --out") }
        if let jobs, !(1...Self.maximumJobs).contains(jobs) {
            throw ValidationError("--jobs \(jobs) is out of range; give a whole number from 1 to \(Self.maximumJobs)")
        }
        if let repetitions, !SuiteLimits.repetitions.contains(repetitions) {
            throw ValidationError("--repetitions \(repetitions) is out of range; give a whole number from 1 to \(SuiteLimits.repetitions.upperBound)")
        }
    }

    func run() throws {
        let catalog = activeCatalog.withLock { $0 }
        var request = RunRequest()
        request.suite = suite
        request.out = out
        request.resume = resume
        request.force = force
        request.filters = filters
        request.skips = skips
        request.repetitions = repetitions
        request.shard = shard
        request.jobs = jobs
        request.isolation = isolation
        let job: RunJob
        do throws(RunRefusal) {
            job = try RunJob.plan(request, catalog: catalog, defaultSuite: Self.defaultSuite)
        } catch {
            try Self.refuse(error)
        }
        if list {
            // One trial a line, fitted to the window between its parameters (a pipe without
            // COLUMNS gets each whole): 26 of the smoke suite's 36 lines ran past 80 columns.
            for trial in job.plan.trials { print(GateCommand.terminalText(OneLine.text(trial.name.description))) }
            let shardText = job.shard.map { " (shard \($0) of a plan of \(job.selected.trials.count))" } ?? ""
            print("\(counted(job.plan.trials.count, "trial"))\(shardText)")
            return
        }
        // Allocations are counted through the allocator the environment chose, or not at all.
        if let refusal = TrialAllocator.refusal() { throw CommandFailure(code: StrainExitCode.toolMissing, message: refusal) }
        // Counted trials need their source (a PMU, else callgrind) and its tools:
        // checked before anything is written or run.
        var callgrind: CallgrindTrials?
        var source: InstructionSource?
        var timingDependent: Set<String> = []
        if (job.suite.measures + measure).contains(.instructions) {
            timingDependent = Set(job.plan.trials.map(\.scenario).filter { catalog.scenario(named: $0)?.workDependsOnTiming == true })
            do {
                source = try InstructionSource.choose(environment: ProcessInfo.processInfo.environment, probe: KernelPerfCounterProbe())
            } catch {
                throw CommandFailure(code: error.kind == .unavailable ? StrainExitCode.toolMissing : StrainExitCode.inputError, message: error.description)
            }
            if source == .callgrind {
                do {
                    callgrind = try CallgrindTrials(executable: currentExecutablePath(), timingDependent: timingDependent)
                } catch {
                    throw CommandFailure(code: StrainExitCode.toolMissing, message: error.description)
                }
            }
        }
        defer { callgrind?.cleanUp() }
        let opened: (directory: OutputDirectory, journal: Journal)
        do throws(RunRefusal) {
            opened = try job.open(timestamp: runTimestamp())
        } catch {
            try Self.refuse(error)
        }
        try execute(job.plan, planRecord: job.planRecord, suiteName: job.suite.name, suitePath: job.suitePath,
                    directory: opened.directory, journal: opened.journal, catalog: catalog, jobs: job.jobs,
                    supervisor: TrialSupervisor(executable: currentExecutablePath(), isolation: job.isolation, callgrind: callgrind,
                                                pmu: source?.pmuTrials(timingDependent: timingDependent)))
    }

    /// A refusal to start, on standard error with exit 2: a suite's own mistakes as
    /// `FILE:LINE:COLUMN: error: …` lines, anything else as the command's error.
    static func refuse(_ refusal: RunRefusal) throws -> Never {
        if refusal.isSuiteText {
            writeStandardError(TerminalStyle.safe(refusal.message))
            throw ExitCode(StrainExitCode.inputError)
        }
        throw CommandFailure.input(TerminalStyle.safe(refusal.message))
    }

    private func execute(_ plan: Plan, planRecord: PlanRecord, suiteName: String, suitePath: String, directory: OutputDirectory,
                         journal: Journal, catalog: ScenarioCatalog, jobs: Int, supervisor: TrialSupervisor) throws {
        let interactive = isatty(STDOUT_FILENO) == 1
        let terminal = Self.terminalReport()
        var controller = RunController(
            supervisor: supervisor,
            customMetrics: catalog.declaredMetrics(of: plan.trials.map(\.scenario))
        )
        controller.rankings = catalog.rankings(of: plan.trials.map(\.scenario))
        let remaining = RunController.remaining(plan, after: journal.finished)
        RunnerSignals.catchStopSignals()
        RunnerSignals.adoptOrphans()
        let resumed = plan.trials.count - remaining.count
        print(TerminalStyle.safe(terminal.fit("Running \(suiteName): \(counted(plan.trials.count, "trial")) from \(suitePath)" + (resumed > 0 ? " (\(resumed) finished before, resumed)" : ""))))
        fflush(nil)
        let record: RunRecord
        do {
            let started = Date()
            var estimate = ProgressEstimate()
            if interactive, let first = remaining.first {
                print(TerminalStyle.safe(terminal.progressLine(done: resumed, total: plan.trials.count, elapsedSeconds: 0, next: OneLine.text(first.name.description), columns: Self.terminalColumns())), terminator: "")
                fflush(nil)
            }
            var ranNow = 0
            record = try controller.run(plan, planRecord: planRecord, journal: journal, runJSONPath: directory.runJSONPath, jobs: jobs) { trial, done, total in
                ranNow += 1
                // A trial's names, message and symbols on one line (`OneLine.copy`), as every text view prints them.
                let line = TerminalStyle.safe(terminal.fit(terminal.trialLine(OneLine.copy(trial), index: done, total: total)))
                guard interactive else {
                    // Not a terminal (CI logs, pipes): a plain line per trial, flushed as it ends.
                    print(line)
                    fflush(nil)
                    return
                }
                // On a terminal, unexpected trials keep a line of their own and one
                // progress line below them says how far the run is and what runs next.
                if !trial.expected { print("\r\u{1B}[2K" + line) }
                let next = ranNow < remaining.count ? OneLine.text(remaining[ranNow].name.description) : nil
                let elapsed = Date().timeIntervalSince(started)
                estimate.finished(atElapsed: elapsed)
                // The line never reaches the last column: a line that wraps leaves its first half behind at each redraw.
                let progress = TerminalStyle.safe(terminal.progressLine(done: done, total: total, elapsedSeconds: elapsed, next: next,
                                                                         secondsLeft: estimate.secondsLeft(remaining: remaining.count - ranNow), columns: Self.terminalColumns()))
                print("\r\u{1B}[2K" + progress, terminator: done < total ? "" : "\n")
                fflush(nil)
            }
        } catch {
            throw CommandFailure.harness("could not write the run's records under \(TerminalStyle.safe(directory.path)): \(error)")
        }
        if interactive, record.interrupted == true { print("") }
        if let change = journal.writtenBack {
            writeStandardError("warning: \(TerminalStyle.safe(directory.journalPath)) \(change); written back from the runner's own copy, with every trial this run finished, so run.json holds them and --resume can use it")
        }
        var written = [directory.runJSONPath, directory.journalPath]
        // One report model for every view written and printed.
        let report = RunReport(record)
        for format in format where format != .json {
            let path = (directory.path as NSString).appendingPathComponent(format.fileName)
            do {
                try AtomicFile.write(format.render(record, report: report), to: path)
                written.append(path)
            } catch {
                throw CommandFailure.harness("could not write \(path): \(error)")
            }
        }
        // The terminal's view renders the record with every string on one line (`OneLine.copy`).
        print(TerminalStyle.safe(terminal.render(RunReport(OneLine.copy(record)))))
        print(TerminalStyle.safe(terminal.fit("Wrote " + written.dropLast().joined(separator: ", ") + " and " + written.last!)))
        if github { Self.annotate(record, report: report) }

        if let signal = RunnerSignals.stopSignal {
            let name = signal == SIGINT ? "SIGINT" : signal == SIGTERM ? "SIGTERM" : signal == SIGQUIT ? "SIGQUIT" : "signal \(signal)"
            writeStandardError("strain: stopped by \(name) after \(record.trials.count) of \(plan.trials.count) trials; run.json is marked interrupted. Continue with: strain run --resume \(directory.path)")
            throw ExitCode(StrainExitCode.stopped(by: signal))
        }
        if record.trials.contains(where: { $0.outcome.kind == .harnessError }) { throw ExitCode(StrainExitCode.harnessError) }
        if record.trials.contains(where: { !$0.expected }) { throw ExitCode(StrainExitCode.unexpectedOutcome) }
    }

    /// `--github`: the annotations on standard output, the Markdown summary appended
    /// to `$GITHUB_STEP_SUMMARY` (under GitHub's 1 MiB limit) when the variable is set.
    static func annotate(_ record: RunRecord, report: RunReport) {
        print(RunAnnotations.renderGitHub(record), terminator: "")
        guard let path = ProcessInfo.processInfo.environment["GITHUB_STEP_SUMMARY"], !path.isEmpty else { return }
        let held = StepSummary.heldBytes(path)
        var text = MarkdownReport.render(report)
        let room = max(4096, (1 << 20) - 1024 - held)
        if text.utf8.count > room {
            text = String(decoding: Array(text.utf8.prefix(room - 200)), as: UTF8.self) + "\n\n… cut to fit GitHub's step summary limit: the whole summary is in summary.md\n"
        }
        // Only to a regular file, never waiting on a FIFO (`StepSummary`).
        do {
            try StepSummary.append(text, to: path)
        } catch {
            writeStandardError("warning: could not append to $GITHUB_STEP_SUMMARY (\(path)): \(error)")
        }
    }

    /// The terminal view standard output gets: in colour at a terminal with NO_COLOR
    /// unset; its lines fitted to the window at a terminal, or to the width COLUMNS
    /// gives; a pipe without COLUMNS (a CI log) gets them whole.
    static func terminalReport() -> TerminalReport {
        let interactive = isatty(STDOUT_FILENO) == 1
        return TerminalReport(color: interactive && ProcessInfo.processInfo.environment["NO_COLOR"] == nil, columns: outputColumns())
    }

    /// The width standard output's lines are fitted to: the terminal's, or COLUMNS's;
    /// nil for a pipe without COLUMNS (a CI log gets them whole).
    static func outputColumns() -> Int? {
        isatty(STDOUT_FILENO) == 1 || ProcessInfo.processInfo.environment["COLUMNS"] != nil ? terminalColumns() : nil
    }

    /// The width in columns of the terminal `descriptor` is on (TIOCGWINSZ, read at each
    /// redraw so a resized window is followed), else `COLUMNS`, else 80; within 20 to
    /// 1,000 whatever they say (a hostile `COLUMNS` must not overflow the arithmetic).
    static func terminalColumns(of descriptor: Int32 = STDOUT_FILENO) -> Int {
        var size = winsize()
        if ioctl(descriptor, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 { return min(1000, max(20, Int(size.ws_col))) }
        let columns = Int(ProcessInfo.processInfo.environment["COLUMNS"]?.trimmingCharacters(in: .whitespaces) ?? "") ?? 80
        return min(1000, max(20, columns))
    }
}

extension TrialIsolation: ExpressibleByArgument {}
extension CountedMeasure: ExpressibleByArgument {}

/// Writes a line (or lines) to standard error, ignoring a reader that went away; at a
/// terminal, or where COLUMNS gives a width, each line fitted to it between words, as
/// the terminal report is (`StandardErrorWidth`).
func writeStandardError(_ text: String) {
    try? FileHandle.standardError.write(contentsOf: Data((StandardErrorWidth.fitted(text) + "\n").utf8))
}

/// The width messages on standard error are fitted to: the terminal's (TIOCGWINSZ on
/// standard error), else `COLUMNS`, within 20 to 1,000; none for a pipe without COLUMNS
/// (a CI log keeps each message on its line).
enum StandardErrorWidth {
    static func columns() -> Int? {
        guard isatty(STDERR_FILENO) == 1 || ProcessInfo.processInfo.environment["COLUMNS"] != nil else { return nil }
        return RunCommand.terminalColumns(of: STDERR_FILENO)
    }

    /// `text`'s lines, each fitted to ``columns()`` (a line's continuation indented four past it).
    static func fitted(_ text: String) -> String {
        guard let width = columns() else { return text }
        return TerminalStyle(color: false, width: width).fitLines(text)
    }
}
