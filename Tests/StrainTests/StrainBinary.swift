import Foundation
import StrainKit
import StrainRunner
import Testing

/// The built `strain` binary, run as a user would, with a time bound.
struct StrainBinary {
    struct Result {
        var status: Int32
        var stdout: String
        var stderr: String
    }

    /// `strain` beside the test bundle in the build folder.
    static var path: String {
        URL(fileURLWithPath: currentExecutablePath()).deletingLastPathComponent().appendingPathComponent("strain").path
    }

    /// Runs `strain ARGUMENTS`; past `timeout` seconds it is killed and the call
    /// throws `BoundedProcess.TimedOut`, naming the command line and the bound.
    static func run(_ arguments: [String], timeout: Double = 120, environment: [String: String] = [:]) async throws -> Result {
        let ended = try await BoundedProcess.run(path, arguments, environment: environment, timeout: timeout)
        return Result(status: ended.status, stdout: ended.stdout, stderr: ended.stderr)
    }

    /// Runs `strain ARGUMENTS` with a pseudo-terminal as its standard input, output
    /// and error (Python's `pty`), as a user at a terminal would: `stdout` is all it
    /// drew, escape sequences and carriage returns included. The terminal reports no
    /// size (0×0), so strain falls back to `COLUMNS`.
    static func runInTerminal(_ arguments: [String], timeout: Double = 120, environment: [String: String] = [:]) async throws -> Result {
        let script = """
            import os, pty, sys
            pid, fd = pty.fork()
            if pid == 0:
                os.execv(sys.argv[1], sys.argv[1:])
            drawn = bytearray()
            while True:
                try:
                    chunk = os.read(fd, 65536)
                except OSError:
                    break
                if not chunk:
                    break
                drawn += chunk
            _, status = os.waitpid(pid, 0)
            sys.stdout.buffer.write(bytes(drawn))
            sys.exit(os.waitstatus_to_exitcode(status) % 256)
            """
        let ended = try await BoundedProcess.run("/usr/bin/env", ["python3", "-c", script, path] + arguments, environment: environment, timeout: timeout)
        return Result(status: ended.status, stdout: ended.stdout, stderr: ended.stderr)
    }

    /// Writes `yaml` as a suite in a new temporary folder, runs it, and reads run.json.
    /// `under`: the folder to make it in (the process's own by default; a test of
    /// 80-column output gives the temporary directory, whose paths are shorter).
    static func runSuite(_ yaml: String, timeout: Double = 120, environment: [String: String] = [:],
                         under parent: URL = TestFolders.root) async throws -> (Result, RunRecord?, String) {
        let folder = parent.appendingPathComponent("strain-test-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let suite = (folder as NSString).appendingPathComponent("suite.yaml")
        try yaml.write(toFile: suite, atomically: true, encoding: .utf8)
        let out = (folder as NSString).appendingPathComponent("out")
        let result = try await run(["run", suite, "--out", out], timeout: timeout, environment: environment)
        let record = try? RunRecordFile.read(from: (out as NSString).appendingPathComponent("run.json"))
        return (result, record, out)
    }

    /// `runSuite` for a test that reads only the result and the record: the suite's
    /// folder is removed once the record is read (the returned output path is gone).
    static func runSuiteLeavingNothing(_ yaml: String, timeout: Double = 120, environment: [String: String] = [:]) async throws -> (Result, RunRecord?, String) {
        let ran = try await runSuite(yaml, timeout: timeout, environment: environment)
        try? FileManager.default.removeItem(atPath: (ran.2 as NSString).deletingLastPathComponent)
        return ran
    }
}

extension RunRecord {
    func trials(_ strategy: String, profile: String = "linux") -> [TrialRecord] {
        trials.filter { $0.strategy.description == strategy && $0.profile.rawValue == profile }
    }
}

/// A tool found on PATH (`/usr/bin/env NAME …`), run to its end: its status and
/// its standard output and error together. Past `timeout` seconds it is killed
/// and the call throws `BoundedProcess.TimedOut`.
enum Tool {
    static func run(_ arguments: [String], directory: String? = nil, timeout: Double = 120) async throws -> (status: Int32, output: String) {
        let ended = try await BoundedProcess.run("/usr/bin/env", arguments, directory: directory, environment: toolchainEnvironment(arguments),
                                                 timeout: timeout, mergingOutput: true)
        return (ended.status, ended.stdout)
    }

    /// For `swift` and `swiftc`: a `TMPDIR` inside the test run's own folder. The
    /// Swift driver makes a `TemporaryDirectory.XXXXXX` in `TMPDIR` for every
    /// invocation and leaves it there when it compiles nothing (swift-driver's
    /// `ArgsResolver` creates it with `removeTreeOnDeinit: false`): `swift --version`,
    /// and SwiftPM's `swiftc -print-target-info` in every `swift build`, `test` and
    /// `package`. In `/tmp` a test run left hundreds; here they go with the folder.
    static func toolchainEnvironment(_ arguments: [String]) -> [String: String] {
        guard let program = arguments.first, ["swift", "swiftc"].contains(program) else { return [:] }
        return ["TMPDIR": TestFolders.root.path]
    }
}

/// On overlap: Swift Testing runs test functions on Swift concurrency's cooperative
/// pool, which is as wide as the machine has cores (2 here), and runs different suites
/// at once (`.serialized` orders tests only inside one suite). A test that waits for a
/// child process, a pipe or a clock on a pool thread holds that thread for as long as
/// it waits, and with both held every other test waits for a thread while its time
/// limit runs (issue 36: nine tests ran out of 10-minute limits that way). So no test
/// blocks a pool thread: everything that waits goes through `OffPool` (a thread of its
/// own, awaited) or suspends (`pause`), and `BlockingCallLintTests` and
/// `OffPoolTests` keep it so.
///
/// The end-to-end suites still share the machine's two cores with each other by
/// design. No verdict may therefore depend on load: a stall threshold is set far above
/// a late wake-up, a hang is told from a finished trial by its deadline (tens of
/// seconds) or by a block that never ends, a planted regression is ten times the work
/// against thresholds of 3×, and speed figures live in the benchmark suites. What
/// cannot be shared is locked: SwiftPM's scratch folder (`FixturePackage`'s lock).
///
/// Every external process a test starts to its end goes through here: its output
/// and errors are read at once (a child that fills one pipe while the test reads
/// the other cannot deadlock), and a hang is killed at `timeout` and fails the
/// test with the command line it was waiting for, instead of stalling the suite.
enum BoundedProcess {
    struct Ended: Sendable {
        /// The exit status, or the number of the signal that ended it (as `Process` gives).
        var status: Int32
        var signaled: Bool
        var stdout: String
        var stderr: String
    }

    struct TimedOut: Error, CustomStringConvertible {
        var commandLine: String
        var seconds: Double
        var description: String { "still running after \(seconds) s, killed: \(commandLine)" }
    }

    /// Runs `executable ARGUMENTS` to its end, waiting on a thread of its own: the
    /// calling task suspends and its pool thread runs other tests meanwhile.
    /// `mergingOutput`: errors go to the same pipe as output (`stdout` holds both,
    /// `stderr` is empty).
    static func run(_ executable: String, _ arguments: [String], directory: String? = nil, environment: [String: String] = [:],
                    timeout: Double, mergingOutput: Bool = false) async throws -> Ended {
        _ = ReleaseBundle.startedForTheWholeSuite
        return try await slots.withLock(ahead: goesAhead) {
            try await OffPool.run("bounded \((executable as NSString).lastPathComponent)") {
                try runWaiting(executable, arguments, directory: directory, environment: environment, timeout: timeout, mergingOutput: mergingOutput)
            }
        }
    }

    /// How many of these children run at once in the test process; the rest wait
    /// their turn before starting, and `timeout` counts from the start. Swift Testing
    /// starts every test at once and nothing here holds a pool thread while it waits,
    /// so without a limit a hundred children shared two cores at the start of a run,
    /// and a `strain baseline save` ran past its 30 s bound in CI (stop 38's run).
    /// Background runners (`BackgroundStrain`, `ProgramRun`) take no slot: a test's
    /// one-shot command may need one of them to progress.
    static let slots = AsyncLock(slots: 6)

    /// Whether this task's children go ahead of the others waiting for a slot: set
    /// inside a compile slot (`FixturePackage.compiling`), whose holder would
    /// otherwise keep one of the two compile slots while it waited here behind a
    /// hundred short children (a fresh clone's release bundle build started 285 s
    /// into the test run, all of it in this queue).
    @TaskLocal static var goesAhead = false

    /// The waiting itself; only ever on an `OffPool` thread.
    private static func runWaiting(_ executable: String, _ arguments: [String], directory: String?, environment: [String: String],
                                   timeout: Double, mergingOutput: Bool) throws -> Ended {
        OffPool.assertOffPool()
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        if let directory { process.currentDirectoryURL = URL(fileURLWithPath: directory) }
        if !environment.isEmpty {
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        }
        let output = Pipe()
        let error = Pipe()
        process.standardOutput = output
        process.standardError = mergingOutput ? output : error
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let giveUp = Date().addingTimeInterval(timeout)
        // Each pipe read to its end on a thread of its own (not a GCD worker: the
        // global pool grows by one thread a second, and tests use it too).
        let readers = DispatchGroup()
        let collected = Collected()
        OffPool.detach("read stdout", group: readers) { collected.stdout = output.fileHandleForReading.readDataToEndOfFile() } // off the pool: a thread of its own
        if !mergingOutput {
            OffPool.detach("read stderr", group: readers) { collected.stderr = error.fileHandleForReading.readDataToEndOfFile() } // off the pool: a thread of its own
        }
        let commandLine = ([executable] + arguments).map { $0.contains(" ") || $0.isEmpty ? "'\($0)'" : $0 }.joined(separator: " ")
        if readers.wait(timeout: .now() + timeout) == .timedOut { // off the pool: runWaiting runs on an OffPool thread
            // The whole tree: a hung `swift build` under a script must not outlive the test.
            Processes.killTree(process.processIdentifier)
            // What it started may hold the pipes open; give them a moment, no more.
            _ = readers.wait(timeout: .now() + 5) // off the pool: runWaiting runs on an OffPool thread
            process.waitUntilExit() // off the pool: runWaiting runs on an OffPool thread
            throw TimedOut(commandLine: commandLine, seconds: timeout)
        }
        // Both pipes closed: the process has ended or is about to; a child that closed
        // its output and went on running is still bounded, by the same deadline.
        while process.isRunning && Date() < giveUp { usleep(1_000) } // off the pool: runWaiting runs on an OffPool thread
        if process.isRunning {
            Processes.killTree(process.processIdentifier)
            process.waitUntilExit() // off the pool: runWaiting runs on an OffPool thread
            throw TimedOut(commandLine: commandLine, seconds: timeout)
        }
        process.waitUntilExit() // off the pool: runWaiting runs on an OffPool thread
        return Ended(status: process.terminationStatus, signaled: process.terminationReason == .uncaughtSignal,
                     stdout: String(decoding: collected.stdout, as: UTF8.self), stderr: String(decoding: collected.stderr, as: UTF8.self))
    }

    /// Written by the reader threads, read after they are done (the group's wait orders them).
    private final class Collected: @unchecked Sendable {
        var stdout = Data()
        var stderr = Data()
    }
}

/// Blocking work kept off Swift concurrency's cooperative pool: each call gets a
/// thread of its own, and the caller suspends until it is done. For waits on child
/// processes, pipes, semaphores and clocks that a test cannot express as `await`.
enum OffPool {
    /// Runs `body` on a new thread (with `stackBytes` of stack, when given) and
    /// suspends until it returns or throws.
    static func run<T: Sendable, E: Error>(_ name: String = "off-pool", stackBytes: Int? = nil,
                                           _ body: @escaping @Sendable () throws(E) -> T) async throws(E) -> T {
        let result: Result<T, E> = await withCheckedContinuation { continuation in
            let thread = Thread { continuation.resume(returning: Result { () throws(E) -> T in try body() }) }
            thread.name = "strain-test.\(name)"
            if let stackBytes { thread.stackSize = stackBytes }
            thread.start()
        }
        return try result.get()
    }

    /// Runs `body` as a block on `DispatchQueue.global()` (a GCD worker, never the
    /// calling thread) and suspends until it returns.
    static func onGCDWorker<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            DispatchQueue.global().async { continuation.resume(returning: body()) }
        }
    }

    /// Starts `body` on a new thread, entered in `group` until it returns.
    static func detach(_ name: String, group: DispatchGroup, _ body: @escaping @Sendable () -> Void) {
        group.enter()
        let thread = Thread {
            body()
            group.leave()
        }
        thread.name = "strain-test.\(name)"
        thread.start()
    }

    /// Records an issue when a blocking wait is about to run inside a task, that is on
    /// a cooperative thread (or an actor's), where it would hold that thread.
    static func assertOffPool(sourceLocation: Testing.SourceLocation = #_sourceLocation) {
        if withUnsafeCurrentTask(body: { $0 != nil }) {
            Issue.record("a blocking wait ran inside a task, holding a cooperative thread: run it through OffPool.run", sourceLocation: sourceLocation)
        }
    }
}

/// Suspends the calling task for `microseconds` (the `usleep` of a test: it gives its
/// thread back to the pool while it waits).
func pause(_ microseconds: Int) async {
    try? await Task.sleep(nanoseconds: UInt64(max(0, microseconds)) * 1_000)
}

/// Waits up to `seconds` for `condition`, looking every `every` microseconds; true
/// when it held. The looking is done on a thread of its own: a task that slept
/// between looks would wait for a pool thread to look again, and a busy suite can
/// keep it waiting longer than what it watches lasts.
func eventually(within seconds: Double, every microseconds: Int = 20_000, _ condition: @escaping @Sendable () -> Bool) async -> Bool {
    await OffPool.run("eventually") {
        let giveUp = Date().addingTimeInterval(seconds)
        while Date() < giveUp {
            if condition() { return true }
            usleep(UInt32(microseconds)) // off the pool: inside OffPool.run
        }
        return condition()
    }
}

/// Tests that fault on purpose inside the test process itself (the fault walk's and
/// the walk comparison's overflows) install a SIGSEGV handler for the time of their
/// fault and then put Swift's back: two at once, one restores Swift's while the other
/// overflows, and the test process dies in Swift's backtracer. One at a time.
enum InProcessFaults {
    static let lock = AsyncLock()
}

/// A value made once per test process by async work (a build), shared by every test
/// that asks; callers that come while it is being made wait for the same one. A
/// failure is kept unless `retryingFailures`, when the next caller tries again.
actor AsyncOnce<T: Sendable> {
    private var task: Task<T, any Error>?
    private let retryingFailures: Bool
    private let make: @Sendable () async throws -> T

    init(retryingFailures: Bool = false, _ make: @escaping @Sendable () async throws -> T) {
        self.retryingFailures = retryingFailures
        self.make = make
    }

    func value() async throws -> T {
        if task == nil { task = Task { try await make() } }
        let current = task!
        do {
            return try await current.value
        } catch {
            if retryingFailures, task == current { task = nil }
            throw error
        }
    }
}

/// At most `slots` holders at a time (one, by default: a lock), for async callers:
/// a waiting task suspends instead of blocking its thread (a `Mutex` held across an
/// `await` would block it). Waiters are served in the order they came, except that a
/// waiter who asks to go `ahead` is served before every ordinary one (after the
/// `ahead` waiters who came before it): the head of the suite's longest chain of work.
actor AsyncLock {
    private var free: Int
    private var waiting: [CheckedContinuation<Void, Never>] = []
    /// How many of `waiting`, from its front, asked to go ahead.
    private var waitingAhead = 0

    init(slots: Int = 1) {
        precondition(slots >= 1, "AsyncLock needs at least one slot")
        free = slots
    }

    /// Waiters not yet let in.
    var waiters: Int { waiting.count }

    private func acquire(ahead: Bool) async {
        if free > 0 {
            free -= 1
            return
        }
        // release() hands its slot straight to the first waiter.
        await withCheckedContinuation { continuation in
            if ahead {
                waiting.insert(continuation, at: waitingAhead)
                waitingAhead += 1
            } else {
                waiting.append(continuation)
            }
        }
    }

    private func release() {
        if waiting.isEmpty { free += 1; return }
        if waitingAhead > 0 { waitingAhead -= 1 }
        waiting.removeFirst().resume()
    }

    /// Runs `body` holding the lock; `ahead`, before every ordinary waiter.
    nonisolated func withLock<T>(ahead: Bool = false, _ body: () async -> T) async -> T {
        await acquire(ahead: ahead)
        let value = await body()
        await release()
        return value
    }

    /// Runs `body` holding the lock; `ahead`, before every ordinary waiter.
    nonisolated func withLock<T>(ahead: Bool = false, _ body: () async throws -> T) async throws -> T {
        await acquire(ahead: ahead)
        do {
            let value = try await body()
            await release()
            return value
        } catch {
            await release()
            throw error
        }
    }
}

/// Checks a run.json against the committed JSON Schema with Python's
/// `jsonschema` (installed by .ci/run), so the schema and the writer cannot drift apart.
enum SchemaCheck {
    static var schemaPath: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Sources/StrainRecords/RunRecord.schema.json").path
    }

    static func validate(_ runJSON: String) async throws -> (valid: Bool, output: String) {
        let (status, output) = try await Tool.run(["python3", "-c", """
            import json, sys, jsonschema
            schema = json.load(open(sys.argv[1]))
            jsonschema.Draft202012Validator.check_schema(schema)
            jsonschema.Draft202012Validator(schema).validate(json.load(open(sys.argv[2])))
            """, schemaPath, runJSON])
        return (status == 0, output)
    }
}

/// A `strain` started in the background, its output in files, so a test can
/// signal it mid-run; `finish` waits with a bound and kills it past that.
// @unchecked Sendable: every stored property is set in init and never changed; its
// waits poll the process and files from one OffPool thread at a time.
final class BackgroundStrain: @unchecked Sendable {
    let process = Process()
    let stdoutPath: String
    let stderrPath: String
    /// `strain ARGUMENTS`, for the message of a run that had to be killed.
    let commandLine: String

    /// `shellPrefix`: shell commands run first, in the process that then becomes
    /// strain (`exec 7</dev/null` leaves it a descriptor it did not open).
    init(_ arguments: [String], in folder: String, shellPrefix: String? = nil) throws {
        commandLine = ([StrainBinary.path] + arguments).joined(separator: " ")
        stdoutPath = (folder as NSString).appendingPathComponent("stdout-\(UUID().uuidString)")
        stderrPath = (folder as NSString).appendingPathComponent("stderr-\(UUID().uuidString)")
        _ = FileManager.default.createFile(atPath: stdoutPath, contents: nil)
        _ = FileManager.default.createFile(atPath: stderrPath, contents: nil)
        if let shellPrefix {
            process.executableURL = URL(fileURLWithPath: "/bin/sh")
            process.arguments = ["-c", shellPrefix + "; exec \"$0\" \"$@\"", StrainBinary.path] + arguments
        } else {
            process.executableURL = URL(fileURLWithPath: StrainBinary.path)
            process.arguments = arguments
        }
        process.currentDirectoryURL = URL(fileURLWithPath: folder)
        process.standardOutput = FileHandle(forWritingAtPath: stdoutPath)
        process.standardError = FileHandle(forWritingAtPath: stderrPath)
        try process.run()
    }

    var pid: Int32 { process.processIdentifier }

    /// The pids of the runner's trial children (its trial server left out),
    /// waiting up to `seconds` for one to appear.
    func children(within seconds: Double = 20) async -> [Int32] {
        await OffPool.run("children") { self.childrenWaiting(within: seconds) }
    }

    /// The same, waiting on the calling thread: for a sequence run on one `OffPool` thread.
    func childrenWaiting(within seconds: Double) -> [Int32] {
        let giveUp = Date().addingTimeInterval(seconds)
        // A child between fork and exec still shows the runner's own command line: it may
        // become the trial server or the symbolizer, so it is not taken for a trial (under
        // load that window is long enough to be seen: a CI run took the trial server so).
        let own = FileManager.default.contents(atPath: "/proc/\(pid)/cmdline")
        while Date() < giveUp {
            let pids = allChildren().filter {
                !Processes.isTrialServer($0) && !Processes.isSymbolizer($0) && FileManager.default.contents(atPath: "/proc/\($0)/cmdline") != own
            }
            if !pids.isEmpty { return pids }
            usleep(20_000) // off the pool: childrenWaiting runs on an OffPool thread
        }
        return []
    }

    /// The runner's trial server, waiting up to `seconds` for it to appear.
    func trialServer(within seconds: Double = 20) async -> Int32? {
        await OffPool.run("trial server") { self.trialServerWaiting(within: seconds) }
    }

    private func trialServerWaiting(within seconds: Double) -> Int32? {
        let giveUp = Date().addingTimeInterval(seconds)
        while Date() < giveUp {
            if let server = allChildren().first(where: Processes.isTrialServer) { return server }
            usleep(5_000) // off the pool: trialServerWaiting runs on an OffPool thread
        }
        return nil
    }

    private func allChildren() -> [Int32] {
        let text = (try? String(contentsOfFile: "/proc/\(pid)/task/\(pid)/children", encoding: .utf8)) ?? ""
        return text.split(separator: " ").compactMap { Int32($0) }.filter(Processes.isAlive)
    }

    /// Waits until stdout contains `text` (or `seconds` pass).
    @discardableResult func waitForOutput(_ text: String, seconds: Double = 30) async -> Bool {
        let stdoutPath = self.stdoutPath
        return await eventually(within: seconds) { (try? String(contentsOfFile: stdoutPath, encoding: .utf8))?.contains(text) == true }
    }

    func signal(_ number: Int32) { kill(pid, number) }

    /// Once stdout contains `text` (within `seconds`), runs `action` at once on the same
    /// thread of its own: for a signal that must reach the runner while a trial still
    /// runs, which a task resumed late on a busy pool could miss. Nil when it never did.
    func whenOutput<T: Sendable>(_ text: String, seconds: Double = 30, _ action: @escaping @Sendable (BackgroundStrain) -> T) async -> T? {
        let stdoutPath = self.stdoutPath
        return await OffPool.run("when output") {
            let giveUp = Date().addingTimeInterval(seconds)
            while Date() < giveUp {
                if (try? String(contentsOfFile: stdoutPath, encoding: .utf8))?.contains(text) == true { return action(self) }
                usleep(20_000) // off the pool: inside OffPool.run
            }
            return nil
        }
    }

    /// Waits for the runner to exit, killing it after `timeout` seconds.
    func finish(timeout: Double = 60) async -> StrainBinary.Result {
        let process = self.process
        _ = await eventually(within: timeout) { !process.isRunning }
        if process.isRunning {
            kill(pid, SIGKILL)
            Issue.record("still running after \(timeout) s, killed: \(commandLine)")
        }
        // Killed or ended: the reap is at most a moment, still not on a pool thread.
        await OffPool.run("reap strain") { process.waitUntilExit() } // off the pool: inside OffPool.run
        let out = (try? String(contentsOfFile: stdoutPath, encoding: .utf8)) ?? ""
        let err = (try? String(contentsOfFile: stderrPath, encoding: .utf8)) ?? ""
        let status = process.terminationReason == .uncaughtSignal ? 128 + process.terminationStatus : process.terminationStatus
        return StrainBinary.Result(status: status, stdout: out, stderr: err)
    }
}

/// Processes as the kernel sees them.
enum Processes {
    /// Whether `pid` is alive: it exists and is not a zombie.
    static func isAlive(_ pid: Int32) -> Bool {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { return false }
        let state = stat[stat.index(close, offsetBy: 2)]
        return state != "Z" && state != "X"
    }

    /// Whether `pid` is a trial server, by its command line (`strain _trial-server`;
    /// a trial copied from it renames itself `strain _trial` first thing).
    static func isTrialServer(_ pid: Int32) -> Bool {
        let arguments = commandLine(of: pid)
        return arguments.count == 2 && arguments[1] == "_trial-server"
    }

    /// Whether `pid` is the runner's llvm-symbolizer, which names allocation sites
    /// as trials finish (it reads its queries from the runner, so it ends with it).
    static func isSymbolizer(_ pid: Int32) -> Bool {
        let program = commandLine(of: pid).first ?? ""
        return program.hasSuffix("/llvm-symbolizer") || program == "llvm-symbolizer"
    }

    /// Waits up to `seconds` for `pid` to be gone; true when it is.
    static func waitUntilGone(_ pid: Int32, seconds: Double = 10) async -> Bool {
        await eventually(within: seconds) { !isAlive(pid) }
    }

    /// `pid`'s command line, its arguments split at their NUL bytes; empty when it is gone.
    static func commandLine(of pid: Int32) -> [String] {
        guard let bytes = FileManager.default.contents(atPath: "/proc/\(pid)/cmdline") else { return [] }
        return bytes.split(separator: 0).map { String(decoding: $0, as: UTF8.self) }
    }

    /// `pid`'s parent, from its `stat`; nil when it is gone.
    static func parent(of pid: Int32) -> Int32? {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { return nil }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        return fields.count > 1 ? Int32(fields[1]) : nil
    }

    /// `pid`'s descendants, children first, read from /proc (each process's parent in its `stat`).
    static func descendants(of pid: Int32) -> [Int32] {
        var parents: [Int32: Int32] = [:]
        for entry in (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? [] {
            if let child = Int32(entry), let parent = parent(of: child) { parents[child] = parent }
        }
        var found: [Int32] = [], frontier = [pid]
        while let next = frontier.popLast() {
            let children = parents.filter { $0.value == next }.map(\.key)
            found += children
            frontier += children
        }
        return found
    }

    /// Kills `pid` and everything it started (a `swift build`'s compilers, a
    /// script's commands), the descendants first so none is reparented away.
    static func killTree(_ pid: Int32) {
        for descendant in descendants(of: pid).reversed() { kill(descendant, SIGKILL) }
        kill(pid, SIGKILL)
    }

    /// Every live pid whose command line holds `text` (in any argument): found
    /// wherever a process was re-parented, and however late it was started.
    static func running(commandLineContaining text: String) -> [Int32] {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return entries.compactMap { Int32($0) }.filter { pid in
            pid != getpid() && commandLine(of: pid).contains { $0.contains(text) } && isAlive(pid)
        }
    }

    /// Every live pid in process group `group`.
    static func members(ofGroup group: Int32) -> [Int32] {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return entries.compactMap { Int32($0) }.filter { pid in
            guard isAlive(pid), let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
                  let close = stat.lastIndex(of: ")") else { return false }
            let fields = stat[stat.index(close, offsetBy: 2)...].split(separator: " ")
            return fields.count > 2 && Int32(fields[2]) == group
        }
    }
}

/// Where this test process makes its temporary folders: one folder for the process
/// (`strain-tests-PID` in the temporary directory), removed when the process exits,
/// so a test that does not remove its own leaves nothing behind. Set
/// STRAIN_KEEP_TEST_FOLDERS=1 to keep it (to read a failed test's files); the folder of
/// a test process that was killed is removed by the next test process.
enum TestFolders {
    static let root: URL = {
        let temporary = FileManager.default.temporaryDirectory
        for name in (try? FileManager.default.contentsOfDirectory(atPath: temporary.path)) ?? [] where name.hasPrefix("strain-tests-") {
            guard let pid = Int32(name.dropFirst("strain-tests-".count)), pid != getpid(), kill(pid, 0) == -1, errno == ESRCH else { continue }
            try? FileManager.default.removeItem(at: temporary.appendingPathComponent(name))
        }
        let root = temporary.appendingPathComponent("strain-tests-\(getpid())")
        try? FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        if ProcessInfo.processInfo.environment["STRAIN_KEEP_TEST_FOLDERS"] != "1" {
            atexit { try? FileManager.default.removeItem(at: TestFolders.root) }
        }
        return root
    }()
}

/// A new temporary folder for one test.
func temporaryFolder() throws -> String {
    let folder = TestFolders.root.appendingPathComponent("strain-test-\(UUID().uuidString)").path
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    return folder
}

/// The bound every test's processes run under, on processes that misbehave.
@Suite struct BoundedProcessTests {
    /// The Swift driver leaves a folder in `TMPDIR` for `swiftc --version` (see
    /// `Tool.toolchainEnvironment`); a test's run of it must leave it in the test
    /// run's own folder, which goes when the run ends, and not in `/tmp`.
    @Test func theSwiftDriversLeftoverFolderGoesIntoTheTestRunsOwnFolder() async throws {
        let root = TestFolders.root.path
        func leftovers() -> Set<String> {
            Set(((try? FileManager.default.contentsOfDirectory(atPath: root)) ?? []).filter { $0.hasPrefix("TemporaryDirectory.") })
        }
        let before = leftovers()
        let (status, output) = try await Tool.run(["swiftc", "--version"], timeout: 60)
        #expect(status == 0, "\(output)")
        #expect(!leftovers().subtracting(before).isEmpty,
                "swiftc --version left no TemporaryDirectory.* in \(root): either it went to /tmp, or the driver no longer leaves one (then Tool.toolchainEnvironment can go)")
    }

    @Test func aProcessStillRunningAtItsBoundIsKilledAndTheCallSaysWhatItWaitedFor() async throws {
        await #expect {
            try await BoundedProcess.run("/bin/sleep", ["30"], timeout: 1)
        } throws: { error in
            "\(error)" == "still running after 1.0 s, killed: /bin/sleep 30"
        }
    }

    @Test func aTimedOutProcessIsKilledWithEverythingItStarted() async throws {
        let file = TestFolders.root.appendingPathComponent("strain-bounded-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: file) }
        await #expect(throws: BoundedProcess.TimedOut.self) {
            // The grandchild holds none of the pipes: nothing but the kill ends it.
            try await BoundedProcess.run("/bin/sh", ["-c", "sleep 100000 > /dev/null 2>&1 & echo $! > '\(file)'; wait"], timeout: 2)
        }
        let text = try String(contentsOfFile: file, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        let grandchild = try #require(Int32(text), "the shell wrote its child's pid: \(text)")
        let gone = await Processes.waitUntilGone(grandchild, seconds: 10)
        if !gone { kill(grandchild, SIGKILL) }
        #expect(gone, "the shell's own child, sleep \(grandchild), died with it")
    }

    @Test func aChildThatFillsItsErrorPipeBeforeItsOutputIsReadToTheEnd() async throws {
        // Read one pipe after the other, a child that writes more than a pipe holds
        // (64 KiB) to standard error first blocks until it is killed.
        let ended = try await BoundedProcess.run("/bin/sh", ["-c", "head -c 1048576 /dev/zero >&2; echo done"], timeout: 20)
        #expect(ended.status == 0)
        #expect(ended.stdout == "done\n")
        #expect(ended.stderr.utf8.count == 1 << 20)
    }
}
