internal import CStrainProbe
import Foundation
import Glibc
import StrainKit
import StrainSymbols

/// Counted trials (`measure: [instructions]`, `--measure instructions`): each trial
/// run under Valgrind's callgrind, which counts the instructions of the scenario's
/// measured work alone; the runner reads the count and each function's share from
/// callgrind's output after the trial.
///
/// Valgrind starts once per run: the trial server itself runs under callgrind (the
/// counted server, `serverCommand`), and each counted trial is a copy of it, made as
/// a plain trial is (`strain_server_fork_trial`). Callgrind follows the fork: the copy
/// runs under it with the server's loaded binary, and writes its own part, named by
/// its own pid (`callgrind.out.PID.1`), when its work ends; the server never collects,
/// so a copy starts from nothing counted. A copy that crashes or is killed takes only
/// itself down. Under `--isolation spawn` each trial is spawned under callgrind instead.
///
/// How: callgrind starts with its collection off, and each thread collects while it
/// holds work (and the host thread while it runs the workload); at the work's end the
/// host has callgrind write the part so far (trigger `strain-work`). A spawned trial
/// (and a test's counted expectation) starts with the instrumentation off too, switched
/// on as the work starts and off after it; the counted server starts with it on, so its
/// copies keep the translations they inherit (switching it drops them all:
/// CStrainProbe/strain_instr.c says why). So a thread's start
/// and exit, an idle worker's spinning and the harness's threads are not counted.
///
/// Callgrind runs a copy of the binary with its debug information stripped
/// (`objcopy --strip-debug`): Valgrind 3.19 gives up on the whole binary ("Possibly
/// corrupted debuginfo file ... I can't recover. Giving up.") at the compilation units
/// clang writes in DWARF 5 for the C targets linked in (this package's, and a
/// dependency's C++), whose attributes use forms its unit reader does not know
/// (`DW_FORM_strx1`, 0x25; `DW_FORM_rnglistx`, 0x23: "unhandled dwarf2 abbrev form
/// code"); the Swift compiler's own units are DWARF 4 and would read. The copy keeps
/// the symbol table, so functions keep their names, and each named function of the
/// binary is placed (file:line of its first instruction) by looking its name up in
/// the original binary's symbol table and asking llvm-symbolizer there.
///
/// - Important: callgrind serializes the trial's threads and runs it about 50 times
///   slower: the trial's deadline and stall threshold are stretched by
///   `slowdown`, and its timings mean nothing (the gate judges its counted rows).
///   Scenarios whose work depends on timing are not run under it: their trials run
///   as usual and say "not countable".
package struct CallgrindTrials: Sendable {
    /// The `valgrind` that runs the trials.
    package let valgrind: String
    /// The stripped copy of the runner's binary the trials run.
    package let binary: String
    /// The runner's binary itself, whose debug information places the copy's functions.
    package let original: String
    /// The folder of the copy and of each trial's callgrind output.
    package let folder: String
    /// Scenarios whose work depends on timing (`Scenario.workDependsOnTiming`): not counted.
    package let timingDependent: Set<String>

    /// How much longer a trial's work may take under callgrind than its suite allows.
    package static let slowdown = 50.0
    /// Seconds added to a counted trial's deadline for Valgrind to start (a spawned one;
    /// a copy of the counted server has it started): a spawned counted `noop` took
    /// 3.3–4.1 s from spawn to reap here, a plain one 0.04 s.
    package static let startSeconds = 30.0
    /// Functions a trial records: the most inclusive instructions, then the most in their
    /// own code; enough to name what grew.
    package static let recordedFunctions = (inclusive: 40, exclusive: 20)
    /// The most of a part the runner reads: 64 MiB. The part is written inside the trial's
    /// process, so a program can make it any size; a counted trial's part here is tens of
    /// KiB (a 20-level JSON parse's, the parser's fixture: 56 KiB).
    package static let partByteLimit = 64 << 20
    /// The longest the runner parses a part for: 30 s; past it (or at a stop signal, asked
    /// every `CallgrindProfile.linesBetweenChecks` lines) the trial is recorded "not counted".
    package static let partReadSeconds = 30.0
    /// The trigger of the part the host writes.
    static let trigger = "Client Request: strain-work"

    /// Finds valgrind and objcopy and makes the stripped copy of `executable`.
    /// - Throws: `CallgrindSetupError`, naming the missing tool and the package that has it.
    package init(executable: String, timingDependent: Set<String>) throws(CallgrindSetupError) {
        guard let valgrind = Self.find("valgrind") else {
            throw CallgrindSetupError(message: "counting instructions (--measure instructions, expectInstructions) needs Valgrind's callgrind, and there is no `valgrind` on PATH; install it (Debian: apt-get install valgrind)")
        }
        guard let objcopy = Self.find("objcopy") else {
            throw CallgrindSetupError(message: "counting instructions (--measure instructions, expectInstructions) needs `objcopy` (to copy the binary without the debug information valgrind 3.19 cannot read), and there is none on PATH; install it (Debian: apt-get install binutils)")
        }
        Self.removeFoldersOfEndedProcesses()
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("strain-callgrind-\(getpid())-\(UUID().uuidString.prefix(8))").path
        do {
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        } catch {
            throw CallgrindSetupError(message: "could not create \(folder) for the counted trials: \(error)")
        }
        let binary = (folder as NSString).appendingPathComponent("strain-stripped")
        let status = Self.runQuietly(objcopy, ["--strip-debug", executable, binary])
        guard status == 0 else {
            throw CallgrindSetupError(message: "`objcopy --strip-debug \(executable) \(binary)` failed (status \(status)): the counted trials need that copy")
        }
        self.valgrind = valgrind
        self.binary = binary
        self.original = executable
        self.folder = folder
        self.timingDependent = timingDependent
    }

    /// Whether callgrind's outputs are kept in `folder` (STRAIN_KEEP_CALLGRIND=1): for
    /// reading one with `callgrind_annotate`, and how the parser's fixture was captured.
    static let keepsOutputs = ProcessInfo.processInfo.environment["STRAIN_KEEP_CALLGRIND"] == "1"

    /// Removes the copy and any output left behind (unless asked to keep them).
    package func cleanUp() {
        if Self.keepsOutputs {
            FileHandle.standardError.write(Data("strain: callgrind's outputs kept in \(folder)\n".utf8))
            return
        }
        try? FileManager.default.removeItem(atPath: folder)
    }

    /// Removes the `strain-callgrind-PID-…` folders of processes that ended without
    /// removing theirs: a test process stopped by Ctrl-C or SIGKILL while it held the
    /// stripped copy of its binary (a runner's counted server has a watcher that does
    /// it). A folder whose process is alive, or whose name has no pid, is left.
    package static func removeFoldersOfEndedProcesses() {
        let temporary = FileManager.default.temporaryDirectory.path
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: temporary) else { return }
        for name in names where name.hasPrefix("strain-callgrind-") {
            guard let pid = name.dropFirst("strain-callgrind-".count).split(separator: "-").first.flatMap({ Int32($0) }),
                  pid > 0, pid != getpid(), kill(pid, 0) == -1, errno == ESRCH else { continue }
            try? FileManager.default.removeItem(atPath: (temporary as NSString).appendingPathComponent(name))
        }
    }

    /// Whether `scenario`'s trials run under callgrind, or why not.
    func notCountable(_ scenario: String) -> String? {
        timingDependent.contains(scenario) ? "not countable: the scenario's work depends on timing (waits, deadlines, pool growth), so its instruction count would too" : nil
    }

    /// The command that starts a trial under callgrind: the executable, then its arguments.
    /// `instrumented`: the instrumentation on from the start (the counted server, whose
    /// copies inherit its translations); off until the work starts otherwise. No gdbserver:
    /// Valgrind's makes three FIFOs a process in the temporary folder, left there when the
    /// process is killed (a CI run of Strain's tests left 45).
    package func command(trialArguments: [String], instrumented: Bool = false) -> (executable: String, arguments: [String]) {
        (valgrind, ["--tool=callgrind", "-q", "--vgdb=no", "--instr-atstart=\(instrumented ? "yes" : "no")", "--collect-atstart=no",
                    "--callgrind-out-file=\(outputBase)%p", binary] + trialArguments)
    }

    /// The command that starts the counted trial server: the stripped copy's hidden
    /// `_trial-server` under callgrind, whose copies are the counted trials (callgrind
    /// follows a fork: each copy writes its own part, `callgrind.out.PID.1`).
    func serverCommand() -> (executable: String, arguments: [String]) {
        command(trialArguments: ["_trial-server"], instrumented: true)
    }

    private var outputBase: String { (folder as NSString).appendingPathComponent("callgrind.out.") }

    /// The trial's environment: the counting switch on.
    package func environment(_ environment: [String]) -> [String] {
        environment + ["STRAIN_INSTRUCTIONS=callgrind"]
    }

    /// The count of the trial whose process was `pid`, read from callgrind's output
    /// (both of its files removed), with its functions named by `symbolizer`.
    func count(pid: Int32, completed: Bool, symbolizer: Symbolizer) -> InstructionCount {
        let part = outputBase + "\(pid).1"
        defer {
            if !Self.keepsOutputs {
                try? FileManager.default.removeItem(atPath: part)
                try? FileManager.default.removeItem(atPath: outputBase + "\(pid)")
            }
        }
        guard completed else {
            return InstructionCount(source: "callgrind", instructions: nil, notCountable: "not countable: the trial did not complete, so its work was cut short")
        }
        guard FileManager.default.fileExists(atPath: part) else {
            return InstructionCount(source: "callgrind", instructions: nil,
                                    notCountable: "not counted: callgrind wrote no part for the work (\(part)); this strain may be built without Valgrind's headers (valgrind/callgrind.h): install valgrind and rebuild")
        }
        let data: Data
        do {
            data = try InputFile.read(part, what: "callgrind's part for a trial", limit: Self.partByteLimit)
        } catch {
            return InstructionCount(source: "callgrind", instructions: nil, notCountable: "not counted: callgrind's part \(error.message)")
        }
        let deadline = strain_monotonic_ns() &+ UInt64(Self.partReadSeconds * 1e9)
        do {
            let profile = try CallgrindProfile(parsing: String(decoding: data, as: UTF8.self)) {
                if let signal = RunnerSignals.stopSignal { return "the runner was told to stop (signal \(signal))" }
                return strain_monotonic_ns() > deadline ? "still reading after \(Int(Self.partReadSeconds)) s" : nil
            }
            guard profile.trigger == Self.trigger else {
                return InstructionCount(source: "callgrind", instructions: nil, notCountable: "not counted: callgrind's part was written by '\(profile.trigger ?? "nothing")', not by the work's end")
            }
            let top = profile.top(inclusive: Self.recordedFunctions.inclusive, exclusive: Self.recordedFunctions.exclusive)
            let functions = profile.named(top, by: symbolizer, placedIn: original) { inCopy($0) }
            return InstructionCount(source: "callgrind", instructions: profile.total, functions: functions)
        } catch {
            return InstructionCount(source: "callgrind", instructions: nil, notCountable: "not counted: \(error)")
        }
    }

    /// Whether callgrind's `object` is the stripped copy (the path as it wrote it).
    func inCopy(_ object: String) -> Bool {
        object == binary || URL(fileURLWithPath: object).resolvingSymlinksInPath().path == URL(fileURLWithPath: binary).resolvingSymlinksInPath().path
    }

    /// `name`'s path on PATH, if it is there and executable.
    static func find(_ name: String) -> String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        for folder in path.split(separator: ":") {
            let candidate = (String(folder) as NSString).appendingPathComponent(name)
            if access(candidate, X_OK) == 0 { return candidate }
        }
        return nil
    }

    /// Runs a tool to its end with its output discarded; its exit status.
    static func runQuietly(_ executable: String, _ arguments: [String]) -> Int32 {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        do { try process.run() } catch { return -1 }
        process.waitUntilExit()
        return process.terminationStatus
    }
}

/// Counted trials cannot start: a tool is missing or the copy failed.
package struct CallgrindSetupError: Error, Sendable, CustomStringConvertible {
    /// What is missing and how to get it.
    package var message: String
    package var description: String { message }
}
