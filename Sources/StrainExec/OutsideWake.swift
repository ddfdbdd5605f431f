import Foundation
import Glibc
import StrainKit
import StrainWire

/// What outside a quiet process could still end a wait that nothing inside it can.
///
/// "Every thread waits with no timeout and no holder can be read" proves a deadlock
/// only when nothing outside the process can end the wait either. Two things can: a
/// signal handler the program installed itself (a daemon's SIGHUP handler posts the
/// semaphore its main thread waits on; a Python handler sets the `Event` its main
/// thread waits for), and another process of the program's tree that is alive and
/// not stuck itself (a worker asleep that will set a `multiprocessing.Event`). A
/// named cycle of mutexes needs no such check: no signal or process breaks it.
struct OutsideWake {
    /// Signals that ask nothing of a program: faults (the probe's handlers and runtimes'
    /// crash reporters catch them), SIGQUIT and SIGSYS (the probe's dumps), SIGKILL and
    /// SIGSTOP (never caught), and glibc's own real-time signals 32 and 33 (thread
    /// cancellation and set*id, installed by glibc when first used).
    static let notRequests: Set<Int32> = [SIGQUIT, SIGILL, SIGTRAP, SIGABRT, SIGBUS, SIGFPE, SIGSEGV, SIGSYS, SIGKILL, SIGSTOP, 32, 33]

    /// A language runtime's own handlers, installed in every program it runs: not the
    /// program's. Measured under `strain exec` with Python 3.11 (`python3 -c 'input()'`
    /// catches SIGINT, for KeyboardInterrupt, and nothing else outside `notRequests`) and
    /// Swift 6.3.1 (an empty program catches nothing outside them: its backtracer's
    /// handlers are for faults). The runtime is known by an image it maps. Each signal
    /// comes with the times the runtime installs its handler at start-up (CPython: once,
    /// `strace -e rt_sigaction` shows): the probe counts installs, so one more is the
    /// program's (`signal.signal(SIGINT, …)` installs the same C handler again).
    /// HotSpot (OpenJDK 17, `strace -f -e rt_sigaction`) installs SIGHUP, SIGINT and SIGTERM
    /// once each (its shutdown on them runs the shutdown hooks and exits), SIGUSR2 (thread
    /// suspension), SIGPIPE and SIGXFSZ; a program's `sun.misc.Signal.handle` installs one
    /// more (known by the launcher's `libjli`, loaded before the probe starts, or `libjvm`).
    static let runtimeDefaults: [(runtime: String, images: [String], signals: [Int32: Int])] = [
        ("Python", ["python", "libpython"], [SIGINT: 1]),
        ("Java", ["libjli", "libjvm"], [SIGHUP: 1, SIGINT: 1, SIGTERM: 1, SIGUSR2: 1, SIGPIPE: 1, SIGXFSZ: 1]),
    ]

    /// The signal numbers a `SigCgt:`/`SigBlk:`-style mask (hexadecimal, bit n-1 for signal n) holds.
    static func signals(inMask hex: Substring) -> Set<Int32> {
        var found: Set<Int32> = []
        for (index, digit) in hex.reversed().enumerated() {
            guard let value = digit.hexDigitValue else { return [] }
            for bit in 0..<4 where value & (1 << bit) != 0 { found.insert(Int32(index * 4 + bit + 1)) }
        }
        return found
    }

    /// The signals process `pid` catches with a handler (`SigCgt` of `/proc/PID/status`) that
    /// can run: not one that every thread blocks (`SigBlk` of each `/proc/PID/task/TID/status`),
    /// which a signal sent to it leaves pending for good (a SIGUSR1 handler that would post the
    /// semaphore, blocked before the threads started, was taken for a way out: re-trial 33n, F5); or nil.
    static func caughtSignals(pid: Int32) -> Set<Int32>? {
        guard let caught = statusSignals("/proc/\(pid)/status", field: "SigCgt:") else { return nil }
        let masks = ThreadState.tids(pid: "\(pid)").compactMap { statusSignals("/proc/\(pid)/task/\($0)/status", field: "SigBlk:") }
        return caught.subtracting(blockedEverywhere(masks))
    }

    /// The signals every one of `masks` (each thread's blocked signals) holds; none for no masks.
    static func blockedEverywhere(_ masks: [Set<Int32>]) -> Set<Int32> {
        guard let first = masks.first else { return [] }
        return masks.dropFirst().reduce(first) { $0.intersection($1) }
    }

    /// The signals of mask `field` (`SigCgt:`, `SigBlk:`) in the status file at `path`, or nil.
    static func statusSignals(_ path: String, field: String) -> Set<Int32>? {
        guard let status = try? String(contentsOfFile: path, encoding: .utf8),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix(field) }) else { return nil }
        return signals(inMask: line.dropFirst(field.count).drop { $0 == " " || $0 == "\t" })
    }

    /// The runtime whose images `maps` (`/proc/PID/maps`) holds, with its own handlers; nil for none known.
    static func runtime(maps: String) -> (runtime: String, signals: [Int32: Int])? {
        let images = Set(maps.split(separator: "\n").compactMap { line -> Substring? in
            guard let slash = line.lastIndex(of: "/") else { return nil }
            return line[line.index(after: slash)...]
        })
        for entry in runtimeDefaults where images.contains(where: { image in entry.images.contains { image.hasPrefix($0) } }) {
            return (entry.runtime, entry.signals)
        }
        return nil
    }

    /// The handlers the program installed itself: caught signals that ask something of
    /// it, beyond its runtime's own. `installs` counts the handlers its image installed
    /// per signal (the probe's `handlers-PID.txt`; nil without one): a runtime's signal
    /// installed more often than the runtime does is the program's too. A runtime installs
    /// none for a signal its image started with ignored (`ignoredAtStart`; CPython in a
    /// script's background job), so there the first install is the program's.
    static func ownHandlers(caught: Set<Int32>, maps: String, installs: [Int32: Int]? = nil, ignoredAtStart: Set<Int32> = []) -> [Int32] {
        let runtime = runtime(maps: maps)?.signals ?? [:]
        let runtimes = Set(runtime.compactMap { signal, times in
            (installs?[signal] ?? 0) > (ignoredAtStart.contains(signal) ? 0 : times) ? nil : signal
        })
        return caught.subtracting(notRequests).subtracting(runtimes).sorted()
    }

    /// What a process's probe noted in `handlers-PID.txt`: the handlers its image
    /// installed, per signal (a line `N`), and the signals the image started with
    /// ignored (a line `-N`).
    struct HandlerNotes: Equatable {
        var installs: [Int32: Int] = [:]
        var ignoredAtStart: Set<Int32> = []
    }

    /// Process `pid`'s notes in `handlers-PID.txt` of `folder` (read as input: at most
    /// 4 KiB, numbers 1–64); nil when there is no such file (no probe, or no handler installed).
    static func handlerNotes(pid: Int32, folder: String) -> HandlerNotes? {
        let path = (folder as NSString).appendingPathComponent("handlers-\(pid).txt")
        guard let text = ProgramFile.head(path, limit: 4096)?.text else { return nil }
        var notes = HandlerNotes()
        for line in text.split(separator: "\n") {
            guard let number = Int32(line), (1...64).contains(number.magnitude) else { continue }
            if number < 0 { notes.ignoredAtStart.insert(-number) } else { notes.installs[number, default: 0] += 1 }
        }
        return notes
    }

    /// Whether a process is alive and not stuck: a thread of it runs, sleeps or waits
    /// with a timeout (it will act by itself). A process whose every thread waits with
    /// no timeout (a wrapper in `wait4` for its child, a server blocked in `accept`) is not.
    /// A zombie (`Z`, or `X` dead) has ended and acts no more (a child that exited and was
    /// never reaped was taken for one that will: re-trial 33n, F4).
    static func isLive(_ threads: [ThreadState]) -> Bool {
        threads.contains { !$0.isInUntimedWait && !isGone($0) }
    }

    /// Whether a process has ended and waits only to be reaped: its threads are a zombie's (`Z`) or dead (`X`).
    static func hasEnded(_ threads: [ThreadState]) -> Bool {
        !threads.isEmpty && threads.allSatisfy(isGone)
    }

    /// Whether a process is stopped: every thread in a stop (`T`) or a tracer's stop (`t`).
    static func isStopped(_ threads: [ThreadState]) -> Bool {
        !threads.isEmpty && threads.allSatisfy { $0.state == "T" || $0.state == "t" }
    }

    /// Whether `thread` has ended: a zombie's (`Z`) or dead (`X`).
    static func isGone(_ thread: ThreadState) -> Bool { thread.state == "Z" || thread.state == "X" }

    /// The handlers process `pid` installed itself, read from `/proc` and the probe's notes in `folder`.
    static func ownHandlers(pid: Int32, folder: String) -> [Int32] {
        guard let caught = caughtSignals(pid: pid) else { return [] }
        let notes = handlerNotes(pid: pid, folder: folder)
        return ownHandlers(caught: caught, maps: ExecSupervisor.maps(pid: pid), installs: notes?.installs, ignoredAtStart: notes?.ignoredAtStart ?? [])
    }

    /// Whether a process only waits for its children (a launcher, a shell running a
    /// script's command): its handlers serve its own job control, not the program's waits.
    static func onlyWaitsForChildren(_ threads: [ThreadState]) -> Bool {
        !threads.isEmpty && threads.allSatisfy { $0.wait == "wait4" }
    }

    /// Why process `pid`, whose every thread waits with no timeout, may still be woken from
    /// outside: the handlers it or another process of its tree installed itself (a forked
    /// worker that waits for its SIGHUP, then posts the semaphore the program waits on), the
    /// live processes of its tree; nil when nothing outside can end the wait (then it is
    /// deadlocked). `handlers` gives another process's own handlers.
    static func reason(pid: Int32, caught: Set<Int32>?, maps: String, notes: HandlerNotes? = nil, processes: [(pid: Int32, threads: [ThreadState])],
                       handlers: (Int32) -> [Int32] = { _ in [] },
                       commandLine: (Int32) -> [String]? = ExecSupervisor.commandLine(pid:),
                       readsFromOutside: ([(pid: Int32, threads: [ThreadState])]) -> String? = OutsideWake.readsFromOutside) -> String? {
        var reasons: [String] = []
        func named(_ pids: [Int32]) -> String {
            pids.prefix(4).map { "\($0)" + (commandLine($0).map { " (" + ExecSupervisor.shellQuoted($0) + ")" } ?? "") }.joined(separator: ", ")
                + (pids.count > 4 ? " and \(pids.count - 4) more" : "")
        }
        let own = ownHandlers(caught: caught ?? [], maps: maps, installs: notes?.installs, ignoredAtStart: notes?.ignoredAtStart ?? [])
        if !own.isEmpty {
            let names = own.map(SignalName.of).joined(separator: ", ")
            reasons.append("it installed its own handler\(own.count == 1 ? "" : "s") for \(names), which a signal sent to it runs")
        }
        for process in processes where process.pid != pid && !onlyWaitsForChildren(process.threads) && !hasEnded(process.threads) {
            // SIGCHLD tells a process of its own children's ends (libuv installs one in every
            // Node program that spawns): no way into the judged process's wait.
            let theirs = handlers(process.pid).filter { $0 != SIGCHLD }
            guard !theirs.isEmpty else { continue }
            let names = theirs.map(SignalName.of).joined(separator: ", ")
            reasons.append("process \(named([process.pid])) of its tree installed its own handler\(theirs.count == 1 ? "" : "s") for \(names), which a signal sent to it runs")
            break
        }
        // A stopped process (`T`, or `t` under a tracer) does nothing by itself, but a SIGCONT from outside resumes it: a way out, worded as what it is (re-trial 33n, R7).
        let live = processes.filter { $0.pid != pid && isLive($0.threads) }
        let stopped = live.filter { isStopped($0.threads) }, acting = live.filter { !isStopped($0.threads) }
        if !acting.isEmpty {
            reasons.append("process\(acting.count == 1 ? "" : "es") \(named(acting.map(\.pid))) of its tree \(acting.count == 1 ? "is" : "are") alive and not stuck (\(acting.count == 1 ? "it runs, sleeps or waits" : "each runs, sleeps or waits") with a timeout)")
        }
        if !stopped.isEmpty {
            let one = stopped.count == 1
            reasons.append("process\(one ? "" : "es") \(named(stopped.map(\.pid))) of its tree \(one ? "is" : "are") stopped (a SIGCONT sent to \(one ? "it" : "them") resumes \(one ? "it" : "them"))")
        }
        if let reading = readsFromOutside(processes) { reasons.append(reading) }
        return reasons.isEmpty ? nil : reasons.joined(separator: "; ")
    }

    /// The system calls that wait for input on the descriptor in their first argument
    /// (x86-64 numbers): read, readv, recvfrom, recvmsg, accept, accept4.
    static let readingCalls: Set<Int> = [0, 19, 45, 47, 43, 288]

    /// epoll_wait, epoll_pwait and epoll_pwait2 (x86-64 numbers): the epoll descriptor first.
    static let epollCalls: Set<Int> = [232, 281, 441]

    /// A thread of the tree that waits for input something outside the tree can give:
    /// from a terminal (a person), a socket (a peer anywhere), or a pipe whose other end
    /// a process outside the tree holds (`producer | program`, where the producer is the
    /// shell's); read directly, or watched by an epoll set it waits on (libdispatch's event
    /// thread for a read source, an event loop's). Nil when no thread reads, or each pipe it
    /// reads is the tree's own.
    static func readsFromOutside(_ processes: [(pid: Int32, threads: [ThreadState])]) -> String? {
        let tree = Set(processes.map(\.pid))
        for process in processes {
            for thread in process.threads {
                guard let call = thread.syscall, let fd = thread.arguments.first, fd < 1 << 20 else { continue }
                if readingCalls.contains(call), let source = outsideSource(pid: process.pid, fd: fd, tree: tree) {
                    return "process \(process.pid)'s thread \(thread.tid) reads descriptor \(fd), \(source)"
                }
                guard epollCalls.contains(call) else { continue }
                for watched in epollTargets(pid: process.pid, epoll: fd) {
                    if let source = outsideSource(pid: process.pid, fd: UInt64(watched), tree: tree) {
                        return "process \(process.pid)'s thread \(thread.tid) waits in epoll for descriptor \(watched), \(source)"
                    }
                }
            }
        }
        return nil
    }

    /// What descriptor `fd` of process `pid` is, when something outside `tree` can write to it; nil otherwise.
    static func outsideSource(pid: Int32, fd: UInt64, tree: Set<Int32>) -> String? {
        guard let target = link("/proc/\(pid)/fd/\(fd)") else { return nil }
        if target.hasPrefix("socket:") { return "a socket, which a peer outside it can write to" }
        if target.hasPrefix("/dev/pts/") || target.hasPrefix("/dev/tty") || target == "/dev/console" {
            return "the terminal \(target), where a person can type"
        }
        if target.hasPrefix("pipe:"), let holder = holder(of: target, outside: tree) {
            return "a pipe whose other end process \(holder) outside its tree holds"
        }
        return nil
    }

    /// Whether `thread` of process `pid` reads (`read`, `readv`) an anonymous pipe that no
    /// process outside `tree` holds, so that only the tree can write to it; false where
    /// that cannot be known (more processes than ``processes()`` lists).
    static func readsTreesOwnPipe(pid: Int32, thread: ThreadState, tree: Set<Int32>) -> Bool {
        guard let call = thread.syscall, call == 0 || call == 19, let fd = thread.arguments.first, fd < 1 << 20,
              let target = link("/proc/\(pid)/fd/\(fd)"), target.hasPrefix("pipe:") else { return false }
        let listed = processes()
        return listed.complete && holder(of: target, outside: tree, among: listed.pids) == nil
    }

    /// The descriptors the epoll set `epoll` of process `pid` watches (its `tfd:` lines in
    /// `/proc/PID/fdinfo/EPOLL`, read as input: at most 64 KiB, 256 descriptors).
    static func epollTargets(pid: Int32, epoll: UInt64) -> [Int] {
        let text = ProcFile.contents(of: "/proc/\(pid)/fdinfo/\(epoll)", limit: 1 << 16)
        return text.split(separator: "\n").compactMap { line -> Int? in
            let fields = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
            guard fields.count >= 2, fields[0] == "tfd:", let fd = Int(fields[1]), (0..<(1 << 20)).contains(fd) else { return nil }
            return fd
        }.prefix(256).map { $0 }
    }

    /// Where the link at `path` points (a descriptor in `/proc/PID/fd`), or nil.
    static func link(_ path: String) -> String? { try? FileManager.default.destinationOfSymbolicLink(atPath: path) }

    /// The machine's processes, at most 4,096 of them, and whether that is all of them.
    static func processes() -> (pids: [Int32], complete: Bool) {
        let all = ((try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []).compactMap(Int32.init)
        return (Array(all.prefix(4096)), all.count <= 4096)
    }

    /// A process among `pids` outside `tree` (and other than strain itself) with a
    /// descriptor on `target` (`pipe:[INODE]`), or nil.
    static func holder(of target: String, outside tree: Set<Int32>, among pids: [Int32] = processes().pids) -> Int32? {
        let own = getpid()
        for pid in pids where !tree.contains(pid) && pid != own {
            let folder = "/proc/\(pid)/fd"
            for fd in ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).prefix(4096) {
                if link(folder + "/" + fd) == target { return pid }
            }
        }
        return nil
    }
}
