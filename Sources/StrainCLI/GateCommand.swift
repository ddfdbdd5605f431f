import ArgumentParser
import Foundation
import StrainGate
import StrainKit
import StrainReports
import StrainRunner
import StrainSuite
import StrainText

/// Output formats of the gate, besides gate.json.
enum GateFormat: String, ExpressibleByArgument, CaseIterable {
    /// The summary on standard output.
    case text
    /// GitHub Actions workflow commands on standard output, and the Markdown
    /// comparison appended to `$GITHUB_STEP_SUMMARY` when it is set.
    case github
}

struct GateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "gate",
        abstract: "Fail CI on regressions: interleaved A/B of two builds (the default way), or a run against a stored baseline.",
        discussion: """
        Interleaved (the default way): strain gate --baseline-binary OLD [--candidate-binary NEW] SUITE --repetitions 10. \
        Both builds' trials run in one job, repetitions alternating (ABBA), each build through its own `run`.

        Cross-run: strain gate CURRENT/run.json --baseline NAME|PATH. \
        Calibrate it first with an A/A run of the baseline's commit: strain gate --calibrate RERUN/run.json --baseline NAME.

        Writes gate.json, gate.md (a pull-request comment), gate.html (the comparison view), \
        junit.xml, and each side's run as baseline/report.html and candidate/report.html into --out; \
        a row whose outcome changed links to its candidate trial's trace or dump there.

        """ + "\n" + ExitCodeContract.help(for: .gate)
    )

    @Argument(help: "Interleaved: the suite file. Cross-run: the current run.json or its directory.")
    var input: String?

    @Option(help: "Cross-run: the baseline, a name in --baselines or a run.json. With --calibrate: the stored baseline to calibrate.")
    var baseline: String?

    @Option(help: "Interleaved: the base build's strain executable.")
    var baselineBinary: String?

    @Option(help: "Interleaved: the candidate build's strain executable (default: this one).")
    var candidateBinary: String?

    @Option(parsing: .unconditional, help: ArgumentHelp("Interleaved: repetitions per build (1 to \(RunCommand.maximumRepetitions)).", valueName: "n"))
    var repetitions: Int = 10

    @Option(name: .customLong("filter"), help: ArgumentHelp("Interleaved: passed to each build's `run --filter`.", valueName: "text"))
    var filters: [String] = []

    @Option(name: .customLong("skip"), help: ArgumentHelp("Interleaved: passed to each build's `run --skip`.", valueName: "text"))
    var skips: [String] = []

    @Option(help: ArgumentHelp("Interleaved: passed to each build's `run --measure` (instructions: each trial counted by a perf counter where there is a PMU, else under callgrind). Repeatable.", valueName: "instructions"))
    var measure: [CountedMeasure] = []

    @Option(help: ArgumentHelp("Interleaved: run shard K of N of the plan on both builds (see `strain run --shard`).", valueName: "K/N"))
    var shard: String?

    @Option(help: ArgumentHelp("Record a calibration: this A/A rerun's drift against --baseline sets its cross-run δ.", valueName: "run.json"))
    var calibrate: String?

    @Flag(help: "Cross-run: compare although the machines' hard fingerprint fields differ (timings are then not judged).")
    var allowFingerprintMismatch = false

    @Flag(help: "Compare timings although the runs ran their trials differently: another --jobs (refused without it) or another --isolation (timings not judged without it).")
    var allowExecutionMismatch = false

    @Option(parsing: .upToNextOption, help: "What to print: text (the default), github (workflow commands, plus $GITHUB_STEP_SUMMARY); both: --format text github.")
    var format: [GateFormat] = []

    @Flag(help: "For GitHub Actions, as `strain run --github`: the same as --format github (with --format text, both).")
    var github = false

    /// What to print: `--format`'s list with `--github`'s `github` added, text when neither says.
    var formats: [GateFormat] {
        let chosen = format + (github && !format.contains(.github) ? [.github] : [])
        return chosen.isEmpty ? [.text] : chosen
    }

    @Option(help: "Where to write gate.json, gate.md, gate.html and junit.xml, and an interleaved gate's two runs (default: Reports/gate-<timestamp> for an interleaved gate, a gate folder beside CURRENT's run.json for a cross-run one).")
    var out: String?

    @OptionGroup var location: BaselineCommand.Location

    func run() throws {
        do {
            if let calibrate {
                try runCalibration(rerun: calibrate)
                return
            }
            var report: GateReport
            let directory: String
            let sides: (baseline: RunRecord, candidate: RunRecord)
            if let baselineBinary {
                guard let suite = input else { throw GateError(.input, "an interleaved gate needs the suite file: strain gate --baseline-binary OLD SUITE") }
                guard baseline == nil else { throw GateError(.input, "--baseline is for a cross-run gate; an interleaved gate compares --baseline-binary with --candidate-binary") }
                guard (1...RunCommand.maximumRepetitions).contains(repetitions) else {
                    throw GateError(.input, "--repetitions \(repetitions) is out of range; give a whole number from 1 to \(RunCommand.maximumRepetitions)")
                }
                directory = out ?? "Reports/gate-\(runTimestamp())"
                let runner = InterleavedGate(
                    baselineBinary: baselineBinary, candidateBinary: candidateBinary ?? currentExecutablePath(),
                    suite: suite, repetitions: repetitions, filters: filters, skips: skips, shard: shard, directory: directory,
                    measures: measure
                )
                let (old, new, schedule) = try runner.run()
                sides = (old, new)
                report = try Gate.compare(baseline: old, candidate: new, options: GateOptions(mode: .interleaved, allowExecutionMismatch: allowExecutionMismatch))
                report.schedule = schedule
                report.runFiles = ["baseline-run.json", "candidate-run.json"]
            } else {
                guard let current = input, let baseline else {
                    throw GateError(.input, "give either --baseline-binary OLD SUITE (interleaved) or CURRENT --baseline NAME (cross-run)")
                }
                let file = try location.store.resolve(baseline)
                let run = try readRun(current)
                sides = (file.run, run)
                directory = out ?? ((FileManager.default.fileExists(atPath: current + "/run.json") ? current : (current as NSString).deletingLastPathComponent) as NSString).appendingPathComponent("gate")
                report = try Gate.compare(baseline: file.run, candidate: run, options: GateOptions(
                    mode: .crossRun, allowFingerprintMismatch: allowFingerprintMismatch, allowExecutionMismatch: allowExecutionMismatch,
                    calibration: file.calibration ?? [:], baselineName: file.name))
                let candidateFile = FileManager.default.fileExists(atPath: current + "/run.json") ? current + "/run.json" : current
                report.runFiles = [URL(fileURLWithPath: candidateFile).standardizedFileURL.path]
            }
            try write(report, into: directory, sides: sides)
            if report.exitCode != 0 { throw ExitCode(report.exitCode) }
        } catch let error as GateError { throw error.exit() }
    }

    /// Writes the gate's outputs into `directory`, with each side's run rendered as a
    /// report there and each changed outcome's row pointed at its candidate trial.
    func write(_ report: GateReport, into directory: String, sides: (baseline: RunRecord, candidate: RunRecord)) throws(GateError) {
        do { try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true) } catch {
            throw GateError(.input, "\(directory): cannot create the output directory: \(error.localizedDescription)")
        }
        let report = try GateEvidence.attach(to: report, baseline: sides.baseline, candidate: sides.candidate, directory: directory)
        if let infinite = report.firstNonFinite {
            throw GateError(.input, "cannot compare \(infinite): a side holds values too small to divide by (a denormal, such as 5e-324 s), which no run measures; check both run.json files")
        }
        let json: Data
        do { json = try report.encoded() } catch { throw GateError(.incomplete, "could not encode gate.json: \(error)") }
        try writeOutput(json, to: (directory as NSString).appendingPathComponent("gate.json"))
        try writeOutput(Data(report.renderMarkdown().utf8), to: (directory as NSString).appendingPathComponent("gate.md"))
        try writeOutput(Data(report.renderJUnit().utf8), to: (directory as NSString).appendingPathComponent("junit.xml"))
        try writeOutput(Data(report.renderHTML().utf8), to: (directory as NSString).appendingPathComponent("gate.html"))
        for format in formats {
            switch format {
            // Every name, message and symbol from the two records on one line (`OneLine.copy`).
            case .text: print(Self.terminalText(OneLine.copy(report).renderText(directory: directory)))
            case .github:
                print(report.renderGitHub(), terminator: "")
                if let summary = ProcessInfo.processInfo.environment["GITHUB_STEP_SUMMARY"], !summary.isEmpty {
                    do { try report.appendStepSummary(to: summary) } catch {
                        writeStandardError("warning: could not append to $GITHUB_STEP_SUMMARY (\(summary)): \(error)")
                    }
                }
            }
        }
        print(Self.terminalText("Wrote \(directory)/gate.json, gate.md, gate.html and junit.xml, and each side's run as baseline/report.html and candidate/report.html"))
    }

    /// `text` as the terminal shows it: each line fitted to the window between words, the
    /// way `run`'s report is (``TerminalReport/fit(_:)``: at a terminal, or to the width
    /// COLUMNS gives; a pipe without COLUMNS gets the lines whole), a long reason wrapped
    /// under its row; then made safe for a terminal and a CI log.
    static func terminalText(_ text: String) -> String {
        TerminalStyle.safe(RunCommand.terminalReport().fit(text))
    }

    func runCalibration(rerun: String) throws(GateError) {
        guard let baseline else { throw GateError(.input, "--calibrate needs --baseline NAME: the stored baseline whose code the rerun ran again") }
        let file = try location.store.resolve(baseline)
        guard !baseline.contains("/"), !baseline.hasSuffix(".json") else {
            throw GateError(.input, "--calibrate records into a stored baseline; give its name, not a path (save it first with `strain baseline save`)")
        }
        let run = try readRun(rerun)
        if let commit = file.run.environment.gitCommit, let rerunCommit = run.environment.gitCommit, commit != rerunCommit {
            throw GateError(.input, "the rerun is of commit \(rerunCommit.prefix(12)), the baseline of \(commit.prefix(12)): a calibration needs the same code run again")
        }
        let (calibrated, rows) = Gate.calibrate(file, with: run)
        guard rows > 0 else {
            throw GateError(.input, "\(rerun) shares no completed timing row with baseline \(file.name); a calibration needs a rerun of the same suite")
        }
        try location.store.replace(file, with: calibrated)
        print(Self.terminalText("Calibrated baseline \(file.name) from \(rerun): \(rows) timing row-metrics, \(counted(calibrated.calibrationRuns ?? 1, "A/A run")) so far"))
    }
}

/// Runs two builds' trials in one job, alternating: round r runs A then B when r
/// is odd, B then A when even (ABBA), each as one repetition of its own `run`, read
/// back through run.json (whose schema version is checked), so builds that link
/// different Strain versions still compare.
struct InterleavedGate {
    var baselineBinary: String
    var candidateBinary: String
    var suite: String
    var repetitions: Int
    var filters: [String]
    var skips: [String]
    var shard: String?
    var directory: String
    /// `--measure`, passed to each build's `run`.
    var measures: [CountedMeasure] = []

    /// Both builds' runs, and how they ran.
    func run() throws(GateError) -> (baseline: RunRecord, candidate: RunRecord, schedule: GateSchedule) {
        for (name, path) in [("--baseline-binary", baselineBinary), ("--candidate-binary", candidateBinary)] {
            guard FileManager.default.isExecutableFile(atPath: path) else {
                throw GateError(.input, "\(name) \(path) is not an executable file; build it first (e.g. swift build -c release) and give its path")
            }
        }
        guard FileManager.default.fileExists(atPath: suite) else { throw GateError(.input, "\(suite): no such suite file") }
        do { try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true) } catch {
            throw GateError(.input, "\(directory): cannot create the output directory: \(error.localizedDescription)")
        }
        let started = Date()
        let baseline: RunRecord, candidate: RunRecord, schedule: GateSchedule
        if (measures + SuiteParser.declaredMeasures(contentsOf: suite)).isEmpty {
            (baseline, candidate) = try interleaved(started: started)
            schedule = GateSchedule(counted: false, together: false, repetitions: repetitions)
        } else {
            (baseline, candidate, schedule) = try runCounted(started: started)
        }
        do {
            try RunRecordFile.write(baseline, to: (directory as NSString).appendingPathComponent("baseline-run.json"))
            try RunRecordFile.write(candidate, to: (directory as NSString).appendingPathComponent("candidate-run.json"))
        } catch { throw GateError(.input, "cannot write the joined runs under \(directory): \(error)") }
        return (baseline, candidate, schedule)
    }

    /// Every repetition of each build in rounds of one repetition each, ABBA; `filters`
    /// instead of the gate's own (a counted gate's timed scenarios), `prefix` before each
    /// round's label.
    func interleaved(started: Date, filters: [String]? = nil, prefix: String = "") throws(GateError) -> (baseline: RunRecord, candidate: RunRecord) {
        var baselineRounds: [RunRecord] = []
        var candidateRounds: [RunRecord] = []
        var estimate = ProgressEstimate()
        let roundsStarted = Date()
        // Said before the first round, which can take minutes: the gate is not silent until it ends.
        print(GateCommand.terminalText("\(prefix.isEmpty ? "" : "timed: ")\(counted(repetitions, "round")), each running A and B in turn (ABBA); each round's line estimates the rest"))
        fflush(nil)
        for round in 1...repetitions {
            let order = round % 2 == 1 ? [true, false] : [false, true]
            for isBaseline in order {
                let record = try runOnce(isBaseline ? baselineBinary : candidateBinary, label: "\(prefix)\(isBaseline ? "A" : "B")\(round)",
                                         filters: filters, measured: filters == nil)
                if isBaseline { baselineRounds.append(record) } else { candidateRounds.append(record) }
            }
            estimate.finished(atElapsed: Date().timeIntervalSince(roundsStarted))
            print("\(prefix.isEmpty ? "" : "timed ")round \(round)/\(repetitions) done (A and B), \(Int(Date().timeIntervalSince(started))) s"
                  + Self.left(estimate.secondsLeft(remaining: repetitions - round)))
            fflush(nil)
        }
        return (try RunMerger.joinRounds(baselineRounds), try RunMerger.joinRounds(candidateRounds))
    }

    /// A counted gate (`--measure instructions`, or `measure:` in the suite): each build
    /// runs all its repetitions in one `run`, so Valgrind starts once per build, not once
    /// per round. A count does not drift with the machine's load as a time does, so it
    /// needs no interleaving, and the two builds run at once where the machine has two
    /// processors or more (callgrind runs a process's threads one at a time: each run
    /// keeps one busy). The scenarios that could not be counted (their work depends on
    /// timing: completed trials with no count, on either side) are judged by their
    /// timings, so they run again in interleaved rounds, and those rounds' trials
    /// replace theirs.
    func runCounted(started: Date) throws(GateError) -> (baseline: RunRecord, candidate: RunRecord, schedule: GateSchedule) {
        let together = ProcessInfo.processInfo.activeProcessorCount >= 2
        let sides = CountedSides()
        let binaries = [baselineBinary, candidateBinary]
        let gate = self
        print("\(counted(repetitions, "repetition")) a build, each build's in one counted run\(together ? ", A and B at once" : ", A then B"); a line when \(together ? "both are" : "each is") done")
        fflush(nil)
        let run: @Sendable (Int) -> Void = { side in
            sides.keep(side, Result { () throws(GateError) -> RunRecord in
                try gate.runOnce(binaries[side], label: side == 0 ? "A" : "B", repetitions: gate.repetitions)
            })
        }
        if together {
            DispatchQueue.concurrentPerform(iterations: 2, execute: run)
        } else {
            run(0)
            let elapsed = Date().timeIntervalSince(started)
            print("A: \(counted(repetitions, "repetition")) counted in one run, \(Int(elapsed)) s" + Self.left(elapsed))
            fflush(nil)
            run(1)
        }
        let baseline = try sides.record(0)
        let candidate = try sides.record(1)
        print("\(together ? "A and B at once" : "B"): \(counted(repetitions, "repetition")) counted in one run a build, \(Int(Date().timeIntervalSince(started))) s")
        fflush(nil)
        let timed = Self.uncountedScenarios(baseline).union(Self.uncountedScenarios(candidate))
        let schedule = GateSchedule(counted: true, together: together, repetitions: repetitions, timedScenarios: timed.sorted())
        guard !timed.isEmpty else { return (baseline, candidate, schedule) }
        print(GateCommand.terminalText("not countable, so timed in interleaved rounds: \(timed.sorted().joined(separator: ", "))"))
        let rounds = try interleaved(started: started, filters: timed.sorted().map { "scenario=\($0)" }, prefix: "timed-")
        return (Self.replacing(timed, in: baseline, with: rounds.baseline), Self.replacing(timed, in: candidate, with: rounds.candidate), schedule)
    }

    /// Scenarios whose completed trials carry no instruction count.
    static func uncountedScenarios(_ run: RunRecord) -> Set<String> {
        let completed = run.trials.filter { $0.outcome.kind == .completed }
        let counted = Set(completed.filter { $0.metrics.instructions != nil }.map(\.scenario))
        return Set(completed.map(\.scenario)).subtracting(counted)
    }

    /// `run` with the trials of `scenarios` replaced by `timed`'s of the same keys.
    static func replacing(_ scenarios: Set<String>, in run: RunRecord, with timed: RunRecord) -> RunRecord {
        var joined = run
        let keys = Set(run.trials.filter { scenarios.contains($0.scenario) }.map(\.key))
        joined.trials = run.trials.filter { !scenarios.contains($0.scenario) } + timed.trials.filter { keys.contains($0.key) }
        for index in joined.trials.indices { joined.trials[index].index = index }
        joined.finishedAt = timed.finishedAt
        return joined
    }

    /// What a round's line adds: the time the rounds left should take, from the rounds so
    /// far (a counted gate's round is minutes on a loaded machine); nothing after the last.
    static func left(_ seconds: Double?) -> String {
        guard let seconds, seconds > 0 else { return "" }
        let rounded = Int(seconds.rounded())
        return rounded < 120 ? "; about \(rounded) s left" : "; about \(Int((seconds / 60).rounded())) min left"
    }

    /// One `run` of `binary`: `repetitions` of each trial; `filters` instead of the
    /// gate's own; `measured`: with the gate's `--measure`s.
    func runOnce(_ binary: String, label: String, repetitions: Int = 1, filters: [String]? = nil, measured: Bool = true) throws(GateError) -> RunRecord {
        let out = (directory as NSString).appendingPathComponent("rounds/\(label)")
        // `strain run` refuses an --out that holds another run: a round's folder from an earlier gate is scratch.
        try? FileManager.default.removeItem(atPath: out)
        var arguments = ["run", suite, "--repetitions", "\(repetitions)", "--out", out, "--format", "json"]
        for filter in filters ?? self.filters { arguments += ["--filter", filter] }
        for skip in skips { arguments += ["--skip", skip] }
        if let shard { arguments += ["--shard", shard] }
        if measured { for measure in measures { arguments += ["--measure", measure.rawValue] } }
        let log = (directory as NSString).appendingPathComponent("rounds/\(label).log")
        try? FileManager.default.createDirectory(atPath: (directory as NSString).appendingPathComponent("rounds"), withIntermediateDirectories: true)
        guard FileManager.default.createFile(atPath: log, contents: nil), let handle = FileHandle(forWritingAtPath: log) else {
            throw GateError(.input, "cannot write \(log)")
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: binary)
        process.arguments = arguments
        process.standardOutput = handle
        process.standardError = handle
        process.standardInput = FileHandle.nullDevice
        do { try process.run() } catch { throw GateError(.input, "cannot start \(binary): \(error.localizedDescription)") }
        process.waitUntilExit()
        try? handle.close()
        let status = process.terminationStatus
        let tail = ((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").split(separator: "\n").suffix(3).joined(separator: " | ")
        if process.terminationReason == .uncaughtSignal {
            throw GateError(.incomplete, "\(binary) (round \(label)) died of signal \(status): \(tail)")
        }
        switch status {
        case 0, 1: break
        case 2: throw GateError(.input, "\(binary) refused `\(arguments.joined(separator: " "))` (exit 2): \(tail). Both builds must be a Strain that has `run --repetitions` and reads this suite")
        case StrainExitCode.toolMissing: throw GateError(.toolMissing, "\(binary) could not count (exit 4): \(tail)")
        default: throw GateError(.incomplete, "\(binary) (round \(label)) exited \(status): \(tail); see \(log)")
        }
        return try readRun((out as NSString).appendingPathComponent("run.json"))
    }
}

/// The two builds' counted runs, each kept by the thread that ran it.
private final class CountedSides: @unchecked Sendable {  // @unchecked Sendable: `results` is read and written under `lock` only
    private let lock = NSLock()
    private var results: [Int: Result<RunRecord, GateError>] = [:]

    func keep(_ side: Int, _ result: Result<RunRecord, GateError>) { lock.withLock { results[side] = result } }

    func record(_ side: Int) throws(GateError) -> RunRecord {
        guard let result = lock.withLock({ results[side] }) else { throw GateError(.incomplete, "the counted run of side \(side == 0 ? "A" : "B") did not finish") }
        return try result.get()
    }
}
