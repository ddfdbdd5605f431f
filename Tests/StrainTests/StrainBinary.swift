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

/// Checks a run.json against the committed JSON Schema with Python's
/// `jsonschema` (installed by .ci/run), so the schema and the writer cannot drift apart.
enum SchemaCheck {
    static var schemaPath: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Sources/StrainRecords/RunRecord.schema.json").path
    }

    static func validate(_ runJSON: String) throws -> (valid: Bool, output: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", """
            import json, sys, jsonschema
            schema = json.load(open(sys.argv[1]))
            jsonschema.Draft202012Validator.check_schema(schema)
            jsonschema.Draft202012Validator(schema).validate(json.load(open(sys.argv[2])))
            """, schemaPath, runJSON]
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return (process.terminationStatus == 0, output)
    }
}
