import ArgumentParser
import Foundation
import StrainKit
import StrainReports
import StrainText

/// Formats a user names with `--format`, checked by argument-parser.
extension ReportFormat: ExpressibleByArgument {}

struct ReportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "report",
        abstract: "Render a stored run again: self-contained HTML, Markdown, JUnit XML, run.json, or a CSV and github-action-benchmark JSON for trend charts.",
        discussion: "Reads any run.json this Strain supports (schema versions \(RunRecord.supportedSchemaVersions.lowerBound) to \(RunRecord.supportedSchemaVersions.upperBound)). Never writes over the run.json it reads."
            + "\n" + ExitCodeContract.section(for: "report")
    )

    @Argument(help: "The run.json to render.")
    var runJSON: String

    @Option(help: "The format: html (report.html, default), md (summary.md), junit (junit.xml) or json (run.json again, rewritten in this Strain's current schema version, to upgrade an older record), csv (metrics.csv: a row per trial, a column per metric with its unit), benchmark-smaller or benchmark-bigger (benchmark-smaller.json, benchmark-bigger.json: each trial key's medians in github-action-benchmark's customSmallerIsBetter and customBiggerIsBetter format).")
    var format: ReportFormat = .html

    @Option(help: "Where to write it: a file, or a folder to write it in under its usual name (default: beside run.json, as report.html, summary.md, junit.xml, run.normalized.json, metrics.csv or benchmark-*.json; - for standard output).")
    var out: String?

    func run() throws {
        let record: RunRecord
        do {
            record = try RunRecordFile.load(from: runJSON)
        } catch {
            throw CommandFailure.input(TerminalStyle.safe(error.description))
        }
        let fileName = format == .json ? "run.normalized.json" : format.fileName
        var destination = out ?? ((runJSON as NSString).deletingLastPathComponent as NSString).appendingPathComponent(fileName)
        // A folder, as `run`, `bisect` and `gate` take one: the report goes in it under its usual name.
        var isFolder: ObjCBool = false
        if destination != "-", destination.hasSuffix("/") || (FileManager.default.fileExists(atPath: destination, isDirectory: &isFolder) && isFolder.boolValue) {
            do {
                try FileManager.default.createDirectory(atPath: destination, withIntermediateDirectories: true)
            } catch {
                throw CommandFailure.input("could not make the folder \(destination) for the report: \(error.localizedDescription); give a --out you can write to")
            }
            destination = (destination as NSString).appendingPathComponent(fileName)
        }
        if destination != "-" {
            if AtomicFile.sameFile(destination, runJSON) {
                throw CommandFailure.input("\(destination) is the run.json being read; `strain report` never writes over its input: give another --out, or --out - for standard output")
            }
            if FileManager.default.fileExists(atPath: destination, isDirectory: &isFolder), isFolder.boolValue {
                throw CommandFailure.input("\(destination) is a folder; give another --out for the report, e.g. --out \((destination as NSString).deletingLastPathComponent)")
            }
        }
        let data: Data
        do {
            data = try format.render(record)
        } catch {
            throw CommandFailure.harness("could not render \(runJSON) as \(format.rawValue): \(error)")
        }
        if destination == "-" {
            // Standard output may be a CI log: `render` already gave no line that reads as a
            // workflow command (a record's name at a line's start, `::add-mask::…`).
            // A reader that went away (`| head`) is not an error of the report.
            try? FileHandle.standardOutput.write(contentsOf: data)
            return
        }
        do {
            try AtomicFile.write(data, to: destination)
        } catch {
            throw CommandFailure.input("\(error.description); give a --out you can write to")
        }
        print("Wrote \(TerminalStyle.safe(destination))")
    }
}
