import ArgumentParser
import Foundation
import StrainKit
import StrainReports

/// Formats a user names with `--format`, checked by argument-parser.
extension ReportFormat: ExpressibleByArgument {}

struct ReportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "report",
        abstract: "Render a stored run again: self-contained HTML, Markdown, JUnit XML or run.json.",
        discussion: "Reads any run.json this Strain supports (schema versions \(RunRecord.supportedSchemaVersions.lowerBound) to \(RunRecord.supportedSchemaVersions.upperBound))."
    )

    @Argument(help: "The run.json to render.")
    var runJSON: String

    @Option(help: "The format: html (report.html, default), md (summary.md), junit (junit.xml) or json (run.json again, rewritten in this Strain's current schema version, e.g. to upgrade an older record).")
    var format: ReportFormat = .html

    @Option(help: "Where to write it (default: beside run.json, as report.html, summary.md, junit.xml or run.json; - for standard output).")
    var out: String?

    func run() throws {
        let record: RunRecord
        do {
            record = try RunRecordFile.read(from: runJSON)
        } catch let error as RunRecordFile.VersionError {
            FileHandle.standardError.write(Data("error: \(error.description)\n".utf8))
            throw ExitCode(StrainExitCode.inputError)
        } catch let error as CocoaError where error.code == .fileReadNoSuchFile {
            FileHandle.standardError.write(Data("error: \(runJSON): no such file; give the path of a run.json that `strain run` wrote\n".utf8))
            throw ExitCode(StrainExitCode.inputError)
        } catch {
            FileHandle.standardError.write(Data("error: \(runJSON) is not a run.json Strain can read: \(error)\n".utf8))
            throw ExitCode(StrainExitCode.inputError)
        }
        let data: Data
        do {
            data = try format.render(record)
        } catch {
            FileHandle.standardError.write(Data("error: could not render \(runJSON) as \(format.rawValue): \(error)\n".utf8))
            throw ExitCode(StrainExitCode.harnessError)
        }
        if out == "-" {
            FileHandle.standardOutput.write(data)
            return
        }
        let destination = out ?? ((runJSON as NSString).deletingLastPathComponent as NSString).appendingPathComponent(format.fileName)
        do {
            try data.write(to: URL(fileURLWithPath: destination), options: .atomic)
        } catch {
            FileHandle.standardError.write(Data("error: could not write \(destination): \(error.localizedDescription)\n".utf8))
            throw ExitCode(StrainExitCode.inputError)
        }
        print("Wrote \(destination)")
    }
}
