import ArgumentParser
import Foundation
import StrainKit
import Synchronization

/// Strain's exit codes: a contract CI scripts rely on.
public enum StrainExitCode {
    /// Every trial ended in an outcome its suite expects.
    public static let success: Int32 = 0
    /// At least one trial ended in an outcome its suite does not expect.
    public static let unexpectedOutcome: Int32 = 1
    /// A usage or input error: bad arguments, a bad suite file, an unreadable run.json.
    public static let inputError: Int32 = 2
    /// The harness failed: a trial ended in `harnessError`, or reports could not be written.
    public static let harnessError: Int32 = 3
}

/// The `strain` command, over a scenario catalog, so a package can build its own
/// `strain` with its own scenarios.
public enum StrainCommand {
    /// Runs the command line and exits with a code from `StrainExitCode`.
    public static func main(catalog: ScenarioCatalog, arguments: [String] = Array(CommandLine.arguments.dropFirst())) -> Never {
        // The child path first and alone: it must apply its profile before any thread starts.
        if arguments.first == "_trial" {
            TrialCommand.runChild(arguments: Array(arguments.dropFirst()), catalog: catalog)
        }
        activeCatalog.withLock { $0 = catalog }
        do {
            var command = try Strain.parseAsRoot(arguments)
            try command.run()
            exit(StrainExitCode.success)
        } catch let code as ExitCode {
            exit(code.rawValue)
        } catch {
            let message = Strain.fullMessage(for: error)
            let code = Strain.exitCode(for: error)
            if code == .success {
                print(message)
                exit(StrainExitCode.success)
            }
            FileHandle.standardError.write(Data((message + "\n").utf8))
            exit(StrainExitCode.inputError)
        }
    }
}

/// The catalog the commands use, set once by `StrainCommand.main` before parsing
/// (argument-parser builds commands itself, so it cannot be handed to them).
let activeCatalog = Mutex(ScenarioCatalog([]))

struct Strain: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "strain",
        abstract: "Stress-test Swift concurrency: stack exhaustion, starvation and their costs, per strategy.",
        discussion: """
        Exit codes: 0 every outcome expected; 1 an unexpected outcome; 2 usage or input error; 3 harness error.
        """,
        subcommands: [RunCommand.self, BisectCommand.self, ReportCommand.self, ListCommand.self],
        defaultSubcommand: RunCommand.self
    )
}
