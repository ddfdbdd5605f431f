import Foundation
import Glibc
import StrainRecords
import StrainRunner

/// A JVM's own answer about Java-level deadlocks.
///
/// HotSpot parks a thread that waits for a contended `synchronized` monitor (or a
/// `java.util.concurrent` lock) in a futex wait with a timeout, so the watch's rule
/// ("every thread waits with no timeout") never holds for a Java deadlock. The JVM
/// itself knows its monitors' owners: `jcmd PID Thread.print` (the attach API, as
/// `jstack` uses) prints a thread dump that ends in "Found one Java-level deadlock:"
/// with the cycle. Its output goes to jcmd's standard output, not the program's (a
/// SIGQUIT would print the same dump on the program's own output).
enum JVMThreads {
    /// Whether process `maps` (`/proc/PID/maps`) holds HotSpot's `libjvm.so`.
    static func isJVM(maps: String) -> Bool {
        maps.contains("/libjvm.so")
    }

    /// `jcmd` beside the JVM's own `java` (`/proc/PID/exe`), else on PATH; nil when neither has one (a JRE without the JDK's tools).
    static func jcmd(pid: Int32, path: String? = ProcessInfo.processInfo.environment["PATH"]) -> String? {
        var candidates: [String] = []
        if let executable = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/exe") {
            candidates.append(((executable as NSString).deletingLastPathComponent as NSString).appendingPathComponent("jcmd"))
        }
        candidates += (path ?? "").split(separator: ":").map { "\($0)/jcmd" }
        return candidates.first { access($0, X_OK) == 0 }
    }

    /// Runs `jcmd PID COMMAND…` (`Thread.print` by default) with its output in `file`, for at
    /// most `timeoutSeconds` (jcmd starts a JVM of its own: about half a second); the output,
    /// or nil when jcmd failed or took too long (killed then).
    static func ask(jcmd: String, pid: Int32, _ command: [String] = ["Thread.print"], file: String, timeoutSeconds: Double = 20) -> String? {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, file, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        let environment = ProcessInfo.processInfo.environment.map { "\($0.key)=\($0.value)" }
        let (status, child) = ProcessSpawn.start(jcmd, arguments: [String(pid)] + command, environment: environment, actions: &actions,
                                                 ownGroup: true, defaultSignals: ProcessSpawn.runnersSignals)
        guard status == 0 else { return nil }
        let deadline = Date().addingTimeInterval(timeoutSeconds)
        var ended: TerminationStatus?
        while ended == nil {
            if let reaped = ProcessSpawn.reapIfEnded(child) {
                ended = reaped.0
            } else if Date() > deadline {
                kill(child, SIGKILL)
                var waited: Int32 = 0
                _ = waitpid(child, &waited, 0)
                return nil
            } else {
                usleep(20_000)
            }
        }
        guard ended == .exited(0) else { return nil }
        return ProgramFile.head(file, limit: ProbeFolder.dumpByteLimit)?.text
    }

    /// The Java-level deadlocks a HotSpot thread dump reports, one line a thread:
    /// `"first" waits to lock a java.lang.Object held by "second"`; empty when it reports none.
    static func deadlocks(in dump: String) -> [String] {
        var found: [String] = []
        var inSection = false
        var thread: String?
        var waiting: String?
        for raw in dump.split(separator: "\n", omittingEmptySubsequences: false) {
            let line = raw.trimmingCharacters(in: .whitespaces)
            if line.hasPrefix("Found one Java-level deadlock") || (line.hasPrefix("Found ") && line.contains("Java-level deadlocks")) {
                inSection = true
                continue
            }
            guard inSection else { continue }
            if line.hasPrefix("Java stack information") || (line.hasPrefix("Found ") && (line.hasSuffix("deadlock.") || line.hasSuffix("deadlocks."))) {
                inSection = false
                continue
            }
            if line.hasPrefix("\""), line.hasSuffix("\":") {
                thread = String(line.dropLast())
                waiting = nil
            } else if line.hasPrefix("waiting to lock monitor") || line.hasPrefix("waiting for ownable synchronizer") {
                // `waiting to lock monitor 0x… (object 0x…, a java.lang.Object),` → `a java.lang.Object`
                let inside = line.split(separator: "(", maxSplits: 1).last.map { String($0) } ?? ""
                let object = inside.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.first { $0.hasPrefix("a ") || $0.hasPrefix("an ") }
                waiting = object.map { $0.hasSuffix(")") ? String($0.dropLast()) : $0 } ?? "a lock"
            } else if line.hasPrefix("which is held by"), let thread {
                let holder = line.dropFirst("which is held by".count).trimmingCharacters(in: .whitespaces)
                found.append("\(thread) waits to lock \(waiting ?? "a monitor") held by \(holder)")
            }
        }
        return found
    }

    /// HotSpot's own Java threads: they serve the JVM (references, signals, compilers, the
    /// attach mechanism jcmd itself uses, the thread that waits for the last non-daemon
    /// thread to end), never a program's wait.
    static let ownThreads: Set<String> = ["Reference Handler", "Finalizer", "Signal Dispatcher", "Service Thread", "Monitor Deflation Thread",
                                          "Sweeper thread", "Common-Cleaner", "Notification Thread", "Attach Listener", "DestroyJavaVM"]
    static let ownThreadPrefixes = ["C1 CompilerThread", "C2 CompilerThread", "JVMCI"]

    /// The program's Java threads of a HotSpot thread dump (its first), one line each, when
    /// every one waits with no timeout: parked (a `CountDownLatch`, a `Condition`, a
    /// `Semaphore`), in `Object.wait` or `join`, or blocked entering a monitor, as in
    /// `"main" parks for a java.util.concurrent.CountDownLatch$Sync at Latch.main(Latch.java:7)`.
    /// Empty when one of them runs, sleeps or waits with a timeout (it may still wake the
    /// others), and when there are none. A thread in native code is `RUNNABLE` to the JVM
    /// (a read of a socket or a pipe), so such a wait is never counted.
    static func untimedWaits(in dump: String) -> [String] {
        var waits: [String] = []
        var current: (name: String, state: String, object: String?, frame: String?)?
        var stuck = true
        func finish() {
            guard let thread = current else { return }
            current = nil
            guard !ownThreads.contains(thread.name), !ownThreadPrefixes.contains(where: { thread.name.hasPrefix($0) }) else { return }
            let verb = thread.state.hasPrefix("BLOCKED") ? "waits to lock" : thread.state.contains("parking") ? "parks for" : "waits on"
            guard thread.state.hasPrefix("WAITING") || thread.state.hasPrefix("BLOCKED") else {
                stuck = false
                return
            }
            waits.append("\"\(thread.name)\" \(verb) \(thread.object ?? "a monitor")" + (thread.frame.map { " at \($0)" } ?? ""))
        }
        for raw in dump.split(separator: "\n", omittingEmptySubsequences: false) {
            let line = raw.trimmingCharacters(in: .whitespaces)
            if line.hasPrefix("JNI global refs") { break }
            // A Java thread's heading: `"name" #12 [tid] daemon prio=5 …`; the VM's own threads have no number.
            if line.hasPrefix("\""), let heading = line.firstMatch(of: #/^"(.*)" #\d+ /#) {
                finish()
                current = (String(heading.1), "", nil, nil)
            } else if line.hasPrefix("\"") {
                finish()
            } else if current != nil, line.hasPrefix("java.lang.Thread.State: ") {
                current?.state = String(line.dropFirst("java.lang.Thread.State: ".count))
            } else if current?.object == nil, line.hasPrefix("- parking to wait for") || line.hasPrefix("- waiting on") || line.hasPrefix("- waiting to lock"),
                      let object = line.firstMatch(of: /\((an? [^)]*)\)/) {
                current?.object = String(object.1)
            } else if current != nil, current?.frame == nil, line.hasPrefix("at "), let place = line.firstMatch(of: /^at (.*\(([^()@]*\.java:\d+)\))$/) {
                // The program's own frame: a class of the JDK names its module (`java.base@17.0.15/…`).
                current?.frame = String(place.1)
            }
        }
        finish()
        return stuck ? waits : []
    }

    /// Said of a JVM that added a shutdown hook, whose threads all wait with no timeout.
    static let shutdownHookReason = "it added a shutdown hook (Runtime.addShutdownHook), which a SIGTERM, SIGINT or SIGHUP runs before the JVM exits"

    /// Whether the JVM ran `Runtime.addShutdownHook`: HotSpot loads the class that keeps the
    /// hooks, `java.lang.ApplicationShutdownHooks`, only then (checked on OpenJDK 17 with
    /// and without a hook). jcmd's answer goes to `file`, removed after.
    static func addedShutdownHook(jcmd: String, pid: Int32, file: String) -> Bool {
        defer { unlink(file) }
        return ask(jcmd: jcmd, pid: pid, ["VM.class_hierarchy", "java.lang.ApplicationShutdownHooks"], file: file, timeoutSeconds: 10)?
            .contains("java.lang.ApplicationShutdownHooks") == true
    }

    /// The verdict on a quiet JVM, from its own thread dump (kept as `file`), whether it names
    /// a cycle, and whether the program added a shutdown hook: `deadlocked` with the
    /// Java-level deadlock it reports, else `deadlocked` when every thread of the program
    /// waits with no timeout (a cycle of latches, which the JVM does not report; a hook, a
    /// handler or a live process that could still end it is for the caller to weigh); nil
    /// when neither, or it could not be asked.
    static func judge(pid: Int32, jcmd: String, file: String, silentSeconds: Double) -> (verdict: ExecStallVerdict, cycle: Bool, shutdownHook: Bool)? {
        guard let dump = ask(jcmd: jcmd, pid: pid, file: file) else { return nil }
        let quiet = DurationText.format(silentSeconds)
        let source = "the JVM's own thread dump (jcmd \(pid) Thread.print, kept in \(file))"
        let cycle = deadlocks(in: dump)
        if !cycle.isEmpty {
            return (ExecStallVerdict(kind: .deadlocked, message: "no CPU time for \(quiet); \(source) found a Java-level deadlock: " + cycle.joined(separator: "; ")), true, false)
        }
        let waits = untimedWaits(in: dump)
        guard !waits.isEmpty else {
            unlink(file)
            return nil
        }
        let listed = waits.prefix(4).joined(separator: "; ") + (waits.count > 4 ? "; and \(waits.count - 4) more" : "")
        let hook = addedShutdownHook(jcmd: jcmd, pid: pid, file: file + ".hooks")
        return (ExecStallVerdict(kind: .deadlocked, message: "no CPU time for \(quiet); \(source) shows every thread of the program waiting with no timeout (\(listed)): none can wake another"),
                false, hook)
    }

    /// Said when a stall watch ran on a JVM it could not ask: its monitor waits go unjudged.
    static func notJudged(pid: Int32) -> String {
        "a JVM's synchronized waits are timed waits in HotSpot, and Strain found no jcmd beside its java or on PATH to ask it:"
            + " Java-level deadlocks were not judged (jstack \(pid) or jcmd \(pid) Thread.print names them)"
    }
}
