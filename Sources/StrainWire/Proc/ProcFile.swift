import Glibc

/// Files under /proc, read as both the child and the parent read them.
package enum ProcFile {
    /// A /proc file read to its end (their size says 0, so Foundation's readers may stop short).
    /// With `limit`, at most that many bytes (a file whose size the program sets, such as an epoll set's fdinfo).
    package static func contents(of path: String, limit: Int = .max) -> String {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return "" }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while bytes.count < limit {
            let count = read(fd, &chunk, min(chunk.count, limit - bytes.count))
            if count < 0 && errno == EINTR { continue }
            if count <= 0 { break }
            bytes += chunk[0..<count]
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
