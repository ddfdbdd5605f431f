import ArgumentParser
import Foundation
import StrainGate
import StrainKit
import StrainText

struct BaselineCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "baseline",
        abstract: "Store runs to gate against: save, list, show, delete.",
        discussion: ExitCodeContract.section(for: "baseline"),
        subcommands: [Save.self, List.self, Show.self, Delete.self]
    )

    struct Location: ParsableArguments {
        @Option(help: "The directory baselines live in.")
        var baselines: String = BaselineStore.defaultDirectory

        var store: BaselineStore { BaselineStore(directory: baselines) }
    }

    struct Save: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Save a run.json as a named baseline (atomically; never replaces one without --force).",
            // argument-parser's own usage line is 90 columns: two lines that fit 80.
            usage: "strain baseline save <run-json> [--name <name>] [--force]\n                            [--baselines <baselines>]"
        )

        @Argument(help: "The run.json to save, or its directory.")
        var runJSON: String

        @Option(help: "The baseline's name (letters, digits, '.', '_', '-').")
        var name: String = "main"

        @Flag(help: "Replace a baseline of that name; save a run that has harness errors.")
        var force = false

        @OptionGroup var location: Location

        func run() throws {
            do throws(GateError) {
                let record = try readRun(runJSON)
                let broken = record.trials.filter { $0.outcome.kind == .harnessError }
                if !broken.isEmpty, !force {
                    throw GateError(.input, "\(runJSON) has \(broken.count) trial\(broken.count == 1 ? "" : "s") where the harness failed (\(broken[0].id)); a baseline without their data would hide regressions. Run it again, or pass --force")
                }
                let path = try location.store.save(record, name: name, source: runJSON, force: force)
                printLine("Saved baseline \(name): \(counted(record.trials.count, "trial")) of \(record.suite.name), commit \(record.environment.gitCommit.map { String($0.prefix(12)) } ?? "unknown"), to \(path)")
                // Saved all the same (exit 0): the gate compares a candidate's outcomes with these.
                let unexpected = record.trials.filter { !$0.expected }.count
                if unexpected > 0 {
                    printLine("\(counted(unexpected, "trial")) of it ended in an outcome the suite does not expect; the gate judges a candidate's outcomes against them")
                }
            } catch { throw error.exit() }
        }
    }

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List the stored baselines.")
        @OptionGroup var location: Location

        func run() {
            let baselines = location.store.list()
            // A file the store cannot read is left out of the list: say which, and why, rather than hide it.
            let listed = Set(baselines.map(\.name))
            let files = (try? FileManager.default.contentsOfDirectory(atPath: location.baselines)) ?? []
            for file in files.sorted() where file.hasSuffix(".json") && !file.hasPrefix(".") && !listed.contains(String(file.dropLast(5))) {
                do { _ = try location.store.load(String(file.dropLast(5))) } catch {
                    writeStandardError("warning: not listed: \(error.description)")
                }
            }
            guard !baselines.isEmpty else {
                printLine("No baselines in \(location.baselines). Save one with `strain baseline save RUN.json --name main`.")
                return
            }
            for file in baselines {
                let calibrated = file.calibrationRuns.map { ", calibrated by \($0) A/A run\($0 == 1 ? "" : "s")" } ?? ""
                printLine("\(file.name)  \(file.run.suite.name), \(counted(file.run.trials.count, "trial")), commit \(file.run.environment.gitCommit.map { String($0.prefix(12)) } ?? "unknown"), \(file.run.environment.host), saved \(file.savedAt)\(calibrated)")
            }
        }
    }

    struct Show: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Show a baseline: its run, machine and calibration.")
        @Argument(help: "The baseline's name.")
        var name: String
        @OptionGroup var location: Location

        func run() throws {
            do {
                let file = try location.store.resolve(name)
                let run = file.run
                let environment = run.environment
                printLine("Baseline \(file.name), saved \(file.savedAt) from \(file.source)")
                printLine("  suite \(run.suite.name) (\(run.suite.path)), \(counted(run.trials.count, "trial")), \(counted(Set(run.trials.map(\.key)).count, "trial key")), schema \(run.schemaVersion), Strain \(run.strainVersion)")
                let build = environment.build.map { ", \($0.shortName) (\($0.executablePath))" } ?? ""
                printLine("  commit \(environment.gitCommit ?? "unknown")\(build)")
                printLine("  machine \(environment.host): \(environment.architecture), \(environment.cores) cores, \(MetricDescriptor.Unit.grouped(Double(environment.memoryBytes / (1 << 20)))) MiB, \(environment.kernel), \(environment.cpuModel ?? "CPU unknown"), Swift \(environment.swiftVersion), \(environment.buildConfiguration ?? "build unknown")")
                if let calibration = file.calibration, !calibration.isEmpty {
                    let deltas = calibration.values.sorted()
                    printLine("  calibration: \(calibration.count) row-metrics from \(counted(file.calibrationRuns ?? 0, "A/A run")); δ median \(Int((deltas[deltas.count / 2] * 100).rounded()))%, largest \(Int(((deltas.last ?? 0) * 100).rounded()))%")
                } else {
                    printLine("  not calibrated: cross-run timings are inconclusive until `strain gate --calibrate RUN.json --baseline \(file.name)`")
                }
            } catch { throw error.exit() }
        }
    }

    struct Delete: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Delete a stored baseline.")
        @Argument(help: "The baseline's name.")
        var name: String
        @OptionGroup var location: Location

        func run() throws {
            do {
                try location.store.delete(name)
                print("Deleted baseline \(name)")
            } catch { throw error.exit() }
        }
    }
}

/// Prints one line about a stored run: its suite's name, host, kernel and commit come from
/// a record, so a line break in them is shown as `\n` and no line starts a workflow command;
/// fitted to the window between words as the gate's lines are (`baseline list` wrote 103
/// columns at 80, re-trial 35m).
private func printLine(_ line: String) {
    print(GateCommand.terminalText(OneLine.text(line)))
}
