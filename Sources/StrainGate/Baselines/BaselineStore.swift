import Foundation
import StrainRecords
#if canImport(Glibc)
import Glibc
#endif

/// A stored baseline: a run, its name, and the δ calibrated for cross-run gates.
package struct BaselineFile: Codable, Sendable {
    package static let currentVersion = 1
    package var baselineVersion: Int
    package var name: String
    /// ISO 8601 time it was saved.
    package var savedAt: String
    /// The run.json it was saved from.
    package var source: String
    /// δ per row-metric (`TrialKey.canonicalText|metric`) from A/A runs of the same
    /// code on other runs (`strain gate --calibrate`): the largest seen.
    package var calibration: [String: Double]?
    /// How many A/A runs the calibration has seen.
    package var calibrationRuns: Int?
    /// The run itself: its trials, suite, machine fingerprint and git commit.
    package var run: RunRecord

    package init(name: String, savedAt: String, source: String, run: RunRecord) {
        baselineVersion = Self.currentVersion
        self.name = name
        self.savedAt = savedAt
        self.source = source
        self.run = run
    }
}

/// Baselines kept as `NAME.json` in one directory (`Reports/baselines/` by default),
/// written atomically and never replaced without `force`.
package struct BaselineStore: Sendable {
    package var directory: String

    package static let defaultDirectory = "Reports/baselines"

    package init(directory: String = BaselineStore.defaultDirectory) {
        self.directory = directory
    }

    /// Names are file names: letters, digits, `.`, `_` and `-`, at most 100.
    package static func validate(name: String) throws(GateError) {
        let allowed = name.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "._-".contains($0)) }
        guard !name.isEmpty, name.count <= 100, allowed, !name.hasPrefix("."), !name.hasPrefix("-") else {
            throw GateError(.input, "baseline name '\(name)' is not valid; use 1 to 100 letters, digits, '.', '_' or '-', not starting with '.' or '-' (e.g. main)")
        }
    }

    package func path(of name: String) -> String { (directory as NSString).appendingPathComponent("\(name).json") }

    /// Saves `run` as `name`; refuses to replace an existing baseline unless `force`.
    @discardableResult
    package func save(_ run: RunRecord, name: String, source: String, force: Bool, keepingCalibration: Bool = false) throws(GateError) -> String {
        try Self.validate(name: name)
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        } catch {
            throw GateError(.input, "\(directory): cannot create the baselines directory: \(error.localizedDescription)")
        }
        var file = BaselineFile(name: name, savedAt: Date().formatted(.iso8601), source: source, run: run)
        if keepingCalibration, let old = try? load(name) {
            file.calibration = old.calibration
            file.calibrationRuns = old.calibrationRuns
        }
        try write(file, force: force)
        return path(of: name)
    }

    /// Writes a baseline file as it is (used to record a calibration).
    package func write(_ file: BaselineFile, force: Bool) throws(GateError) {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        let data: Data
        do { data = try encoder.encode(file) } catch { throw GateError(.incomplete, "could not encode baseline \(file.name): \(error)") }
        do {
            try AtomicFile.write(data, to: path(of: file.name), replacing: force)
        } catch {
            if error.exists {
                throw GateError(.input, "baseline '\(file.name)' exists already (\(path(of: file.name))); pass --force to replace it, or choose another --name")
            }
            throw GateError(.input, "cannot write \(error.path): \(error.reason)")
        }
    }

    /// Replaces `old` with `new` (a calibration), unless the stored file changed since
    /// `old` was read: another save or calibration in between is refused, not lost.
    package func replace(_ old: BaselineFile, with new: BaselineFile) throws(GateError) {
        let lockPath = (directory as NSString).appendingPathComponent(".\(new.name).lock")
        let descriptor = open(lockPath, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw GateError(.input, "\(lockPath): cannot open the baseline's lock") }
        defer { close(descriptor) }
        flock(descriptor, LOCK_EX)
        let current = try load(new.name)
        guard current.savedAt == old.savedAt, current.calibrationRuns == old.calibrationRuns else {
            throw GateError(.input, "baseline \(new.name) changed while it was being calibrated (saved or calibrated again); calibrate once more")
        }
        try write(new, force: true)
    }

    /// The baselines stored, by name.
    package func list() -> [BaselineFile] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        return names.filter { $0.hasSuffix(".json") && !$0.hasPrefix(".") }.sorted().compactMap { try? load(String($0.dropLast(5))) }
    }

    package func load(_ name: String) throws(GateError) -> BaselineFile {
        try Self.read(path: path(of: name), name: name)
    }

    package func delete(_ name: String) throws(GateError) {
        try Self.validate(name: name)
        guard FileManager.default.fileExists(atPath: path(of: name)) else {
            throw GateError(.input, "no baseline named '\(name)' in \(directory); `strain baseline list` shows them")
        }
        do { try FileManager.default.removeItem(atPath: path(of: name)) } catch {
            throw GateError(.input, "cannot delete \(path(of: name)): \(error.localizedDescription)")
        }
    }

    /// A baseline by name (in this store) or by path: a baseline file or a plain run.json.
    package func resolve(_ reference: String) throws(GateError) -> BaselineFile {
        if reference.contains("/") || reference.hasSuffix(".json") {
            return try Self.read(path: reference, name: nil)
        }
        try Self.validate(name: reference)
        guard FileManager.default.fileExists(atPath: path(of: reference)) else {
            let known = list().map(\.name)
            throw GateError(.input, "no baseline named '\(reference)' in \(directory)\(known.isEmpty ? "; save one with `strain baseline save RUN.json --name \(reference)`" : "; known: \(known.joined(separator: ", "))")")
        }
        return try load(reference)
    }

    /// Reads a baseline file, or a run.json as an unnamed baseline, checking versions first.
    static func read(path: String, name: String?) throws(GateError) -> BaselineFile {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw GateError(.input, "\(path): no such baseline or run.json (or it cannot be read)")
        }
        struct Header: Decodable {
            struct Run: Decodable { var schemaVersion: Int }
            var baselineVersion: Int?
            var schemaVersion: Int?
            var run: Run?
        }
        guard let header = try? JSONDecoder().decode(Header.self, from: data) else {
            throw GateError(.input, "\(path) is not a Strain baseline or run.json (not a JSON object with a schema version)")
        }
        if let version = header.baselineVersion {
            guard version == BaselineFile.currentVersion else {
                throw GateError(.input, "\(path): baseline version \(version) is not supported; this Strain reads version \(BaselineFile.currentVersion)")
            }
            let schema = header.run?.schemaVersion ?? 0
            guard RunRecord.supportedSchemaVersions.contains(schema) else {
                throw GateError(.input, "\(path): its run has schema version \(schema); this Strain reads \(RunRecord.supportedSchemaVersions.lowerBound) to \(RunRecord.supportedSchemaVersions.upperBound)")
            }
            let file: BaselineFile
            do { file = try JSONDecoder().decode(BaselineFile.self, from: data) } catch {
                throw GateError(.input, "\(path) is not a baseline this Strain can read: \(error)")
            }
            do { try file.run.validateRanges() } catch {
                throw GateError(.input, "\(path): has a number out of range: run.\(error.description); save the baseline again from a run.json that `strain run` wrote")
            }
            return file
        }
        let run: RunRecord
        do { run = try RunRecordFile.read(from: path) } catch let error as RunRecordFile.VersionError {
            throw GateError(.input, error.description)
        } catch let error as RunRecordFile.LoadError {
            throw GateError(.input, error.description)
        } catch {
            throw GateError(.input, "\(path) is not a run.json this Strain can read: \(error)")
        }
        return BaselineFile(name: name ?? (path as NSString).lastPathComponent, savedAt: run.finishedAt, source: path, run: run)
    }
}
