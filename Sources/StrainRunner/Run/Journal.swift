import Foundation
import Glibc
import StrainKit
import StrainSuite

/// The first line of `trials.jsonl`: which plan the journal belongs to and how
/// the run was asked for, so `--resume` can rebuild the same plan and check it.
package struct JournalHeader: Codable, Sendable, Equatable {
    /// The journal format this Strain writes and reads.
    package static let currentVersion = 1
    /// The version of this journal's format; readers check it first.
    package var strainJournal: Int
    /// The plan's identity (`Plan.identity`), size and shard.
    package var plan: PlanRecord
    /// The suite file the run read.
    package var suite: String
    /// `--filter`, `--skip`, `--repetitions` and `--shard` as given.
    package var filters: [String]
    package var skips: [String]
    package var repetitions: Int?
    package var shard: String?
    package var startedAt: String
    /// `--jobs` and `--isolation` as the run was started, so a resumed run goes on
    /// the same way unless told otherwise (absent in older journals).
    package var jobs: Int?
    package var isolation: TrialIsolation?

    package init(plan: PlanRecord, suite: String, filters: [String], skips: [String], repetitions: Int?, shard: String?, startedAt: String,
                jobs: Int? = nil, isolation: TrialIsolation? = nil) {
        self.strainJournal = Self.currentVersion
        self.plan = plan
        self.suite = suite
        self.filters = filters
        self.skips = skips
        self.repetitions = repetitions
        self.shard = shard
        self.startedAt = startedAt
        self.jobs = jobs
        self.isolation = isolation
    }
}

extension JournalHeader {
    /// What is out of range in a header read back from a file, with the field and
    /// its range, or nil: a journal is input like a suite, and `--resume` takes its
    /// values as if given on the command line, so each has the command line's range.
    package var problem: String? {
        if let repetitions, !SuiteLimits.repetitions.contains(repetitions) {
            return "its header's repetitions \(repetitions) is out of range (\(SuiteLimits.repetitions.lowerBound) to \(SuiteLimits.repetitions.upperBound))"
        }
        if let jobs, !SuiteLimits.jobs.contains(jobs) {
            return "its header's jobs \(jobs) is out of range (\(SuiteLimits.jobs.lowerBound) to \(SuiteLimits.jobs.upperBound))"
        }
        if let shard, Shard(parsing: shard) == nil {
            return "its header's shard '\(String(shard.prefix(40)))' is not K/N with 1 ≤ K ≤ N ≤ \(Shard.maximumCount)"
        }
        // The plan's numbers have the same ranges as in a run.json.
        do {
            try plan.validateRanges(at: "plan")
        } catch {
            return "its header's \(error.description)"
        }
        return nil
    }
}

/// A journal that cannot be continued, with the reason.
package struct JournalError: Error, Sendable, CustomStringConvertible {
    package var path: String
    package var message: String
    package var description: String { "\(path): \(message)" }
}

/// Finished trials appended to `trials.jsonl` one line each, after a header line,
/// flushed to disk as each trial ends: a run that is killed keeps every finished trial.
///
/// Each line is one `write(2)` on a descriptor opened with `O_APPEND`, so a line is
/// never torn by another writer; a line cut short by a kill (the last one, with no
/// newline) is dropped when the journal is resumed.
///
/// Every line also goes to the runner's own copy, an unlinked file beside the journal
/// that no other process can name: the run's trials are read back from it, so a journal
/// deleted, replaced, truncated or overwritten in place while the run runs loses none.
package final class Journal {
    package let path: String
    /// The plan the journal belongs to; nil for a journal without one (bisect's probes).
    package let header: JournalHeader?
    /// The trials already in the journal when it was opened (resume), in journal order.
    package let finished: [TrialRecord]
    private let descriptor: Int32
    /// The runner's own copy of every byte written to the journal (see above).
    private let copy: Int32
    private let encoder = JSONEncoder()

    /// Starts a new journal, replacing any file at `path`.
    package init(creating path: String, header: JournalHeader) throws(JournalError) {
        self.path = path
        self.header = header
        self.finished = []
        // Read and write: the run reads its trials back through this descriptor (`readTrials`).
        descriptor = open(path, O_RDWR | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw JournalError(path: path, message: "cannot create the journal: \(String(cString: strerror(errno)))") }
        do {
            copy = try Self.privateCopy(beside: path, holding: Data())
        } catch {
            close(descriptor)
            throw error
        }
        encoder.outputFormatting = [.sortedKeys]
        guard let line = try? encoder.encode(header) else {
            throw JournalError(path: path, message: "cannot encode the journal's header")
        }
        try writeLine(line)
    }

    /// Opens (creating) a journal without a plan header and appends to it, as
    /// `strain bisect` journals its probes; such a journal cannot be resumed.
    package init(path: String) throws(JournalError) {
        self.path = path
        self.header = nil
        self.finished = []
        descriptor = open(path, O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw JournalError(path: path, message: "cannot open the journal: \(String(cString: strerror(errno)))") }
        do {
            copy = try Self.privateCopy(beside: path, holding: FileManager.default.contents(atPath: path) ?? Data())
        } catch {
            close(descriptor)
            throw error
        }
        encoder.outputFormatting = [.sortedKeys]
    }

    /// Opens an existing journal to continue it: reads its header and finished
    /// trials, drops a torn last line, and appends after the last whole one.
    package init(resuming path: String) throws(JournalError) {
        self.path = path
        guard let data = FileManager.default.contents(atPath: path) else {
            throw JournalError(path: path, message: "cannot read the journal")
        }
        let contents = try Self.parse(data, path: path)
        header = contents.header
        finished = contents.trials
        descriptor = open(path, O_RDWR | O_APPEND | O_CLOEXEC)
        guard descriptor >= 0 else { throw JournalError(path: path, message: "cannot open the journal for writing: \(String(cString: strerror(errno)))") }
        if contents.wholeBytes < data.count { _ = ftruncate(descriptor, off_t(contents.wholeBytes)) }
        do {
            copy = try Self.privateCopy(beside: path, holding: data.prefix(contents.wholeBytes))
        } catch {
            close(descriptor)
            throw error
        }
        encoder.outputFormatting = [.sortedKeys]
    }

    /// An unlinked file beside `path` holding `data`, opened to append: the runner's own
    /// copy of the journal, which no other process can name, delete or truncate.
    private static func privateCopy(beside path: String, holding data: Data) throws(JournalError) -> Int32 {
        let folder = (path as NSString).deletingLastPathComponent
        var template = Array(((folder.isEmpty ? "." : folder) + "/.trials-copy-XXXXXX").utf8CString)
        let fd = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        guard fd >= 0 else { throw JournalError(path: path, message: "cannot make the runner's own copy of the journal: \(String(cString: strerror(errno)))") }
        _ = template.withUnsafeBufferPointer { unlink($0.baseAddress!) }
        _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_APPEND)
        guard Self.writeAll([UInt8](data), to: fd) else {
            let reason = String(cString: strerror(errno))
            close(fd)
            throw JournalError(path: path, message: "cannot make the runner's own copy of the journal: \(reason)")
        }
        return fd
    }

    /// Writes every byte of `bytes` to `fd`, retrying short and interrupted writes.
    private static func writeAll(_ bytes: [UInt8], to fd: Int32) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let count = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + offset, $0.count - offset) }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { return false }
            offset += count
        }
        return true
    }

    /// A journal's header and whole trial lines; `wholeBytes` is where the last whole line ends.
    package static func parse(_ data: Data, path: String) throws(JournalError) -> (header: JournalHeader, trials: [TrialRecord], wholeBytes: Int) {
        let bytes = [UInt8](data)
        var lines: [ArraySlice<UInt8>] = []
        var start = 0
        for index in bytes.indices where bytes[index] == UInt8(ascii: "\n") {
            lines.append(bytes[start..<index])
            start = index + 1
        }
        let wholeBytes = start
        guard let first = lines.first else {
            throw JournalError(path: path, message: "the journal is empty (the run was stopped before its first line); start it again with --force")
        }
        struct Version: Decodable { var strainJournal: Int }
        guard let version = try? JSONDecoder().decode(Version.self, from: Data(first)) else {
            throw JournalError(path: path, message: "the first line is not a Strain journal header (a journal from an older Strain cannot be resumed); start again with --force")
        }
        guard version.strainJournal == JournalHeader.currentVersion else {
            throw JournalError(path: path, message: "journal version \(version.strainJournal) is not supported; this Strain resumes version \(JournalHeader.currentVersion)")
        }
        let header: JournalHeader
        do {
            header = try JSONDecoder().decode(JournalHeader.self, from: Data(first))
        } catch {
            throw JournalError(path: path, message: "the journal's header cannot be read: \(error)")
        }
        if let problem = header.problem {
            throw JournalError(path: path, message: "\(problem); the journal was changed by hand or damaged: start the run again with --force")
        }
        var trials: [TrialRecord] = []
        for (number, line) in lines.dropFirst().enumerated() where !line.isEmpty {
            let trial: TrialRecord
            do {
                trial = try JSONDecoder().decode(TrialRecord.self, from: Data(line))
            } catch {
                throw JournalError(path: path, message: "line \(number + 2) is not a trial record: \(error)")
            }
            // A journal's trials become run.json's: the same ranges as any record read.
            do {
                try trial.validateRanges(at: "line \(number + 2)")
            } catch {
                throw JournalError(path: path, message: "has a number out of range: \(error.description); the journal was changed by hand or damaged: start the run again with --force")
            }
            trials.append(trial)
        }
        return (header, trials, wholeBytes)
    }

    /// Every whole trial line the journal holds now, in journal order: what a run
    /// reads back at its end instead of keeping each record in memory as it runs.
    ///
    /// Read through the descriptor the run appends to, not by path: a journal deleted or
    /// replaced under a running runner (another process, a cleanup job) still holds, in
    /// the file the runner wrote, every trial it finished. `keepOnDisk` then puts it back.
    package func readTrials() throws(JournalError) -> [TrialRecord] {
        let data = try written()
        if header != nil { return try Self.parse(data, path: path).trials }
        var trials: [TrialRecord] = []
        for (number, line) in data.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: true).enumerated() {
            do {
                trials.append(try JSONDecoder().decode(TrialRecord.self, from: Data(line)))
            } catch {
                throw JournalError(path: path, message: "line \(number + 1) is not a trial record: \(error)")
            }
        }
        return trials
    }

    /// Every byte the runner wrote to this journal, read from its own copy.
    private func written() throws(JournalError) -> Data {
        var data = Data()
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let count = chunk.withUnsafeMutableBytes { pread(copy, $0.baseAddress, $0.count, off_t(data.count)) }
            if count < 0, errno == EINTR { continue }
            guard count >= 0 else { throw JournalError(path: path, message: "cannot read the journal back: \(String(cString: strerror(errno)))") }
            if count == 0 { return data }
            data.append(contentsOf: chunk[..<count])
        }
    }

    /// What happened to the file at `path` since the journal opened it, if anything:
    /// deleted, replaced by another file, or cut or grown in place (its size is not what
    /// the runner wrote). nil while the path still names this journal as written.
    package var changeOnDisk: String? {
        var mine = stat()
        var there = stat()
        var own = stat()
        guard fstat(descriptor, &mine) == 0 else { return nil }
        guard stat(path, &there) == 0 else { return "was deleted during the run" }
        guard mine.st_dev == there.st_dev && mine.st_ino == there.st_ino else { return "was replaced by another file during the run" }
        guard fstat(copy, &own) == 0, own.st_size != mine.st_size else { return nil }
        return "was cut or overwritten in place during the run"
    }

    /// Puts the runner's copy back at `path` when the journal was deleted, replaced or
    /// changed in place during the run, so `--resume` finds every trial the run finished; nil when
    /// nothing changed, else what changed.
    /// - Throws: `JournalError` when it cannot be written back.
    @discardableResult
    package func keepOnDisk() throws(JournalError) -> String? {
        guard let change = changeOnDisk else { return nil }
        let data = try written()
        do {
            try AtomicFile.write(data, to: path)
        } catch {
            throw JournalError(path: path, message: "\(change), and could not be written back from the runner's own copy: \(error)")
        }
        writtenBack = change
        return change
    }

    /// What `keepOnDisk` found and put right (`was deleted during the run`), nil if nothing.
    package private(set) var writtenBack: String?

    package func append(_ record: TrialRecord) throws(JournalError) {
        let line: Data
        do { line = try encoder.encode(record) } catch {
            throw JournalError(path: path, message: "cannot encode trial \(record.id): \(error)")
        }
        try writeLine(line)
    }

    /// One write(2) of the line and its newline, then fsync.
    private func writeLine(_ line: Data) throws(JournalError) {
        var bytes = [UInt8](line)
        bytes.append(UInt8(ascii: "\n"))
        var written = -1
        repeat {
            written = bytes.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
        } while written < 0 && errno == EINTR
        guard written == bytes.count else {
            throw JournalError(path: path, message: written < 0 ? "cannot append: \(String(cString: strerror(errno)))" : "a short write (\(written) of \(bytes.count) bytes; is the disk full?)")
        }
        guard Self.writeAll(bytes, to: copy) else {
            throw JournalError(path: path, message: "cannot append to the runner's own copy: \(String(cString: strerror(errno)))")
        }
        guard fsync(descriptor) == 0 else { throw JournalError(path: path, message: "cannot flush: \(String(cString: strerror(errno)))") }
    }

    deinit {
        close(descriptor)
        close(copy)
    }
}
