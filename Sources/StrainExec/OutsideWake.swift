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
    static let runtimeDefaults: [(runtime: String, images: [String], signals: [Int32: Int])] = [
        ("Python", ["python", "libpython"], [SIGINT: 1]),
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

    /// The signals process `pid` catches with a handler (`SigCgt` of `/proc/PID/status`), or nil.
    static func caughtSignals(pid: Int32) -> Set<Int32>? {
        statusSignals("/proc/\(pid)/status", field: "SigCgt:")
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
    static func isLive(_ threads: [ThreadState]) -> Bool {
        !threads.isEmpty && threads.contains { !$0.isInUntimedWait }
    }

    /// Why process `pid`, whose every thread waits with no timeout, may still be woken from
    /// outside: the handlers it installed itself, the live processes of its tree; nil when
    /// nothing outside can end the wait (then it is deadlocked).
    static func reason(pid: Int32, caught: Set<Int32>?, maps: String, notes: HandlerNotes? = nil, processes: [(pid: Int32, threads: [ThreadState])],
                       commandLine: (Int32) -> [String]? = ExecSupervisor.commandLine(pid:),
                       readsFromOutside: ([(pid: Int32, threads: [ThreadState])]) -> String? = OutsideWake.readsFromOutside) -> String? {
        var reasons: [String] = []
        let own = ownHandlers(caught: caught ?? [], maps: maps, installs: notes?.installs, ignoredAtStart: notes?.ignoredAtStart ?? [])
        if !own.isEmpty {
            let names = own.map(SignalName.of).joined(separator: ", ")
            reasons.append("it installed its own handler\(own.count == 1 ? "" : "s") for \(names), which a signal sent to it runs")
        }
        let live = processes.filter { $0.pid != pid && isLive($0.threads) }
        if !live.isEmpty {
            let named = live.prefix(4).map { process in
                "\(process.pid)" + (commandLine(process.pid).map { " (" + ExecSupervisor.shellQuoted($0) + ")" } ?? "")
            }.joined(separator: ", ") + (live.count > 4 ? " and \(live.count - 4) more" : "")
            reasons.append("process\(live.count == 1 ? "" : "es") \(named) of its tree \(live.count == 1 ? "is" : "are") alive and not stuck (\(live.count == 1 ? "it runs, sleeps or waits" : "each runs, sleeps or waits") with a timeout)")
        }
        if let reading = readsFromOutside(processes) { reasons.append(reading) }
        return reasons.isEmpty ? nil : reasons.joined(separator: "; ")
    }

    /// The system calls that wait for input on the descriptor in their first argument
    /// (x86-64 numbers): read, readv, recvfrom, recvmsg, accept, accept4.
    static let readingCalls: Set<Int> = [0, 19, 45, 47, 43, 288]

    /// A thread of the tree that waits for input something outside the tree can give:
    /// from a terminal (a person), a socket (a peer anywhere), or a pipe whose other end
    /// a process outside the tree holds (`producer | program`, where the producer is the
    /// shell's). Nil when no thread reads, or each pipe it reads is the tree's own.
    static func readsFromOutside(_ processes: [(pid: Int32, threads: [ThreadState])]) -> String? {
        let tree = Set(processes.map(\.pid))
        for process in processes {
            for thread in process.threads {
                guard let call = thread.syscall, readingCalls.contains(call), let fd = thread.arguments.first, fd < 1 << 20 else { continue }
                guard let target = link("/proc/\(process.pid)/fd/\(fd)") else { continue }
                let reader = "process \(process.pid)'s thread \(thread.tid) reads descriptor \(fd)"
                if target.hasPrefix("socket:") { return "\(reader), a socket, which a peer outside it can write to" }
                if target.hasPrefix("/dev/pts/") || target.hasPrefix("/dev/tty") || target == "/dev/console" {
                    return "\(reader), the terminal \(target), where a person can type"
                }
                if target.hasPrefix("pipe:"), let holder = holder(of: target, outside: tree) {
                    return "\(reader), a pipe whose other end process \(holder) outside its tree holds"
                }
            }
        }
        return nil
    }

    /// Where the link at `path` points (a descriptor in `/proc/PID/fd`), or nil.
    static func link(_ path: String) -> String? { try? FileManager.default.destinationOfSymbolicLink(atPath: path) }

    /// A process outside `tree` (and other than strain itself) with a descriptor on
    /// `target` (`pipe:[INODE]`), or nil; at most 4,096 processes are looked at.
    static func holder(of target: String, outside tree: Set<Int32>) -> Int32? {
        let own = getpid()
        let pids = ((try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []).compactMap(Int32.init).prefix(4096)
        for pid in pids where !tree.contains(pid) && pid != own {
            let folder = "/proc/\(pid)/fd"
            for fd in ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).prefix(4096) {
                if link(folder + "/" + fd) == target { return pid }
            }
        }
        return nil
    }
}
