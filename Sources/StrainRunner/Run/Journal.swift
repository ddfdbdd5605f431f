import Foundation
import StrainKit

/// Finished trials appended to `trials.jsonl` one line each, flushed to disk
/// as each trial ends: a run that is interrupted keeps every finished trial.
public final class Journal {
    public let path: String
    private let handle: FileHandle
    private let encoder = JSONEncoder()

    /// Opens (creating) the journal; throws at setup, not mid-run.
    public init(path: String) throws {
        self.path = path
        if !FileManager.default.fileExists(atPath: path) {
            guard FileManager.default.createFile(atPath: path, contents: nil) else {
                throw CocoaError(.fileWriteNoPermission, userInfo: [NSFilePathErrorKey: path])
            }
        }
        handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        try handle.seekToEnd()
        encoder.outputFormatting = [.sortedKeys]
    }

    public func append(_ record: TrialRecord) throws {
        var line = try encoder.encode(record)
        line.append(UInt8(ascii: "\n"))
        try handle.write(contentsOf: line)
        try handle.synchronize()
    }

    deinit { try? handle.close() }
}
