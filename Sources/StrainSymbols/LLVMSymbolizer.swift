import Foundation
import Glibc
import Synchronization

/// file:line:column for addresses in ELF files, from the toolchain's
/// `llvm-symbolizer`: one long-lived process per run, fed `MODULE 0xADDRESS`
/// lines and answering a JSON line each, so each module's debug information is
/// read once. It reads separate debug files through build IDs
/// (`/usr/lib/debug/.build-id`, where `libc6-dbg` puts glibc's), and expands
/// inlined frames.
///
/// When no llvm-symbolizer is found, or it fails, every answer is nil and the
/// caller keeps the ELF symbol tables' names.
final class LLVMSymbolizer: Sendable {
    /// One function at an address: the innermost inlined one first, the
    /// function the address is really in last.
    struct Location: Sendable, Equatable {
        /// The linkage (mangled) name, when the debug information has one.
        var function: String?
        var file: String?
        var line: Int?
        var column: Int?
        /// The function's start, in the module's own addresses (outermost only).
        var startAddress: UInt64?
    }

    /// The executable in use.
    let path: String

    private struct Connection {
        var pid: pid_t
        /// Our end of the child's standard input (a socket, so a dead child gives EPIPE, not SIGPIPE).
        var input: Int32
        /// Our end of its standard output.
        var output: Int32
        var buffer: [UInt8] = []
        var failed = false
    }

    private let connection: Mutex<Connection?>

    /// Seconds to wait for one answer; the first for a large module reads all its debug information.
    static let answerTimeoutSeconds = 60.0

    /// Starts `path`; nil when it cannot be started.
    init?(path: String) {
        self.path = path
        var sockets: [Int32] = [0, 0]
        var outputPipe: [Int32] = [0, 0]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &sockets) == 0 else { return nil }
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &outputPipe) == 0 else {
            close(sockets[0]); close(sockets[1])
            return nil
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, sockets[1], 0)
        posix_spawn_file_actions_adddup2(&actions, outputPipe[1], 1)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        let arguments = [path, "--output-style=JSON", "--no-demangle", "--inlines", "--functions=linkage"]
        let argv = arguments.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        // A process group of its own: in strain's, a terminal's Ctrl-C or a signal to the
        // group (`strain exec`'s program shares it) killed it, and every later trace of the
        // run lost its files and lines (re-trial 33e). It ends at EOF when strain does.
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        posix_spawnattr_setpgroup(&attributes, 0)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETPGROUP))
        var pid: pid_t = 0
        let status = posix_spawn(&pid, path, &actions, &attributes, argv, environ)
        close(sockets[1])
        close(outputPipe[1])
        guard status == 0 else {
            close(sockets[0]); close(outputPipe[0])
            return nil
        }
        connection = Mutex(Connection(pid: pid, input: sockets[0], output: outputPipe[0]))
    }

    deinit {
        connection.withLock { connection in
            guard let open = connection else { return }
            close(open.input)
            close(open.output)
            var status: Int32 = 0
            if waitpid(open.pid, &status, WNOHANG) == 0 {
                kill(open.pid, SIGKILL)
                waitpid(open.pid, &status, 0)
            }
            connection = nil
        }
    }

    /// The llvm-symbolizer to use: `STRAIN_LLVM_SYMBOLIZER` when set (`none`
    /// turns it off), else the one next to the `swift` found on PATH (the
    /// toolchain's), else one on PATH.
    static func locate(environment: [String: String] = ProcessInfo.processInfo.environment) -> String? {
        if let chosen = environment["STRAIN_LLVM_SYMBOLIZER"] {
            if chosen == "none" || chosen.isEmpty { return nil }
            return access(chosen, X_OK) == 0 ? chosen : nil
        }
        let folders = (environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":").map(String.init)
        for folder in folders {
            let swift = (folder as NSString).appendingPathComponent("swift")
            guard access(swift, X_OK) == 0 else { continue }
            let real = URL(fileURLWithPath: swift).resolvingSymlinksInPath().deletingLastPathComponent().path
            let candidate = (real as NSString).appendingPathComponent("llvm-symbolizer")
            if access(candidate, X_OK) == 0 { return candidate }
            break
        }
        for folder in folders {
            let candidate = (folder as NSString).appendingPathComponent("llvm-symbolizer")
            if access(candidate, X_OK) == 0 { return candidate }
        }
        return nil
    }

    /// The functions at each `(module, address)`, the address in the module's own
    /// terms (its symbol table's); nil for every query when the process failed.
    func locations(_ queries: [(module: String, address: UInt64)]) -> [[Location]?] {
        connection.withLock { connection -> [[Location]?] in
            guard var open = connection, !open.failed else { return queries.map { _ in nil } }
            var answers: [[Location]?] = []
            // In chunks, so neither pipe fills while the other waits.
            var start = 0
            while start < queries.count {
                let chunk = queries[start..<min(queries.count, start + 64)]
                let request = chunk.map { "\"\($0.module)\" 0x\(String($0.address, radix: 16))\n" }.joined()
                guard Self.send(request, to: open.input) else {
                    open.failed = true
                    break
                }
                for _ in chunk {
                    guard let line = Self.readLine(from: open.output, buffer: &open.buffer) else {
                        open.failed = true
                        break
                    }
                    answers.append(Self.parse(line))
                }
                if open.failed { break }
                start += chunk.count
            }
            if open.failed {
                kill(open.pid, SIGKILL)
                var status: Int32 = 0
                waitpid(open.pid, &status, 0)
            }
            connection = open
            return answers + Array(repeating: nil, count: queries.count - answers.count)
        }
    }

    private static func send(_ text: String, to descriptor: Int32) -> Bool {
        var bytes = Array(text.utf8)[...]
        while !bytes.isEmpty {
            let sent = bytes.withUnsafeBytes { Glibc.send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if sent < 0, errno == EINTR { continue }
            guard sent > 0 else { return false }
            bytes = bytes.dropFirst(sent)
        }
        return true
    }

    /// One line of output, waiting at most `answerTimeoutSeconds`.
    private static func readLine(from descriptor: Int32, buffer: inout [UInt8]) -> String? {
        let deadline = Date().addingTimeInterval(answerTimeoutSeconds)
        while true {
            if let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: buffer[..<newline], as: UTF8.self)
                buffer.removeSubrange(...newline)
                return line
            }
            let left = deadline.timeIntervalSinceNow
            guard left > 0 else { return nil }
            var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            let ready = poll(&poller, 1, Int32(min(left, 1) * 1000))
            if ready < 0, errno == EINTR { continue }
            guard ready >= 0 else { return nil }
            if ready == 0 { continue }
            var chunk = [UInt8](repeating: 0, count: 65536)
            let count = read(descriptor, &chunk, chunk.count)
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { return nil }
            buffer += chunk[..<count]
        }
    }

    /// `{"Address":…,"Symbol":[{"FunctionName":…,"FileName":…,"Line":…,"Column":…},…]}`.
    static func parse(_ line: String) -> [Location]? {
        struct Answer: Decodable {
            struct Symbol: Decodable {
                var FunctionName: String?
                var FileName: String?
                var Line: Int?
                var Column: Int?
                var StartAddress: String?
            }
            var Symbol: [Symbol]?
        }
        guard let answer = try? JSONDecoder().decode(Answer.self, from: Data(line.utf8)) else { return nil }
        return (answer.Symbol ?? []).map { symbol in
            // Line 0 and "??" mean "not known"; a toolchain library can name crtstuff.c at line 0.
            let known = (symbol.Line ?? 0) > 0 && !(symbol.FileName ?? "").isEmpty && symbol.FileName != "??"
            let function = symbol.FunctionName.flatMap { $0.isEmpty || $0 == "??" ? nil : $0 }
            let start = symbol.StartAddress.flatMap { $0.hasPrefix("0x") ? UInt64($0.dropFirst(2), radix: 16) : nil }
            return Location(function: function, file: known ? symbol.FileName : nil, line: known ? symbol.Line : nil,
                            column: known ? symbol.Column.flatMap { $0 > 0 ? $0 : nil } : nil, startAddress: start)
        }
    }
}
