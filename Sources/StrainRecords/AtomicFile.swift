import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Writes a whole file or nothing: a temporary file beside the destination,
/// fsynced, then renamed over it, then the folder fsynced. A reader sees the old
/// file or the new one, never a torn one, even if the writer is killed midway.
public enum AtomicFile {
    /// An error of the write, with the path and the errno.
    public struct WriteError: Error, Sendable, CustomStringConvertible {
        public var path: String
        public var errno: Int32
        public var step: String
        public var description: String { "could not \(step) \(path): \(String(cString: strerror(errno)))" }
    }

    public static func write(_ data: Data, to path: String) throws(WriteError) {
        let folder = (path as NSString).deletingLastPathComponent
        let name = (path as NSString).lastPathComponent
        let temporary = ((folder.isEmpty ? "." : folder) as NSString)
            .appendingPathComponent(".\(name).\(getpid()).\(UInt32.random(in: 0...UInt32.max)).tmp")
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw WriteError(path: path, errno: errno, step: "create a temporary file for") }
        var failure: WriteError?
        data.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let written = Glibc.write(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    failure = WriteError(path: path, errno: errno, step: "write")
                    return
                }
                offset += written
            }
        }
        if failure == nil, fsync(descriptor) != 0 { failure = WriteError(path: path, errno: errno, step: "flush") }
        close(descriptor)
        if failure == nil, rename(temporary, path) != 0 { failure = WriteError(path: path, errno: errno, step: "replace") }
        if let failure {
            unlink(temporary)
            throw failure
        }
        // The rename itself reaches the disk with the folder.
        let folderDescriptor = open(folder.isEmpty ? "." : folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if folderDescriptor >= 0 {
            fsync(folderDescriptor)
            close(folderDescriptor)
        }
    }

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
