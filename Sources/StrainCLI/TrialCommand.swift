import Foundation
import StrainHost
import StrainKit
import StrainRunner

/// The hidden `_trial` subcommand a child is started with. It bypasses the
/// argument parser: the child must apply its profile before anything else.
enum TrialCommand {
    static func runChild(arguments: [String], catalog: ScenarioCatalog) -> Never {
        guard arguments.count == 1 else {
            FileHandle.standardError.write(Data("usage: strain _trial SPEC-JSON (started by strain run, not by hand)\n".utf8))
            exit(StrainExitCode.inputError)
        }
        TrialHost.run(specJSON: arguments[0], catalog: catalog)
    }

    /// The hidden `_trial-server` subcommand: the runner's trial server, talking on fd 3.
    static func serve(arguments: [String], catalog: ScenarioCatalog) -> Never {
        guard arguments.isEmpty, fcntl(3, F_GETFD) >= 0 else {
            FileHandle.standardError.write(Data("usage: strain _trial-server (started by strain run, not by hand)\n".utf8))
            exit(StrainExitCode.inputError)
        }
        TrialServerHost.serve(catalog: catalog)
    }
}
