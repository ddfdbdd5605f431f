import Foundation
import StrainKit
import StrainRunner

/// The built `strain` binary, run as a user would, with a time bound.
struct StrainBinary {
    struct Result {
        var status: Int32
        var stdout: String
        var stderr: String
    }

    /// `strain` beside the test bundle in the build folder.
    static var path: String {
        URL(fileURLWithPath: currentExecutablePath()).deletingLastPathComponent().appendingPathComponent("strain").path
    }

    /// Runs `strain ARGUMENTS`; kills it past `timeout` seconds.
    static func run(_ arguments: [String], timeout: Double = 120, environment: [String: String] = [:]) throws -> Result {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        if !environment.isEmpty {
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        }
        let output = Pipe()
        let error = Pipe()
        process.standardOutput = output
        process.standardError = error
        try process.run()
        let killer = DispatchWorkItem { if process.isRunning { process.terminate() } }
        DispatchQueue.global().asyncAfter(deadline: .now() + timeout, execute: killer)
        let outData = output.fileHandleForReading.readDataToEndOfFile()
        let errData = error.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        killer.cancel()
        return Result(status: process.terminationStatus, stdout: String(decoding: outData, as: UTF8.self), stderr: String(decoding: errData, as: UTF8.self))
    }

    /// Writes `yaml` as a suite in a new temporary folder, runs it, and reads run.json.
    static func runSuite(_ yaml: String, timeout: Double = 120, environment: [String: String] = [:]) throws -> (Result, RunRecord?, String) {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("strain-test-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let suite = (folder as NSString).appendingPathComponent("suite.yaml")
        try yaml.write(toFile: suite, atomically: true, encoding: .utf8)
        let out = (folder as NSString).appendingPathComponent("out")
        let result = try run(["run", suite, "--out", out], timeout: timeout, environment: environment)
        let record = try? RunRecordFile.read(from: (out as NSString).appendingPathComponent("run.json"))
        return (result, record, out)
    }
}

extension RunRecord {
    func trials(_ strategy: String, profile: String = "linux") -> [TrialRecord] {
        trials.filter { $0.strategy.description == strategy && $0.profile.rawValue == profile }
    }
}

/// A tool found on PATH (`/usr/bin/env NAME …`), run to its end: its status and
/// its standard output and error together.
enum Tool {
    static func run(_ arguments: [String], directory: String? = nil) throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = arguments
        if let directory { process.currentDirectoryURL = URL(fileURLWithPath: directory) }
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return (process.terminationStatus, output)
    }
}

/// Checks a run.json against the committed JSON Schema with Python's
/// `jsonschema` (installed by .ci/run), so the schema and the writer cannot drift apart.
enum SchemaCheck {
    static var schemaPath: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Sources/StrainRecords/RunRecord.schema.json").path
    }

    static func validate(_ runJSON: String) throws -> (valid: Bool, output: String) {
        let (status, output) = try Tool.run(["python3", "-c", """
            import json, sys, jsonschema
            schema = json.load(open(sys.argv[1]))
            jsonschema.Draft202012Validator.check_schema(schema)
            jsonschema.Draft202012Validator(schema).validate(json.load(open(sys.argv[2])))
            """, schemaPath, runJSON])
        return (status == 0, output)
    }
}

/// A `strain` started in the background, its output in files, so a test can
/// signal it mid-run; `finish` waits with a bound and kills it past that.
final class BackgroundStrain {
    let process = Process()
    let stdoutPath: String
    let stderrPath: String

    /// `shellPrefix`: shell commands run first, in the process that then becomes
    /// strain (`exec 7</dev/null` leaves it a descriptor it did not open).
    init(_ arguments: [String], in folder: String, shellPrefix: String? = nil) throws {
        stdoutPath = (folder as NSString).appendingPathComponent("stdout-\(UUID().uuidString)")
        stderrPath = (folder as NSString).appendingPathComponent("stderr-\(UUID().uuidString)")
        _ = FileManager.default.createFile(atPath: stdoutPath, contents: nil)
        _ = FileManager.default.createFile(atPath: stderrPath, contents: nil)
        if let shellPrefix {
            process.executableURL = URL(fileURLWithPath: "/bin/sh")
            process.arguments = ["-c", shellPrefix + "; exec \"$0\" \"$@\"", StrainBinary.path] + arguments
        } else {
            process.executableURL = URL(fileURLWithPath: StrainBinary.path)
            process.arguments = arguments
        }
        process.currentDirectoryURL = URL(fileURLWithPath: folder)
        process.standardOutput = FileHandle(forWritingAtPath: stdoutPath)
        process.standardError = FileHandle(forWritingAtPath: stderrPath)
        try process.run()
    }

    var pid: Int32 { process.processIdentifier }

    /// The pids of the runner's trial children (its trial server left out),
    /// waiting up to `seconds` for one to appear.
    func children(within seconds: Double = 20) -> [Int32] {
        let giveUp = Date().addingTimeInterval(seconds)
        while Date() < giveUp {
            let pids = allChildren().filter { !Processes.isTrialServer($0) }
            if !pids.isEmpty { return pids }
            usleep(20_000)
        }
        return []
    }

    /// The runner's trial server, waiting up to `seconds` for it to appear.
    func trialServer(within seconds: Double = 20) -> Int32? {
        let giveUp = Date().addingTimeInterval(seconds)
        while Date() < giveUp {
            if let server = allChildren().first(where: Processes.isTrialServer) { return server }
            usleep(5_000)
        }
        return nil
    }

    private func allChildren() -> [Int32] {
        let text = (try? String(contentsOfFile: "/proc/\(pid)/task/\(pid)/children", encoding: .utf8)) ?? ""
        return text.split(separator: " ").compactMap { Int32($0) }.filter(Processes.isAlive)
    }

    /// Waits until stdout contains `text` (or `seconds` pass).
    @discardableResult func waitForOutput(_ text: String, seconds: Double = 30) -> Bool {
        let giveUp = Date().addingTimeInterval(seconds)
        while Date() < giveUp {
            if (try? String(contentsOfFile: stdoutPath, encoding: .utf8))?.contains(text) == true { return true }
            usleep(20_000)
        }
        return false
    }

    func signal(_ number: Int32) { kill(pid, number) }

    /// Waits for the runner to exit, killing it after `timeout` seconds.
    func finish(timeout: Double = 60) -> StrainBinary.Result {
        let giveUp = Date().addingTimeInterval(timeout)
        while process.isRunning && Date() < giveUp { usleep(20_000) }
        if process.isRunning { kill(pid, SIGKILL) }
        process.waitUntilExit()
        let out = (try? String(contentsOfFile: stdoutPath, encoding: .utf8)) ?? ""
        let err = (try? String(contentsOfFile: stderrPath, encoding: .utf8)) ?? ""
        let status = process.terminationReason == .uncaughtSignal ? 128 + process.terminationStatus : process.terminationStatus
        return StrainBinary.Result(status: status, stdout: out, stderr: err)
    }
}

/// Processes as the kernel sees them.
enum Processes {
    /// Whether `pid` is alive: it exists and is not a zombie.
    static func isAlive(_ pid: Int32) -> Bool {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { return false }
        let state = stat[stat.index(close, offsetBy: 2)]
        return state != "Z" && state != "X"
    }

    /// Whether `pid` is a trial server, by its command line (`strain _trial-server`;
    /// a trial copied from it renames itself `strain _trial` first thing).
    static func isTrialServer(_ pid: Int32) -> Bool {
        guard let bytes = FileManager.default.contents(atPath: "/proc/\(pid)/cmdline") else { return false }
        let arguments = bytes.split(separator: 0).map { String(decoding: $0, as: UTF8.self) }
        return arguments.count == 2 && arguments[1] == "_trial-server"
    }

    /// Waits up to `seconds` for `pid` to be gone; true when it is.
    static func waitUntilGone(_ pid: Int32, seconds: Double = 10) -> Bool {
        let giveUp = Date().addingTimeInterval(seconds)
        while Date() < giveUp {
            if !isAlive(pid) { return true }
            usleep(20_000)
        }
        return !isAlive(pid)
    }

    /// Every live pid in process group `group`.
    static func members(ofGroup group: Int32) -> [Int32] {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return entries.compactMap { Int32($0) }.filter { pid in
            guard isAlive(pid), let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
                  let close = stat.lastIndex(of: ")") else { return false }
            let fields = stat[stat.index(close, offsetBy: 2)...].split(separator: " ")
            return fields.count > 2 && Int32(fields[2]) == group
        }
    }
}

/// A new temporary folder for one test.
func temporaryFolder() throws -> String {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("strain-test-\(UUID().uuidString)").path
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    return folder
}
