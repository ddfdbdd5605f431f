import Foundation
import StrainKit

/// Breaks the trial's process on purpose in the ways a hostile scenario could, to
/// show that each ends as that trial's outcome and never harms the runner.
///
/// Every kind is a real fault (a real SIGBUS, a real integer division by zero), not
/// `raise()`. `Scenarios/faults.yaml` runs them all with the outcome each must give.
struct FaultScenario: Scenario {
    static let name = "fault"
    /// Its workers wait, sleep or race a clock: a counted run records it as not countable.
    static let workDependsOnTiming = true
    static let summary = "breaks its own process on purpose (signals, runtime traps, floods, a broken result pipe, grandchildren, resource exhaustion): checks the harness, not your code"
    /// How the trial breaks.
    enum Kind: String, CaseIterable, Sendable {
        case busError = "bus-error", divideByZero = "divide-by-zero", fatalError = "fatal-error", indexOutOfRange = "index-out-of-range"
        case integerOverflow = "integer-overflow", cxxTerminate = "cxx-terminate", ignoreSigterm = "ignore-sigterm"
        case floodOutput = "flood-output", garbageResult = "garbage-result", exitZeroWithoutResult = "exit-zero-without-result"
        case exitMidTrial = "exit-mid-trial", grandchild, grandchildThenHang = "grandchild-then-hang"
        case sessionGrandchild = "session-grandchild", memoryExhaustion = "memory-exhaustion", threadBomb = "thread-bomb"
        case brokenInvariant = "broken-invariant", firstUseContention = "first-use-contention"
    }

    static let kind = Parameter<Kind>("kind", default: .busError,
                      help: "how the trial breaks: a signal (bus-error, divide-by-zero), a Swift runtime trap with its message (fatal-error, index-out-of-range, integer-overflow), std::terminate, a loop that ignores SIGTERM, megabytes on stdout and stderr, garbage or nothing on the result pipe, exit(3) mid-trial, a grandchild left behind (or one beside a hang, or one in a session of its own), memory or threads until a limit stops it, an invariant checked with `context.check` that does not hold (broken-invariant); and one that must not break: a lazy global's 300 ms first use on the trial's thread while another thread waits for it (first-use-contention, completed)")
    static let megabytes = Parameter<Int>("megabytes", in: 1...1024, default: 8, help: "how much flood-output writes to each of stdout and stderr")
    static let parameters: [any ParameterDeclaration] = [kind, megabytes]
    static let typicalOutcomes = [
        TypicalOutcome(.crashed, because: "signals and runtime traps end the child; the record keeps the trap's message"),
        TypicalOutcome(.harnessError, because: "garbage or no result on the pipe is the harness's to report, never hidden"),
        TypicalOutcome(.threw, because: "memory-exhaustion and thread-bomb throw once the limit stops them"),
        TypicalOutcome(.timedOut, because: "ignore-sigterm and grandchild-then-hang run to the deadline"),
        TypicalOutcome(.invariantViolated, because: "broken-invariant checks a count that is never what it must be"),
    ]
    static let starterRuns = [StarterRun(strategies: ["gcd-global", "thread(512KiB)", "thread(8MiB)"], expect: [.crashed])]

    struct Exhausted: Error, CustomStringConvertible {
        var description: String
    }

    let kind: Kind
    let megabytes: Int

    /// Reads `kind` and `megabytes`.
    init(parameters: ParameterValues) {
        kind = parameters[Self.kind]
        megabytes = parameters[Self.megabytes]
    }

    func prepare(context: ScenarioContext) throws -> Workload {
        let kind = kind
        let megabytes = megabytes
        return { executor in
            try executor.perform {
                try Self.fail(kind, megabytes: megabytes, context: context)
            }
        }
    }

    static func fail(_ kind: Kind, megabytes: Int, context: ScenarioContext) throws {
        // Values the optimizer cannot see through, so each trap happens at run time.
        let one = Int(ProcessInfo.processInfo.processIdentifier > 0 ? 1 : 0)
        switch kind {
        case .busError: FaultInjection.busError()
        case .divideByZero: _ = FaultInjection.divideByZero(Int32(one))
        case .fatalError: fatalError("the fault scenario called fatalError on purpose")
        case .indexOutOfRange:
            let values = [1, 2, 3]
            _ = values[values.count + one]
        case .integerOverflow:
            var value = Int.max - one
            value += one + one
            // Printed, so an optimised build cannot drop the sum and its overflow check.
            print(value)
        case .cxxTerminate: FaultInjection.cxxTerminate()
        case .ignoreSigterm:
            signal(SIGTERM, SIG_IGN)
            // A loop with no side effect may be removed by an optimised build: yield in it.
            while one > 0 { sched_yield() }
        case .floodOutput:
            let chunk = [UInt8](repeating: UInt8(ascii: "x"), count: 1 << 20)
            for _ in 0..<megabytes {
                _ = chunk.withUnsafeBytes { write(1, $0.baseAddress, $0.count) }
                _ = chunk.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
            }
        case .garbageResult:
            let garbage: [UInt8] = Array("RESULT {not json\u{0}\u{1B}[2J STRAIN-FAULT 9 garbage\n".utf8) + (0..<200).map { UInt8($0) }
            _ = garbage.withUnsafeBytes { write(3, $0.baseAddress, $0.count) }
            _exit(0)
        case .exitZeroWithoutResult: _exit(0)
        case .exitMidTrial: exit(3)
        case .grandchild: try spawnGrandchild()
        case .sessionGrandchild: try spawnGrandchild(newSession: true)
        case .grandchildThenHang:
            try spawnGrandchild()
            while one > 0 { sleep(60) }
        case .memoryExhaustion: try exhaustMemory()
        case .threadBomb: try threadBomb()
        case .brokenInvariant:
            // The one deterministic way to `invariantViolated` (a race's is not): a
            // count checked as a scenario checks its own state, and wrong every time.
            let counted = one + one
            try context.check(counted == 1, "the fault scenario broke its invariant on purpose: counted \(counted) items, 1 expected")
        case .firstUseContention: try contendForFirstUse()
        }
    }

    /// A lazy global: its first use runs the initializer under the Swift runtime's once
    /// lock, 300 ms.
    enum SlowFirstUse {
        static let value: Int = {
            usleep(300_000)
            return Int(getpid())
        }()
    }

    /// The trial's thread uses `SlowFirstUse.value` first, while a thread it started
    /// 50 ms before waits for the once lock it holds. Its own thread ids are cached in
    /// its TLS: a trial server's copy whose main thread kept the server's id held that
    /// lock as the server, and the two threads spun until the deadline.
    static func contendForFirstUse() throws {
        var thread = pthread_t()
        let status = pthread_create(&thread, nil, { _ in
            usleep(50_000)
            return UnsafeMutableRawPointer(bitPattern: SlowFirstUse.value)
        }, nil)
        guard status == 0 else { throw Exhausted(description: "could not start the waiting thread: errno \(status)") }
        let mine = SlowFirstUse.value
        var theirs: UnsafeMutableRawPointer?
        pthread_join(thread, &theirs)
        guard Int(bitPattern: theirs) == mine else { throw Exhausted(description: "the two threads read \(mine) and \(Int(bitPattern: theirs))") }
    }

    /// Starts `sleep 600` and leaves it behind: in the trial's process group, or
    /// with `newSession` in a session of its own (`setsid`), out of the group's
    /// reach, holding no descriptor of the trial's (so only a kill ends it early).
    static func spawnGrandchild(newSession: Bool = false) throws {
        var pid: pid_t = 0
        // bash, not sh: dash cannot close a descriptor above 9.
        let script = "for fd in /proc/$$/fd/*; do n=${fd##*/}; [ \"$n\" -gt 2 ] && eval \"exec $n>&-\"; done 2>/dev/null; exec /bin/sleep 600 </dev/null >/dev/null 2>&1"
        let words = newSession ? ["/bin/bash", "-c", script] : ["/bin/sleep", "600"]
        let argv: [UnsafeMutablePointer<CChar>?] = words.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        // POSIX_SPAWN_SETSID (glibc 2.26): the grandchild calls setsid before exec.
        if newSession { posix_spawnattr_setflags(&attributes, 0x80) }
        let status = posix_spawn(&pid, words[0], nil, &attributes, argv, environ)
        guard status == 0 else { throw Exhausted(description: "could not start the grandchild: errno \(status)") }
        let line = Array("grandchild \(pid)\n".utf8)
        _ = line.withUnsafeBytes { write(1, $0.baseAddress, $0.count) }
    }

    /// Allocates and touches 16 MiB blocks until malloc fails; refuses to start without an address-space limit.
    static func exhaustMemory() throws {
        var limit = rlimit()
        getrlimit(__rlimit_resource_t(9) /* RLIMIT_AS */, &limit)
        guard limit.rlim_cur != rlim_t.max else {
            throw Exhausted(description: "memory-exhaustion needs a memory limit; set `memory-limit:` in the suite")
        }
        var blocks: [UnsafeMutableRawPointer] = []
        blocks.reserveCapacity(4096)
        while blocks.count < 4096, let block = malloc(16 << 20) {
            memset(block, 1, 16 << 20)
            blocks.append(block)
        }
        let held = blocks.count * 16
        blocks.forEach { free($0) }
        throw Exhausted(description: "malloc failed after \(held) MiB under a limit of \(limit.rlim_cur >> 20) MiB")
    }

    /// Starts threads that sleep until thread creation fails or 20,000 run.
    static func threadBomb() throws {
        var started = 0
        while started < 20_000 {
            var thread = pthread_t()
            var attributes = pthread_attr_t()
            pthread_attr_init(&attributes)
            pthread_attr_setstacksize(&attributes, 64 * 1024)
            let status = pthread_create(&thread, &attributes, { _ in
                while true { sleep(60) }
            }, nil)
            pthread_attr_destroy(&attributes)
            guard status == 0 else {
                throw Exhausted(description: "thread creation failed after \(started) threads: errno \(status)")
            }
            started += 1
        }
    }
}
