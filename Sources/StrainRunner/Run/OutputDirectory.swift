import Foundation
import Glibc

/// A mistake about `--out` or `--resume`, found before any trial starts.
package struct OutputDirectoryError: Error, Sendable, CustomStringConvertible {
    package var path: String
    package var message: String
    package var description: String { "\(path): \(message)" }
}

/// The folder a run writes into, held under an exclusive lock for the run's
/// whole life, so two runners never write one journal.
///
/// The lock is `flock` on `.strain.lock` inside the folder: the kernel drops it
/// when the runner dies, even by SIGKILL, so a killed run can be resumed at once.
package final class OutputDirectory: Sendable {
    /// What the runner means to do with what the folder already holds.
    package enum Mode: Sendable {
        /// A new run: the folder must not hold another run's journal or run.json.
        case fresh
        /// Continue the run whose journal the folder holds.
        case resume
        /// Replace whatever run the folder holds.
        case force
    }

    package let path: String
    private let lockDescriptor: Int32

    package var journalPath: String { (path as NSString).appendingPathComponent("trials.jsonl") }
    package var runJSONPath: String { (path as NSString).appendingPathComponent("run.json") }
    static let lockName = ".strain.lock"

    /// Checks, creates and locks the folder; every refusal is an `OutputDirectoryError`.
    package init(path: String, mode: Mode) throws(OutputDirectoryError) {
        func refuse(_ message: String) -> OutputDirectoryError { OutputDirectoryError(path: path, message: message) }
        guard !path.isEmpty else { throw refuse("an empty path; give a folder, e.g. --out Reports/mine") }
        guard path != "-" else { throw refuse("`-` names standard output, but a run writes a folder of files; give a folder, e.g. --out Reports/mine") }
        var info = stat()
        if stat(path, &info) == 0 {
            guard info.st_mode & S_IFMT == S_IFDIR else { throw refuse("exists and is not a folder; give a folder for run.json, trials.jsonl and the reports") }
        } else if mode == .resume {
            throw refuse("no such folder to resume; give the --out folder of a run that was stopped")
        } else {
            if let code = Self.makeFolders(path) {
                throw refuse("cannot create the folder (\(String(cString: strerror(code)))); give a folder you can write to")
            }
        }
        guard access(path, W_OK | X_OK) == 0 else { throw refuse("cannot write into the folder (\(String(cString: strerror(errno)))); give a folder you can write to") }
        let lockPath = (path as NSString).appendingPathComponent(Self.lockName)
        let descriptor = open(lockPath, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw refuse("cannot create its lock file (\(String(cString: strerror(errno))))") }
        guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
            let holder = Self.lockHolder(descriptor)
            close(descriptor)
            throw refuse("another strain run\(holder.map { " (pid \($0))" } ?? "") is writing into this folder; wait for it, or give another --out")
        }
        _ = ftruncate(descriptor, 0)
        let pid = Array("\(getpid())\n".utf8)
        _ = pid.withUnsafeBytes { pwrite(descriptor, $0.baseAddress, $0.count, 0) }
        lockDescriptor = descriptor
        self.path = path

        let holdsJournal = FileManager.default.fileExists(atPath: journalPath)
        let holdsRun = FileManager.default.fileExists(atPath: runJSONPath)
        switch mode {
        case .fresh where holdsJournal || holdsRun:
            close(descriptor)
            throw refuse("holds another run (\(holdsJournal ? "trials.jsonl" : "run.json")); continue it with --resume \(path), replace it with --force, or give another --out")
        case .resume where !holdsJournal:
            close(descriptor)
            throw refuse("holds no trials.jsonl to resume; start the run with --out \(path) instead")
        case .force:
            for file in [journalPath, runJSONPath] { unlink(file) }
        default:
            break
        }
    }

    deinit { close(lockDescriptor) }

    private static func lockHolder(_ descriptor: Int32) -> Int? {
        var buffer = [UInt8](repeating: 0, count: 32)
        let count = pread(descriptor, &buffer, buffer.count, 0)
        guard count > 0 else { return nil }
        return Int(String(decoding: buffer[0..<count], as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))
    }

    /// `mkdir -p`; the errno of the first failure, or nil.
    package static func makeFolders(_ path: String) -> Int32? {
        var built = path.hasPrefix("/") ? "/" : ""
        for component in path.split(separator: "/") {
            built += (built.isEmpty || built.hasSuffix("/") ? "" : "/") + component
            if mkdir(built, 0o755) != 0, errno != EEXIST { return errno }
        }
        return nil
    }
}
