import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Reads a file a user named, refusing what is not a regular file with its own
/// message (a folder, a FIFO that would block, a device) before opening it.
public enum InputFile {
    /// Why a named file cannot be read, worded for the user.
    public struct Problem: Error, Sendable, CustomStringConvertible {
        /// The file named.
        public var path: String
        /// What is wrong, and what to do.
        public var message: String
        /// `PATH: MESSAGE`.
        public var description: String { "\(path): \(message)" }
    }

    /// The bytes of the regular file at `path`, at most `limit` of them.
    /// - Parameter what: what the file should be, e.g. "a suite file (.yaml)".
    public static func read(_ path: String, what: String, limit: Int = 64 << 20) throws(Problem) -> Data {
        var info = stat()
        guard stat(path, &info) == 0 else {
            let code = errno
            throw Problem(path: path, message: code == ENOENT
                ? "no such file; give the path of \(what)"
                : "cannot be looked at (\(String(cString: strerror(code)))); give the path of \(what)")
        }
        switch info.st_mode & S_IFMT {
        case S_IFREG: break
        case S_IFDIR: throw Problem(path: path, message: "is a folder, not a file; give the path of \(what) inside it")
        case S_IFIFO: throw Problem(path: path, message: "is a FIFO (named pipe), not a file; Strain reads \(what) from a regular file")
        case S_IFCHR, S_IFBLK: throw Problem(path: path, message: "is a device, not a file; give the path of \(what)")
        case S_IFSOCK: throw Problem(path: path, message: "is a socket, not a file; give the path of \(what)")
        default: throw Problem(path: path, message: "is not a regular file; give the path of \(what)")
        }
        guard Int(info.st_size) <= limit else {
            throw Problem(path: path, message: "is \(info.st_size) bytes, more than the \(limit >> 20) MiB Strain reads as \(what)")
        }
        guard access(path, R_OK) == 0 else {
            throw Problem(path: path, message: "cannot be read (\(String(cString: strerror(errno)))); check its permissions")
        }
        // Opened without blocking (a FIFO swapped in since the look above cannot hold the
        // reader), looked at again through the descriptor, and read to `limit` at most: a
        // file that grows after the look is refused, not read whole.
        let descriptor = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        guard descriptor >= 0 else {
            throw Problem(path: path, message: "cannot be read (\(String(cString: strerror(errno)))); check its permissions")
        }
        defer { close(descriptor) }
        guard fstat(descriptor, &info) == 0, info.st_mode & S_IFMT == S_IFREG else {
            throw Problem(path: path, message: "changed into something other than a regular file while it was opened; give the path of \(what)")
        }
        var data = Data()
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let count = chunk.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            guard count >= 0 else { throw Problem(path: path, message: "cannot be read (\(String(cString: strerror(errno)))); check its permissions") }
            if count == 0 { break }
            data.append(contentsOf: chunk[..<count])
            if data.count > limit {
                throw Problem(path: path, message: "grew past the \(limit >> 20) MiB Strain reads as \(what) while it was read")
            }
        }
        return data
    }
}

/// A file the program under test could write (its probe folder, a sanitizer log): read
/// as input, never whole. Opened without following a link and without blocking, only
/// if it is a regular file, and read to a cap from its start (`head`) or its end (`tail`).
public enum ProgramFile {
    /// What was read, and how much the file held.
    public struct Read: Sendable {
        /// The bytes read: all of the file, or `limit` of them.
        public var data: Data
        /// The file's size when it was read.
        public var fileBytes: Int
        /// Whether the file held more than was read.
        public var cut: Bool { fileBytes > data.count }
        /// `data` as text (UTF-8, invalid bytes replaced).
        public var text: String { String(decoding: data, as: UTF8.self) }
    }

    /// The first `limit` bytes of the regular file at `path`; nil when there is none (or it is a link, a FIFO, a device).
    public static func head(_ path: String, limit: Int) -> Read? {
        read(path, limit: limit, fromEnd: false)
    }

    /// The last `limit` bytes of the regular file at `path`; nil when there is none.
    public static func tail(_ path: String, limit: Int) -> Read? {
        read(path, limit: limit, fromEnd: true)
    }

    /// At most `limit` bytes of the regular file at `path`, from its start or its end,
    /// read through the one descriptor that was checked (no link followed, no block).
    static func read(_ path: String, limit: Int, fromEnd: Bool) -> Read? {
        let descriptor = open(path, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var info = stat()
        guard fstat(descriptor, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { return nil }
        let size = Int(info.st_size)
        let want = min(max(0, limit), size)
        var offset = fromEnd ? size - want : 0
        var data = Data()
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while data.count < want {
            let count = chunk.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, min($0.count, want - data.count), off_t(offset)) }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { break }
            data.append(contentsOf: chunk[..<count])
            offset += count
        }
        return Read(data: data, fileBytes: max(size, data.count))
    }
}
