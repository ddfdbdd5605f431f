import ArgumentParser
import Foundation
import StrainGate
import StrainKit

extension GateError {
    /// This error as the command's exit code, its message on standard error.
    func exit() -> ExitCode {
        writeStandardError("error: \(description)")
        switch kind {
        case .input: return ExitCode(StrainExitCode.inputError)
        case .incomplete: return ExitCode(StrainExitCode.harnessError)
        case .toolMissing: return ExitCode(StrainExitCode.toolMissing)
        }
    }
}

/// A run.json by its path, or the run.json inside a run directory.
func readRun(_ path: String) throws(GateError) -> RunRecord {
    var isDirectory: ObjCBool = false
    let file = FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) && isDirectory.boolValue
        ? (path as NSString).appendingPathComponent("run.json") : path
    guard FileManager.default.fileExists(atPath: file) else {
        throw GateError(.input, "\(file): no such run.json; give a run.json that `strain run` wrote, or its directory")
    }
    do {
        return try RunRecordFile.read(from: file)
    } catch let error as RunRecordFile.VersionError {
        throw GateError(.input, error.description)
    } catch let error as RunRecordFile.LoadError {
        throw GateError(.input, error.description)
    } catch {
        throw GateError(.input, "\(file) is not a run.json this Strain can read: \(error)")
    }
}

/// Writes `data` to `path` atomically, or fails with the path named. A file of lines (all
/// but `.json`) gets no line that starts a workflow command: CI steps print these files.
func writeOutput(_ data: Data, to path: String) throws(GateError) {
    let data = path.hasSuffix(".json") ? data : Data(OneLine.withoutWorkflowCommands(String(decoding: data, as: UTF8.self)).utf8)
    do { try AtomicFile.write(data, to: path) } catch {
        throw GateError(.input, "cannot write \(path): \(error.reason)")
    }
}

/// `20261123-134502`, for default output directories.
func runTimestamp() -> String {
    let formatter = DateFormatter()
    formatter.dateFormat = "yyyyMMdd-HHmmss"
    formatter.timeZone = TimeZone(identifier: "UTC")
    return formatter.string(from: Date())
}
