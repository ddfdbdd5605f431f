import ArgumentParser
import Foundation
import StrainKit
import StrainExec
import StrainRunner
import StrainSuite
import Synchronization

/// Strain's exit codes: a contract CI scripts rely on.
public enum StrainExitCode {
    /// Every trial ended in an outcome its suite expects.
    public static let success: Int32 = 0
    /// At least one trial ended in an outcome its suite does not expect; for the
    /// gate, a regression or an outcome that got worse.
    public static let unexpectedOutcome: Int32 = 1
    /// A usage or input error: bad arguments, a bad suite file, an unreadable run.json.
    public static let inputError: Int32 = 2
    /// The harness failed (a trial ended in `harnessError`, reports could not be
    /// written), or the gate's data is incomplete (a missing row or shard).
    public static let harnessError: Int32 = 3
    /// A tool a counted measure needs is missing (`--measure instructions` without
    /// `valgrind` or `objcopy` on PATH, or with `STRAIN_INSTRUCTIONS_SOURCE=pmu` where no
    /// perf counter of instructions opens): nothing was run.
    public static let toolMissing: Int32 = 4
    /// The run was stopped by SIGINT (Ctrl-C): finished trials, run.json and the reports were written, marked interrupted.
    public static let interrupted: Int32 = 130
    /// The run was stopped by SIGTERM: as for SIGINT.
    public static let terminated: Int32 = 143

    /// The code for a run stopped by `signal`: 128 + its number (130 for SIGINT, 131 for SIGQUIT, 143 for SIGTERM).
    public static func stopped(by signal: Int32) -> Int32 { 128 + signal }
}

/// A command's failure with its message and its `StrainExitCode`, thrown to
/// `StrainCommand.main`, which prints `error: MESSAGE` and exits with the code.
struct CommandFailure: Error {
    var code: Int32
    var message: String

    /// A usage or input mistake (exit 2).
    static func input(_ message: String) -> CommandFailure { CommandFailure(code: StrainExitCode.inputError, message: message) }
    /// A failure of the harness (exit 3).
    static func harness(_ message: String) -> CommandFailure { CommandFailure(code: StrainExitCode.harnessError, message: message) }
}

/// The `strain` command, over a scenario catalog, so a package can build its own
/// `strain` with its own scenarios:
///
/// ```swift
/// // Sources/order-strain/main.swift
/// import StrainCLI
/// import StrainScenarios
/// StrainCommand.main(catalog: ScenarioCatalog([DecodeOrders.self]) + .builtIn)
/// ```
public enum StrainCommand {
    /// Runs the command line and exits with a code from `StrainExitCode`.
    ///
    /// A catalog that `ScenarioCatalog.validate()` rejects (two scenarios of one
    /// name, an invalid default) ends the program with exit code 2, naming each problem.
    public static func main(catalog: ScenarioCatalog, arguments: [String] = Array(CommandLine.arguments.dropFirst())) -> Never {
        // The child path first and alone: it must apply its profile before any thread starts.
        if arguments.first == "_trial" {
            TrialCommand.runChild(arguments: Array(arguments.dropFirst()), catalog: catalog)
        }
        // The trial server likewise: it copies itself into trials, so it must stay single-threaded.
        if arguments.first == "_trial-server" {
            TrialCommand.serve(arguments: Array(arguments.dropFirst()), catalog: catalog)
        }
        // The exit-code contract for the man page and the docs (`.ci/manual`, ExitCodeContractTests).
        if arguments.first == "_exit-codes" {
            switch arguments.dropFirst().first {
            case "markdown"?: print(ExitCodeContract.markdown())
            case "mdoc"?: print(ExitCodeContract.mdoc())
            case "text"?, nil: print(ExitCodeContract.help(for: .all))
            case let other?:
                writeStandardError("error: unknown format '\(OneLine.text(other))' for _exit-codes; write markdown, mdoc or text")
                exit(StrainExitCode.inputError)
            }
            exit(StrainExitCode.success)
        }
        // A catalog whose declarations clash is the binary's mistake: say so before anything runs.
        do {
            try catalog.validate()
        } catch {
            writeStandardError("error: this strain binary's scenario catalog is invalid:\n" + error.problems.map { "  " + $0 }.joined(separator: "\n"))
            exit(StrainExitCode.inputError)
        }
        activeCatalog.withLock { $0 = catalog }
        // A reader that went away (`strain … | head -1`) makes writes fail, never kills the runner.
        signal(SIGPIPE, SIG_IGN)
        // Standard output a line at a time, as at a terminal: written to a file or a pipe
        // it was block-buffered, so where output and errors share one log (CI's `2>&1`)
        // a notice on standard error landed before the report's last lines, mid-line.
        StandardOutput.bufferLines()
        // argument-parser answers `--version` before it reads the rest, so `--version --bogus` passed.
        // (`exec`'s arguments after its program are the program's own.)
        if arguments.first != "exec", arguments.prefix(while: { $0 != "--" }).contains("--version"), arguments != ["--version"] {
            writeStandardError("error: --version takes no other arguments (given: \(arguments.filter { $0 != "--version" }.map { "'\(OneLine.text($0))'" }.joined(separator: " "))); write `strain --version`")
            exit(StrainExitCode.inputError)
        }
        if let mistake = CommandSuggestion.unknownCommand(in: arguments) {
            writeStandardError(mistake)
            exit(StrainExitCode.inputError)
        }
        do {
            var command = try Strain.parseAsRoot(arguments)
            try command.run()
            exit(StrainExitCode.success)
        } catch let failure as CommandFailure {
            writeStandardError("error: \(failure.message)")
            exit(failure.code)
        } catch let code as ExitCode {
            exit(code.rawValue)
        } catch {
            var message = Strain.fullMessage(for: error)
            let code = Strain.exitCode(for: error)
            if code == .success {
                print(Self.withExitCodesLast(message))
                exit(StrainExitCode.success)
            }
            // argument-parser's suggestion, when it made one, is the hint: said once.
            if !message.contains("Did you mean"), let hint = CommandSuggestion.forUnknownOption(in: message, arguments: arguments) { message += "\n" + hint }
            writeStandardError(Self.lowercasedErrorPrefix(message))
            // `strain exec` exits with its program's status, so its own usage errors take 125, as env(1)'s do.
            exit(arguments.first == "exec" ? ExecError.Code.setup.rawValue : StrainExitCode.inputError)
        }
    }
}

extension StrainCommand {
    /// A help page with its exit-code table after USAGE, the arguments and the
    /// options: argument-parser prints a command's discussion (where `run`'s and
    /// `gate`'s tables are) before its USAGE, and a reader looks for the usage first.
    /// `strain --help` (and `strain help`) gets the whole table there. Any other help
    /// is as argument-parser wrote it, but for the `--version` it lists on every command's
    /// page: only `strain --version` takes it (`strain run --version` is refused).
    static func withExitCodesLast(_ page: String) -> String {
        if page.contains("USAGE: strain <subcommand>\n") {
            return page.trimmingCharacters(in: .newlines) + "\n\n" + ExitCodeContract.help(for: .all)
        }
        let help = page.split(separator: "\n", omittingEmptySubsequences: false)
            .filter { !($0.hasPrefix("  --version ") && $0.hasSuffix(" Show the version.")) }.joined(separator: "\n")
        guard let table = help.range(of: "\nExit codes ("), let usage = help.range(of: "\nUSAGE: "),
              table.lowerBound < usage.lowerBound else { return help }
        let before = help[..<table.lowerBound].trimmingCharacters(in: .newlines)
        let section = help[table.lowerBound..<usage.lowerBound].trimmingCharacters(in: .newlines)
        let rest = help[usage.lowerBound...].trimmingCharacters(in: .newlines)
        return before + "\n\n" + rest + "\n\n" + section
    }

    /// argument-parser's `Error: Unknown option …` as `error: unknown option …`, the way
    /// Strain's own messages (and swift, cargo and git) begin, so every error a user meets
    /// reads alike. The first word is lowered only when it is a plain capitalised word
    /// (`Unknown`, `Missing`), never a name or an acronym (`URL`, `JSON`).
    static func lowercasedErrorPrefix(_ message: String) -> String {
        guard message.hasPrefix("Error: ") || message.hasPrefix("error: ") else { return message }
        let rest = message.dropFirst("error: ".count)
        let word = rest.prefix { $0.isLetter }
        let plain = word.count > 1 && word.first!.isUppercase && word.dropFirst().allSatisfy(\.isLowercase)
        return "error: " + (plain ? word.lowercased() + rest.dropFirst(word.count) : rest)
    }
}

/// "Did you mean": the nearest command or option to a mistyped one, by the suite's rule (`Suggestion`).
enum CommandSuggestion {
    /// The commands a user types (the hidden `_trial` is not one).
    static let commands: [any ParsableCommand.Type] = Strain.configuration.subcommands

    static func name(of command: any ParsableCommand.Type) -> String {
        command.configuration.commandName ?? String(describing: command).lowercased()
    }

    /// `error: unknown command 'rnu'; did you mean 'run'?` for a first argument that
    /// is no command, no option and no file, but close to a command's name.
    static func unknownCommand(in arguments: [String]) -> String? {
        guard let first = arguments.first, !first.hasPrefix("-"), !first.contains("/"), !first.contains("."),
              !FileManager.default.fileExists(atPath: first) else { return nil }
        let names = commands.map(name(of:))
        guard !names.contains(first), first != "help" else { return nil }
        let commandList = "Commands: \(names.joined(separator: ", ")). See 'strain --help'."
        // Neither a command nor a file: it read as a suite `run` could not find (`frobnicate: error: no such file`).
        guard let nearest = Suggestion.nearest(to: first, among: names) else {
            return "error: '\(first)' is neither a command nor a file; `strain run SUITE.yaml` runs a suite\n" + commandList
        }
        return "error: unknown command '\(first)'; did you mean '\(nearest)'?\n" + commandList
    }

    /// `did you mean '--format'?` for argument-parser's "Unknown option '--formt'".
    static func forUnknownOption(in message: String, arguments: [String]) -> String? {
        guard let match = message.firstMatch(of: /Unknown option '(-[^']+)'/) else { return nil }
        let typed = String(match.1)
        let command = commands.first { arguments.first == name(of: $0) } ?? Strain.configuration.defaultSubcommand ?? RunCommand.self
        let help = command.helpMessage(columns: 200)
        let options = Set(help.matches(of: /--[a-z][a-z0-9-]*/).map { String($0.0) } + ["--help", "--version"])
        guard let nearest = Suggestion.nearest(to: typed, among: options.sorted()) else { return nil }
        return "Did you mean '\(nearest)'? See 'strain \(name(of: command)) --help'."
    }
}

/// The catalog the commands use, set once by `StrainCommand.main` before parsing
/// (argument-parser builds commands itself, so it cannot be handed to them).
let activeCatalog = Mutex(ScenarioCatalog([]))

/// The catalog's scenario names, which `explain` and `bisect` complete: read when
/// argument-parser builds a command (after `main` set the catalog), so a completion
/// script generated by a team's own `strain` lists the team's scenarios.
func scenarioNames() -> [String] {
    activeCatalog.withLock { $0.names }
}

/// What `--strategy <TAB>` offers: each strategy, by name where its arguments have
/// defaults, else by the example its help gives (`thread(512KiB)`). A custom completion,
/// not a list: fish runs a listed value's parentheses as a command substitution
/// (`thread(512KiB)` ran `512KiB`), while a custom completion's lines are taken whole,
/// and each shell quotes what it inserts.
func strategyCompletions() -> [String] {
    StrategySpec.Form.all.map { form in form.arguments.allSatisfy { $0.choices != nil } ? form.name : form.exampleText }
}

struct Strain: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "strain",
        abstract: "Stress-test Swift concurrency: stack exhaustion, starvation and their costs, per strategy.",
        discussion: "",
        version: "strain \(StrainVersion.current)",
        subcommands: [RunCommand.self, BisectCommand.self, ReportCommand.self, ListCommand.self, ExplainCommand.self, BaselineCommand.self, CompareCommand.self, GateCommand.self, MergeCommand.self, ExecCommand.self, DumpCommand.self],
        defaultSubcommand: RunCommand.self
    )
}
