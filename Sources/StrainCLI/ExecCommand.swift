import ArgumentParser
import Foundation
import StrainKit
import StrainReports
import StrainExec
import StrainRunner
import StrainText

struct ExecCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "exec",
        abstract: "Run any program under Strain's probe: a trace when a thread overflows its stack or crashes, thread dumps on demand.",
        // argument-parser's own usage line is 105 columns: two lines that fit 80.
        usage: "strain exec [--out <out>] [--stall <duration>] [--profile <profile>]\n                   [--no-follow] [--] <program> [<argument> ...]",
        discussion: """
        The program runs as it would without Strain: on the same terminal, with its own output and environment; \
        libStrainProbe.so is preloaded (LD_PRELOAD) and gives every thread an alternate signal stack. \
        A fault's trace goes to DIR/run.json (read it with `strain report DIR/run.json`) and to strain's standard error. \
        SIGQUIT (kill -QUIT PID, Ctrl-\\) or `strain dump PID` writes a grouped all-thread dump to DIR/dump-N.txt without stopping the program \
        (SIGQUIT only where strain exec was not started with it ignored, as a script's background job is; `strain dump` always). \
        strain exits with the program's own status (a program killed by SIGSEGV kills strain by SIGSEGV: 139 in a shell); \
        its own failures: 125 (a bad option or none of a program, no probe library, an unusable --out), 126 (the program cannot be run), 127 (no such program).
        """
    )

    @Option(help: "Where to write run.json, the dumps and the probe's files (default: Reports/exec-<program>-<timestamp>).")
    var out: String?

    @Option(parsing: .unconditional, help: ArgumentHelp("Watch for a stuck GCD or Swift concurrency pool, or threads blocked on locks: after this long without CPU time (such as 10s), dump once and name it starved or deadlocked (100ms to 10m).", valueName: "duration"))
    var stall: String?

    @Option(help: ArgumentHelp("Emulate a platform's stacks: ios (512KiB threads, a 1MiB main thread), macos (512KiB threads), linux (as is).", valueName: "profile"), completion: .list(Profile.allCases.map(\.rawValue)))
    var profile: String = Profile.linux.rawValue

    @Flag(name: .customLong("no-follow"), help: "Probe only the program as started: not what it executes (a wrapper's exec, a shim) nor the processes it starts.")
    var noFollow = false

    @Argument(parsing: .captureForPassthrough, help: ArgumentHelp("The program and its arguments, after --.", valueName: "program"))
    var command: [String] = []

    func run() throws {
        var command = command
        let afterDashes = command.first == "--"
        if afterDashes { command.removeFirst() }
        guard let program = command.first, !program.isEmpty else {
            throw CommandFailure(code: ExecError.Code.setup.rawValue, message: "no program to run; write strain exec [--out DIR] -- PROGRAM [ARGUMENTS…]")
        }
        // `.captureForPassthrough` takes `--help` too: before `--` it asks for this command's help.
        if !afterDashes, ["--help", "-h"].contains(program) {
            print(Strain.helpMessage(for: Self.self))
            return
        }
        if !afterDashes, program.hasPrefix("-") {
            throw CommandFailure(code: ExecError.Code.setup.rawValue, message: "unknown option '\(program)'; strain exec takes --out, --stall, --profile and --no-follow, then the program and its arguments after --")
        }
        guard let profile = Profile(rawValue: profile) else {
            throw CommandFailure(code: ExecError.Code.setup.rawValue, message: "--profile '\(self.profile)' is not a profile; use one of \(Profile.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        var stallSeconds: Double?
        if let stall {
            do {
                stallSeconds = try BisectCommand.duration(stall, option: "--stall")
            } catch {
                throw CommandFailure(code: ExecError.Code.setup.rawValue, message: error.description)
            }
        }
        let name = (program as NSString).lastPathComponent.filter { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" }
        let result: ExecResult
        do {
            let folder = try out.map { try OutputDirectory(path: $0, mode: .fresh) }
                ?? Self.defaultFolder(base: "Reports/exec-\(name.isEmpty ? "program" : name)-\(runTimestamp())")
            let supervisor = ExecSupervisor(probeLibrary: try ProbeLibrary.locate())
            let request = ExecRequest(program: program, arguments: Array(command.dropFirst()), folder: folder.path,
                                      stallSeconds: stallSeconds, profile: profile, follow: !noFollow)
            result = try supervisor.run(request, onDump: { dump in
                Self.write(dump, folder: folder.path, program: program)
            }, onStopped: { why in
                writeStandardError("strain: " + TerminalStyle.safe(why))
            }, onNote: { note in
                writeStandardError("strain: " + TerminalStyle.safe(note))
            })
            try RunRecordFile.write(result.record, to: folder.runJSONPath)
            // A stall verdict this terminal was shown (with its dump) and the record then withdrew is said again, withdrawn.
            let withdrawn = result.record.trials.first?.stall == nil && result.dumps.contains { $0.stall?.kind != nil }
            if let trial = result.record.trials.first,
               (trial.outcome.kind != .completed && trial.outcome.kind != .threw) || !(trial.processFaults ?? []).isEmpty || withdrawn {
                Self.describe(trial, runJSON: folder.runJSONPath)
            }
            withExtendedLifetime(folder) {}
        } catch let error as ExecError {
            throw CommandFailure(code: error.code.rawValue, message: error.message)
        } catch let error as OutputDirectoryError {
            throw CommandFailure(code: ExecError.Code.setup.rawValue, message: TerminalStyle.safe(error.description))
        } catch {
            throw CommandFailure(code: ExecError.Code.setup.rawValue, message: "could not write the run's record: \(error)")
        }
        // The program's own status, as if strain were not there.
        switch result.termination {
        case .exited(let code):
            if code != 0 { throw ExitCode(code) }
        case .signaled(let signal):
            ProgramExit.likeSignal(signal)
        }
    }

    /// The default run folder: `base`, or `base-2`, `base-3`… when another exec of
    /// the same program started in the same second already holds it (a loop, a
    /// script starting several instances), so the program runs rather than being refused.
    static func defaultFolder(base: String) throws(OutputDirectoryError) -> OutputDirectory {
        var candidate = base
        for attempt in 2...1000 {
            do {
                return try OutputDirectory(path: candidate, mode: .fresh)
            } catch {
                var info = stat()
                // Only a folder that exists and holds (or is writing) another run is
                // passed over; a folder that cannot be created is the user's to fix.
                guard stat(candidate, &info) == 0, info.st_mode & S_IFMT == S_IFDIR,
                      FileManager.default.fileExists(atPath: (candidate as NSString).appendingPathComponent(".strain.lock")) else { throw error }
                candidate = "\(base)-\(attempt)"
            }
        }
        return try OutputDirectory(path: candidate, mode: .fresh)
    }

    /// Writes a dump's text as DIR/dump-N.txt and says so on standard error, with each group's line.
    static func write(_ dump: ExecDump, folder: String, program: String) {
        let path = (folder as NSString).appendingPathComponent("dump-\(dump.number).txt")
        var title = "thread dump \(dump.number) of \(program) at \(Date().formatted(.iso8601))"
        if let stall = dump.stall { title += ", \(stall.name): \(stall.message)" }
        // Thread names are the program's: no line of the file starts a workflow command (a CI step may print it).
        try? OneLine.withoutWorkflowCommands(DumpText.document(dump.dump, title: title)).write(toFile: path, atomically: true, encoding: .utf8)
        var lines = ["strain: \(title): \(counted(dump.dump.threadCount, "thread")) in \(counted(dump.dump.groups.count, "group")), written to \(path)"]
        lines += dump.dump.groups.prefix(8).map { "  " + DumpText.group($0) }
        if dump.dump.groups.count > 8 { lines.append("  … \(counted(dump.dump.groups.count - 8, "more thread group")) in \(path)") }
        // A verdict does not end the program: strain goes on waiting, silent, and a reader waited for more (re-trial 35q, F2).
        if dump.stall != nil {
            lines.append("strain: --stall only watches: the program is left running, and strain exec waits for it to end (Ctrl-C, or a kill of the program, ends it; the record is written then)")
        }
        writeStandardError(TerminalStyle.safe(lines.joined(separator: "\n")))
    }

    /// A fault or a stall on standard error: the headline, the trace (or the dump's groups) and where the record is.
    static func describe(_ trial: TrialRecord, runJSON: String) {
        var lines = ["strain: the program's outcome is \(trial.outcome.description)\(trial.outcome.message.map { ": \($0)" } ?? "")"]
        if let words = trial.lastWords { lines.append("reason: \(words)") }
        // The sanitizer wrote its reports to Strain's file, not the terminal: each one's place, here.
        let reports = trial.sanitizerReports ?? []
        lines += reports.prefix(8).map { "  " + $0.headline }
        if reports.count > 8 { lines.append("  … \(reports.count - 8) more sanitizer reports in the record") }
        if trial.outcome.kind == .completed || trial.outcome.kind == .threw {
            // Only another process faulted: the program's own ending needs no trace.
        } else if let trace = trial.trace, trial.stall == nil {
            lines.append(TraceText.headline(trace))
            lines += TraceText.lines(trace).map { "  " + $0 }
        } else if let dump = trial.dump {
            // A stall's evidence is its dump (a fault the program handled long before is not).
            lines += dump.groups.prefix(8).map { "  " + DumpText.group($0) }
        }
        if let tree = ProcessFaultText.tree(trial) { lines += tree.enumerated().map { $0.offset == 0 ? "strain: " + $0.element : $0.element } }
        for fault in trial.processFaults ?? [] {
            lines.append("strain: another process of the program faulted: \(ProcessFaultText.headline(fault))")
            if let words = fault.lastWords { lines.append("reason: \(words)") }
            lines.append(TraceText.headline(fault.trace))
            lines += TraceText.lines(fault.trace).map { "  " + $0 }
        }
        // What to do, as the reports say it, where the user is.
        if [.stackOverflow, .crashed, .deadlocked, .starved].contains(trial.outcome.kind) {
            lines.append("strain: what to do: " + OutcomeAdvice.text(for: trial))
        }
        // The command a line of its own: "(strain report" / "PATH)" broke it over two (re-trial 35n, F7).
        lines.append("strain: record in \(runJSON)")
        lines.append("strain: read it with strain report \(runJSON)")
        writeStandardError(TerminalStyle.safe(lines.joined(separator: "\n")))
    }
}

struct DumpCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "dump",
        abstract: "Print a grouped all-thread dump of a program running under `strain exec`, without stopping it.",
        discussion: """
        Asks with SIGQUIT, or, when the program handles or ignores SIGQUIT, with SIGSYS carrying Strain's sigqueue value \
        (the first line says which). The dump is also written into the program's run folder. \
        Exit codes: 0 printed; 2 no such process, or not started under strain exec; 3 no answer in time.
        """
    )

    @Argument(help: "The program's pid (not strain's).")
    var pid: String

    @Option(parsing: .unconditional, help: ArgumentHelp("How long to wait for the dump (100ms to 10m).", valueName: "duration"))
    var timeout: String = "5s"

    func run() throws {
        guard let pid = Int32(pid), pid > 0 else {
            throw CommandFailure.input("'\(self.pid)' is not a pid; give the program's process id (strain exec prints nothing, so use pgrep or $!)")
        }
        let seconds: Double
        do {
            seconds = try BisectCommand.duration(timeout, option: "--timeout")
        } catch {
            throw CommandFailure.input(error.description)
        }
        do {
            let answer = try DumpRequest.request(pid: pid, timeoutSeconds: seconds)
            // The probe's record (hex addresses, the maps) is what `strain exec` turns into the
            // readable dump-N.txt of its run folder: name the folder a reader opens.
            let probeFolder = (answer.file as NSString).deletingLastPathComponent
            let runFolder = (probeFolder as NSString).lastPathComponent == "probe" ? (probeFolder as NSString).deletingLastPathComponent : probeFolder
            // At a terminal or with COLUMNS, fitted between words as `run`'s report is (its lines reached 151 columns: re-trial 35p, F1).
            let style = TerminalStyle(color: false, width: RunCommand.outputColumns())
            print(style.fitLines("asked with \(answer.method); strain exec writes it as a dump-N.txt in \(runFolder) (the probe's record: \(answer.file))"))
            print(style.fitLines(TerminalStyle.safe(DumpText.document(answer.dump, title: "thread dump of process \(answer.pid)"))), terminator: "")
        } catch {
            throw CommandFailure(code: error.code.rawValue, message: error.message)
        }
    }
}
