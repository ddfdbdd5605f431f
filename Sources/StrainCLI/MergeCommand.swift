import ArgumentParser
import Foundation
import StrainGate
import StrainKit
import StrainReports
import StrainText

struct MergeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "merge",
        abstract: "Join the runs of `strain run --shard K/N` into one run, refusing mixed or incomplete shards.",
        discussion: "Exit 0 when merged and every trial ended in an outcome its suite expects; 1 when merged and one did not (as `run`); 2 when the shards are of different suites, plans, commits or schema versions; 3 when a shard or a trial is missing."
    )

    @Argument(help: "Each shard's run.json, or its directory.")
    var shards: [String]

    @Option(help: "Where to write the merged run.json and its reports (default: Reports/merged-<timestamp>).")
    var out: String?

    @Option(parsing: .upToNextOption, help: "Reports to write besides run.json: html (report.html), md (summary.md), junit (junit.xml).")
    var format: [ReportFormat] = [.html, .md, .junit]

    func run() throws {
        do {
            var runs: [(path: String, run: RunRecord)] = []
            for path in shards { runs.append((path, try readRun(path))) }
            let merged = try RunMerger.mergeShards(runs)
            let out = out ?? "Reports/merged-\(runTimestamp())"
            do { try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: true) } catch {
                throw GateError(.input, "\(out): cannot create the output directory: \(error.localizedDescription)")
            }
            let runPath = (out as NSString).appendingPathComponent("run.json")
            do { try RunRecordFile.write(merged, to: runPath) } catch { throw GateError(.input, "cannot write \(runPath): \(error)") }
            var written = [runPath]
            for format in format where format != .json {
                let path = (out as NSString).appendingPathComponent(format.fileName)
                do { try writeOutput(try format.render(merged), to: path) } catch let error as GateError { throw error } catch {
                    throw GateError(.incomplete, "could not render \(path): \(error)")
                }
                written.append(path)
            }
            // The suite's name and plan hash come from the shards' records: shown on this line, never as a workflow command.
            let unexpected = merged.trials.filter { !$0.expected }.count
            let tally = unexpected == 0 ? "every outcome expected" : "\(unexpected) unexpected"
            // Fitted to the window between words, as gate's lines are (it was one line of 155 columns: re-trial 35m, N5).
            print(GateCommand.terminalText(OneLine.text("Merged \(runs.count) shards: \(counted(merged.trials.count, "trial")) of \(merged.suite.name) (\(tally)), plan \(merged.plan?.hash ?? "?"). Wrote \(written.joined(separator: ", "))")))
            // As `run` exits for the same trials: a sharded CI job gates on the merge.
            if unexpected > 0 { throw ExitCode(StrainExitCode.unexpectedOutcome) }
        } catch let error as GateError { throw error.exit() }
    }
}
