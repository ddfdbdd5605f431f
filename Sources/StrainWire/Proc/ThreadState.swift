import Foundation

/// A thread as /proc describes it: its name, its scheduler state, and the
/// system call it is blocked in. Reads another process' threads as well as the
/// caller's own (`pid: "self"`).
package struct ThreadState: Sendable, Hashable {
    package var tid: Int
    package var name: String
    /// `S` sleeping, `D` uninterruptible, `R` running, `t` traced, ….
    package var state: String
    /// The system call number, nil when the thread is running in user space.
    package var syscall: Int?
    /// The call's six arguments.
    package var arguments: [UInt64]

    /// The thread ids of a process (`/proc/PID/task`).
    package static func tids(pid: String = "self") -> [Int] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
        return names.compactMap(Int.init).sorted()
    }

    /// Reads one thread; nil when it is gone.
    package static func read(pid: String = "self", tid: Int) -> ThreadState? {
        let base = "/proc/\(pid)/task/\(tid)"
        guard let stat = Self.contents(of: base + "/stat") else { return nil }
        return ThreadState(tid: tid, stat: stat, syscall: Self.contents(of: base + "/syscall"))
    }

    package init(tid: Int, name: String, state: String, syscall: Int?, arguments: [UInt64]) {
        self.tid = tid
        self.name = name
        self.state = state
        self.syscall = syscall
        self.arguments = arguments
    }

    /// A thread from the text of its `stat` and `syscall` files (a probe's dump
    /// copies them); nil when `stat` is not one.
    package init?(tid: Int, stat: String, syscall syscallText: String?) {
        // `tid (comm) S …`: the name may hold spaces and parentheses; the state follows the last `)`.
        guard let close = stat.lastIndex(of: ")"), let open = stat.firstIndex(of: "(") else { return nil }
        let name = String(stat[stat.index(after: open)..<close])
        let rest = stat[stat.index(after: close)...].split(separator: " ", maxSplits: 2)
        let state = rest.first.map(String.init) ?? "?"
        var syscall: Int?
        var arguments: [UInt64] = []
        if let text = syscallText {
            let fields = text.split(whereSeparator: { $0 == " " || $0 == "\n" })
            if let first = fields.first, let number = Int(first), number >= 0 {
                syscall = number
                arguments = fields.dropFirst().prefix(6).compactMap { UInt64($0.dropFirst(2), radix: 16) }
            }
        }
        self.init(tid: tid, name: name, state: state, syscall: syscall, arguments: arguments)
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
    package var isInUntimedWait: Bool { Self.isUntimedWait(wait) }

    /// Whether the thread sleeps (`nanosleep`): it will wake by itself.
    package var isSleeping: Bool { wait?.hasPrefix("sleep") ?? false }

    /// Whether a `wait` description is a wait with no timeout. Calls this
    /// reader does not know are not: a deadlock verdict needs to be sure.
    package static func isUntimedWait(_ wait: String?) -> Bool {
        guard let wait else { return false }
        // `sigsuspend` (where `dispatch_main` parks the main thread of a Dispatch or async
        // Swift program) waits for a signal only: it is not counted as blocked, so the
        // verdict on such a program is the pool's.
        return !wait.hasSuffix("(timed)") && !wait.hasPrefix("sleep") && !wait.hasPrefix("syscall ") && wait != "futex" && wait != "sigsuspend"
    }

    /// Whether a signal handler run on this thread would end its wait with EINTR whatever
    /// `SA_RESTART` says (signal(7): poll, ppoll, select, pselect, epoll_wait, epoll_pwait,
    /// epoll_pwait2, nanosleep, clock_nanosleep, pause, sigtimedwait and sigwaitinfo, semop,
    /// semtimedop, msgrcv, msgsnd, io_getevents). A program that does not retry them fails,
    /// or ends, when a signal arrives (a daemon in `pause` exited 0, one in `sigwaitinfo` shut
    /// down, one in `semop` went on as if posted: re-trial 33o, F1): a thread dump asked with
    /// a signal must not be, and ptrace's stop is not one (the kernel restarts the call after it).
    /// `sigsuspend` is left out: it ends after any handler by design, and libdispatch's
    /// `dispatch_main` parks in it in a loop.
    package var endsOnASignalHandler: Bool {
        guard state != "R", let syscall else { return false }
        return [Call.poll, Call.ppoll, Call.select, Call.pselect, Call.epollWait, Call.epollPwait, Call.epollPwait2, Call.nanosleep, Call.clockNanosleep,
                Call.pause, Call.sigtimedwait, Call.semop, Call.semtimedop, Call.msgrcv, Call.msgsnd, Call.ioGetevents]
            .contains(syscall)
    }

    /// Whether a stop ends this thread's wait with EINTR too, a ptrace stop as a signal's
    /// (signal(7): sigtimedwait and sigwaitinfo, semop, semtimedop): no dump can be taken
    /// of it without ending the wait (a program in `sigwaitinfo` shut down: re-trial 33o, F1).
    package var endsOnAnyStop: Bool {
        guard state != "R", let syscall else { return false }
        return [Call.sigtimedwait, Call.semop, Call.semtimedop].contains(syscall)
    }

    /// `futex`'s system call number on this architecture.
    package static var futexCall: Int { Call.futex }

    /// System call numbers, which differ between architectures.
    enum Call {
        #if arch(arm64)
        static let read = 63, futex = 98, nanosleep = 101, clockNanosleep = 115, epollWait = -1, epollPwait = 22
        static let poll = -1, ppoll = 73, pause = -1, wait4 = 260, select = -1, pselect = 72, sigtimedwait = 137, sigsuspend = 133
        static let epollPwait2 = 441, semop = 193, semtimedop = 192, msgrcv = 188, msgsnd = 189, ioGetevents = 4
        #else
        static let read = 0, futex = 202, nanosleep = 35, clockNanosleep = 230, epollWait = 232, epollPwait = 281
        static let poll = 7, ppoll = 271, pause = 34, wait4 = 61, select = 23, pselect = 270, sigtimedwait = 128, sigsuspend = 130
        static let epollPwait2 = 441, semop = 65, semtimedop = 220, msgrcv = 70, msgsnd = 69, ioGetevents = 208
        #endif
    }

    /// What the thread is blocked in, e.g. `futex wait` or `futex wait (timed)`;
    /// nil when it is running or not in a system call.
    package var wait: String? {
        guard state != "R", let syscall else { return nil }
        let argument = { (index: Int) -> UInt64 in index < arguments.count ? arguments[index] : 0 }
        let infinite: UInt64 = 0xffff_ffff_ffff_ffff
        let forever = { (value: UInt64) in value == infinite || value == 0xffff_ffff }
        switch syscall {
        case Call.futex:  // futex(uaddr, op, val, timeout, …)
            let command = argument(1) & 0x7f
            guard [0, 9, 6].contains(command) else { return "futex" }  // WAIT, WAIT_BITSET, LOCK_PI
            return argument(3) == 0 ? "futex wait" : "futex wait (timed)"
        case Call.read: return "read"
        case Call.poll: return forever(argument(2)) ? "poll" : "poll (timed)"
        case Call.epollWait, Call.epollPwait: return forever(argument(3)) ? "epoll wait" : "epoll wait (timed)"
        case Call.ppoll: return argument(2) == 0 ? "ppoll" : "ppoll (timed)"
        case Call.pause: return "pause"
        case Call.wait4: return "wait4"
        case Call.nanosleep, Call.clockNanosleep: return "sleep (nanosleep)"
        case Call.select, Call.pselect: return argument(4) == 0 ? "select" : "select (timed)"
        case Call.sigtimedwait: return argument(2) == 0 ? "sigtimedwait" : "sigtimedwait (timed)"
        case Call.sigsuspend: return "sigsuspend"
        case Call.semop: return "semop"
        case Call.semtimedop: return argument(3) == 0 ? "semtimedop" : "semtimedop (timed)"
        default: return "syscall \(syscall)"
        }
    }
}
