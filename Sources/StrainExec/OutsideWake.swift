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
    /// handlers are for faults). The runtime is known by an image it maps.
    static let runtimeDefaults: [(runtime: String, images: [String], signals: Set<Int32>)] = [
        ("Python", ["python", "libpython"], [SIGINT]),
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
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix("SigCgt:") }) else { return nil }
        return signals(inMask: line.dropFirst("SigCgt:".count).drop { $0 == " " || $0 == "\t" })
    }

    /// The runtime whose images `maps` (`/proc/PID/maps`) holds, with its own handlers; nil for none known.
    static func runtime(maps: String) -> (runtime: String, signals: Set<Int32>)? {
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
    /// it, beyond its runtime's own.
    static func ownHandlers(caught: Set<Int32>, maps: String) -> [Int32] {
        let runtime = runtime(maps: maps)?.signals ?? []
        return caught.subtracting(notRequests).subtracting(runtime).sorted()
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
    static func reason(pid: Int32, caught: Set<Int32>?, maps: String, processes: [(pid: Int32, threads: [ThreadState])],
                       commandLine: (Int32) -> [String]? = ExecSupervisor.commandLine(pid:)) -> String? {
        var reasons: [String] = []
        let own = ownHandlers(caught: caught ?? [], maps: maps)
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
        return reasons.isEmpty ? nil : reasons.joined(separator: "; ")
    }
}
