import Foundation

/// Reads and writes `run.json`, checking the schema version first.
public enum RunRecordFile {
    /// A run.json written in a schema version this Strain does not read.
    public struct VersionError: Error, CustomStringConvertible {
        /// The file read.
        public var path: String
        /// The version it declares.
        public var found: Int
        /// What was found, and which versions this Strain reads.
        public var description: String {
            "\(path): run.json schema version \(found) is not supported; this Strain reads versions \(RunRecord.supportedSchemaVersions.lowerBound) to \(RunRecord.supportedSchemaVersions.upperBound)"
        }
    }

    /// Writes run.json atomically (temporary file, fsync, rename).
    public static func write(_ run: RunRecord, to path: String) throws {
        try AtomicFile.write(try encode(run), to: path)
    }

    /// run.json's bytes: pretty, with sorted keys, so two renderings compare.
    public static func encode(_ run: RunRecord) throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return try encoder.encode(run)
    }

    /// Reads the run.json at `path`: its version first, then the record.
    ///
    /// - Throws: `VersionError` for an unsupported version, `LoadError` for a number out of range, a decoding error for a file that cannot be decoded.
    public static func read(from path: String) throws -> RunRecord {
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        let versioned = try JSONDecoder().decode(Versioned.self, from: data)
        guard let version = versioned.schemaVersion else {
            throw DecodingError.keyNotFound(Versioned.CodingKeys.schemaVersion, .init(codingPath: [], debugDescription: "run.json has no schemaVersion"))
        }
        guard let record = versioned.record else { throw VersionError(path: path, found: version) }
        return try checked(record, from: path)
    }

    /// The schema version, then the record when that version is one this Strain
    /// reads, from one parse of the file (a second parse of a large record cost
    /// as much memory as the first).
    struct Versioned: Decodable {
        var schemaVersion: Int?
        var record: RunRecord?

        enum CodingKeys: String, CodingKey { case schemaVersion }

        init(from decoder: any Decoder) throws {
            schemaVersion = try decoder.container(keyedBy: CodingKeys.self).decodeIfPresent(Int.self, forKey: .schemaVersion)
            guard let schemaVersion, RunRecord.supportedSchemaVersions.contains(schemaVersion) else { return }
            record = try RunRecord(from: decoder)
        }
    }

    /// `record` when every number in it is in range (`RecordRanges`), else a
    /// `LoadError` naming the file, the field's path and the range.
    static func checked(_ record: RunRecord, from path: String) throws(LoadError) -> RunRecord {
        do { try record.validateRanges() } catch {
            throw LoadError(path: path, message: "has a number out of range: \(error.description); give a run.json that `strain run` wrote")
        }
        return record
    }
}

extension RunRecordFile {
    /// Why a run.json could not be loaded, worded for the user; every case is an input error.
    public struct LoadError: Error, Sendable, CustomStringConvertible {
        /// The file.
        public var path: String
        /// What is wrong with it.
        public var message: String
        /// `PATH: MESSAGE`.
        public var description: String { "\(path): \(message)" }
    }

    /// Reads a run.json a user named: a regular file, JSON, a supported schema
    /// version, then the record, each failure with its own message.
    public static func load(from path: String) throws(LoadError) -> RunRecord {
        let data: Data
        do {
            data = try InputFile.read(path, what: "a run.json that `strain run` wrote", limit: 1 << 30)
        } catch {
            throw LoadError(path: path, message: error.message)
        }
        // A record that reads is parsed once; the steps below, each parsing the
        // file again, only say what is wrong with one that does not.
        if let record = (try? JSONDecoder().decode(Versioned.self, from: data))?.record {
            return try checked(record, from: path)
        }
        do {
            _ = try JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed])
        } catch {
            let detail = ((error as NSError).userInfo[NSDebugDescriptionErrorKey] as? String) ?? ""
            if detail.contains("not representable") {
                // Well-formed JSON whose number no Swift number holds (1e400).
                throw LoadError(path: path, message: "is JSON with a number out of range (\(detail.replacingOccurrences(of: " in Swift.", with: ""))); give a run.json that `strain run` wrote")
            }
            throw LoadError(path: path, message: "is not valid JSON\(detail.isEmpty ? "" : " (\(detail.trimmingCharacters(in: CharacterSet(charactersIn: "."))))"); give a run.json that `strain run` wrote")
        }
        struct Version: Decodable { var schemaVersion: Int? }
        guard let version = try? JSONDecoder().decode(Version.self, from: data) else {
            throw LoadError(path: path, message: "is JSON but not a JSON object with a whole-number `schemaVersion`; give a run.json that `strain run` wrote")
        }
        guard let found = version.schemaVersion else {
            throw LoadError(path: path, message: "is JSON but has no `schemaVersion`, so it is not a run.json")
        }
        guard RunRecord.supportedSchemaVersions.contains(found) else {
            throw LoadError(path: path, message: VersionError(path: path, found: found).description.dropFirst(path.count + 2).description)
        }
        let record: RunRecord
        do {
            record = try JSONDecoder().decode(RunRecord.self, from: data)
        } catch let error as DecodingError {
            throw LoadError(path: path, message: "is valid JSON but not a run.json Strain can read: \(describe(error))")
        } catch {
            throw LoadError(path: path, message: "is valid JSON but not a run.json Strain can read: \(error)")
        }
        return try checked(record, from: path)
    }

    /// A decoding error as `at trials[3].metrics.wallSeconds: …`.
    static func describe(_ error: DecodingError) -> String {
        func place(_ path: [any CodingKey]) -> String {
            var text = ""
            for key in path {
                if let index = key.intValue { text += "[\(index)]" } else { text += (text.isEmpty ? "" : ".") + key.stringValue }
            }
            return text.isEmpty ? "the top level" : text
        }
        switch error {
        case .typeMismatch(let type, let context):
            return "at \(place(context.codingPath)): expected \(type) (\(context.debugDescription))"
        case .valueNotFound(let type, let context):
            return "at \(place(context.codingPath)): a \(type) is missing"
        case .keyNotFound(let key, let context):
            return "at \(place(context.codingPath + [key])): the key is missing"
        case .dataCorrupted(let context):
            return "at \(place(context.codingPath)): \(context.debugDescription)"
        @unknown default:
            return "\(error)"
        }
    }
}
