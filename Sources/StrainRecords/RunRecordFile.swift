import Foundation

/// Reads and writes `run.json`, checking the schema version first.
public enum RunRecordFile {
    public struct VersionError: Error, CustomStringConvertible {
        public var path: String
        public var found: Int
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

    public static func read(from path: String) throws -> RunRecord {
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        struct Version: Decodable { var schemaVersion: Int }
        let version = try JSONDecoder().decode(Version.self, from: data).schemaVersion
        guard RunRecord.supportedSchemaVersions.contains(version) else { throw VersionError(path: path, found: version) }
        return try JSONDecoder().decode(RunRecord.self, from: data)
    }
}
