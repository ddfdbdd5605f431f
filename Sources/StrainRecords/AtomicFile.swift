import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Writes a file so that a reader sees the old contents or the new, never a torn
/// one: a temporary file beside it, fsynced, then renamed over it.
public enum AtomicFile {
    /// Why a write failed, with the path.
    public struct WriteError: Error, Sendable, CustomStringConvertible {
        /// The file that could not be written.
        public var path: String
        /// Why, worded for the user.
        public var reason: String
        /// The file exists and the caller asked not to replace it.
        public var exists: Bool
        /// `PATH: REASON`.
        public var description: String { "\(path): \(reason)" }
    }

    /// Writes `data` to `path`. With `replacing: false` an existing file is left
    /// alone and the write fails with `exists` set, atomically (no check-then-write race).
    public static func write(_ data: Data, to path: String, replacing: Bool = true) throws(WriteError) {
        let directory = (path as NSString).deletingLastPathComponent
        let temporary = (directory.isEmpty ? "." : directory) + "/.\((path as NSString).lastPathComponent).tmp-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw WriteError(path: path, reason: String(cString: strerror(errno)), exists: false) }
        var written = 0
        let failure: String? = data.withUnsafeBytes { buffer -> String? in
            while written < buffer.count {
                let result = systemWrite(descriptor, buffer.baseAddress! + written, buffer.count - written)
                if result < 0 {
                    if errno == EINTR { continue }
                    return String(cString: strerror(errno))
                }
                written += result
            }
            return fsync(descriptor) == 0 ? nil : String(cString: strerror(errno))
        }
        close(descriptor)
        if let failure {
            unlink(temporary)
            throw WriteError(path: path, reason: failure, exists: false)
        }
        if replacing {
            guard rename(temporary, path) == 0 else {
                let reason = String(cString: strerror(errno))
                unlink(temporary)
                throw WriteError(path: path, reason: reason, exists: false)
            }
        } else {
            // link(2) fails with EEXIST rather than replace: the no-overwrite check and the write are one step.
            let linked = link(temporary, path) == 0
            let code = errno
            unlink(temporary)
            guard linked else {
                throw WriteError(path: path, reason: code == EEXIST ? "exists already" : String(cString: strerror(code)), exists: code == EEXIST)
            }
        }
        let directoryDescriptor = open(directory.isEmpty ? "." : directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if directoryDescriptor >= 0 {
            fsync(directoryDescriptor)
            close(directoryDescriptor)
        }
    }
}

#if canImport(Glibc)
private let systemWrite = Glibc.write
#elseif canImport(Darwin)
private let systemWrite = Darwin.write
#endif

extension AtomicFile {
    /// The canonical path of an existing file (symbolic links and `..` resolved), nil if it does not exist.
    public static func canonicalPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    /// Whether two paths name the same file (same device and inode), also through links.
    public static func sameFile(_ first: String, _ second: String) -> Bool {
        var a = stat(), b = stat()
        guard stat(first, &a) == 0, stat(second, &b) == 0 else { return false }
        return a.st_dev == b.st_dev && a.st_ino == b.st_ino
    }
}
