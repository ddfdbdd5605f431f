import Foundation

/// A thread as /proc describes it: its name, its scheduler state, and the
/// system call it is blocked in. Reads another process' threads as well as the
/// caller's own (`pid: "self"`).
public struct ThreadState: Sendable, Hashable {
    public var tid: Int
    public var name: String
    /// `S` sleeping, `D` uninterruptible, `R` running, `t` traced, ….
    public var state: String
    /// The system call number, nil when the thread is running in user space.
    public var syscall: Int?
    /// The call's six arguments.
    public var arguments: [UInt64]

    /// The thread ids of a process (`/proc/PID/task`).
    public static func tids(pid: String = "self") -> [Int] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
        return names.compactMap(Int.init).sorted()
    }

    /// Reads one thread; nil when it is gone.
    public static func read(pid: String = "self", tid: Int) -> ThreadState? {
        let base = "/proc/\(pid)/task/\(tid)"
        guard let stat = Self.contents(of: base + "/stat") else { return nil }
        // `tid (comm) S …`: the name may hold spaces and parentheses; the state follows the last `)`.
        guard let close = stat.lastIndex(of: ")"), let open = stat.firstIndex(of: "(") else { return nil }
        let name = String(stat[stat.index(after: open)..<close])
        let rest = stat[stat.index(after: close)...].split(separator: " ", maxSplits: 2)
        let state = rest.first.map(String.init) ?? "?"
        var syscall: Int?
        var arguments: [UInt64] = []
        if let text = Self.contents(of: base + "/syscall") {
            let fields = text.split(whereSeparator: { $0 == " " || $0 == "\n" })
            if let first = fields.first, let number = Int(first), number >= 0 {
                syscall = number
                arguments = fields.dropFirst().prefix(6).compactMap { UInt64($0.dropFirst(2), radix: 16) }
            }
        }
        return ThreadState(tid: tid, name: name, state: state, syscall: syscall, arguments: arguments)
    }

    private static func contents(of path: String) -> String? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: 1024)
        let count = Foundation.read(fd, &buffer, buffer.count)
        guard count > 0 else { return nil }
        return String(decoding: buffer[0..<count], as: UTF8.self)
    }

    /// Whether the thread waits with no timeout: nothing but another thread (or
    /// a signal) can wake it.
    public var isInUntimedWait: Bool { Self.isUntimedWait(wait) }

    /// Whether a `wait` description is a wait with no timeout.
    public static func isUntimedWait(_ wait: String?) -> Bool {
        wait.map { !$0.hasSuffix("(timed)") && !$0.hasPrefix("sleep") } ?? false
    }

    /// What the thread is blocked in, e.g. `futex wait` or `futex wait (timed)`;
    /// nil when it is running or its call is not a wait.
    public var wait: String? {
        guard state != "R", let syscall else { return nil }
        let argument = { (index: Int) -> UInt64 in index < arguments.count ? arguments[index] : 0 }
        let infinite: UInt64 = 0xffff_ffff_ffff_ffff
        switch syscall {
        case 202:  // futex(uaddr, op, val, timeout, …)
            let command = argument(1) & 0x7f
            guard [0, 9, 6].contains(command) else { return "futex" }  // WAIT, WAIT_BITSET, LOCK_PI
            return argument(3) == 0 ? "futex wait" : "futex wait (timed)"
        case 0: return "read"
        case 7: return argument(2) == infinite || argument(2) == 0xffff_ffff ? "poll" : "poll (timed)"
        case 232, 281: return argument(3) == infinite || argument(3) == 0xffff_ffff ? "epoll wait" : "epoll wait (timed)"
        case 271: return argument(2) == 0 ? "ppoll" : "ppoll (timed)"
        case 34: return "pause"
        case 61: return "wait4"
        case 35, 230: return "sleep (nanosleep)"
        case 23, 270: return argument(4) == 0 ? "select" : "select (timed)"
        case 128: return argument(2) == 0 ? "sigtimedwait" : "sigtimedwait (timed)"
        default: return "syscall \(syscall)"
        }
    }
}
