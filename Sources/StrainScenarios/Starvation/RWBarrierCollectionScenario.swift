import Dispatch
import Foundation
import StrainHelpers
import StrainKit
import Synchronization

/// The "thread-safe array" of the blog post: reads `sync` on a concurrent
/// queue, writes as barriers; beside it the same array behind an
/// `NSRecursiveLock`. Under load, reads that arrive while a barrier is pending
/// block their worker; when blocked workers use up the pool, the barrier they
/// wait for can never get a thread.
///
/// Here the pool stops at 255 threads, Apple platforms stop at 64: the trial
/// records the most workers blocked at once, and the record's verdict says
/// where that hangs.
struct RWBarrierCollectionScenario: Scenario {
    static let name = "rw-barrier-collection"
    /// Its workers wait, sleep or race a clock: a counted run records it as not countable.
    static let workDependsOnTiming = true
    static let summary = "reader/writer array on a concurrent queue with barrier writes, or behind NSRecursiveLock, under fan-out load: count, contents, peak blocked workers"
    /// How the array is guarded.
    enum Guard: String, CaseIterable, Sendable {
        case asyncBarrier = "async-barrier", syncBarrier = "sync-barrier", recursiveLock = "recursive-lock"
    }

    /// What the work items do.
    enum Load: String, CaseIterable, Sendable {
        case blog, blockingReads = "blocking-reads"
    }

    static let guardKind = Parameter<Guard>("guard", default: .asyncBarrier,
                                            help: "async-barrier / sync-barrier: concurrent DispatchQueue, reads sync, writes async(flags: .barrier) or sync(flags: .barrier); recursive-lock: NSRecursiveLock")
    static let load = Parameter<Load>("load", default: .blog,
                                      help: "blog: concurrentPerform fanning out appends, as the post's test did; blocking-reads: mostly reads, every write a slow barrier")
    static let operations = Parameter<Int>("operations", in: 1...1_000_000, default: 1000, help: "work items fanned out")
    static let writeEvery = Parameter<Int>("write-every", in: 1...10_000, default: 10, help: "blocking-reads: one item in this many writes, the rest read")
    static let barrier = Parameter<Int>("barrier-ms", in: 0...10_000, default: 0, help: "how long each write holds the collection (ms): a slow barrier")
    static let parameters: [any ParameterDeclaration] = [guardKind, load, operations, writeEvery, barrier]
    static let appends = Metric<Int>.count("appends", better: nil, noise: .deterministic, summary: "appends the work items made")
    static let metrics: [any MetricDeclaration] = [appends]
    static let typicalOutcomes = [
        TypicalOutcome(.completed, because: "the blog's load finishes here in milliseconds; the record says how many workers were blocked at once and whether a platform's cap would hang"),
        TypicalOutcome(.starved, because: "blocking reads behind slow barriers use up the pool, and the barrier they wait for never gets a thread"),
    ]
    static let starterRuns = [StarterRun(strategies: ["gcd-global", "thread(512KiB)", "thread(8MiB)"])]

    let guardKind: Guard
    let load: Load
    let operations: Int
    let writeEvery: Int
    let barrierMilliseconds: Int

    /// Reads the guard, the load and the counts.
    init(parameters: ParameterValues) {
        guardKind = parameters[Self.guardKind]
        load = parameters[Self.load]
        operations = parameters[Self.operations]
        writeEvery = parameters[Self.writeEvery]
        barrierMilliseconds = parameters[Self.barrier]
    }

    func prepare(context: ScenarioContext) throws -> Workload {
        let scenario = self
        return { executor in try scenario.run(on: executor, context: context) }
    }

    func run(on executor: any StrategyExecutor, context: ScenarioContext) throws {
        let array: any GuardedArray = switch guardKind {
        case .recursiveLock: RecursiveLockArray(context: context)
        case .syncBarrier: ConcurrentQueueArray(context: context, syncBarrier: true)
        case .asyncBarrier: ConcurrentQueueArray(context: context, syncBarrier: false)
        }
        let finished = Countdown()
        let operations = operations
        let writeEvery = load == .blog ? 1 : writeEvery
        let barrier = barrierMilliseconds
        let written = Mutex<[Int]>([])
        context.heartbeat.queued(operations)

        let item: @Sendable (Int) -> Void = { index in
            executor.submit {
                context.unit {
                    if index % writeEvery == 0 {
                        array.append(index, holdingMilliseconds: barrier)
                        written.withVisibleLock { $0.append(index) }
                    } else {
                        _ = array.element(at: index)
                    }
                }
                finished.add()
            }
        }
        if load == .blog {
            // The post's test: concurrentPerform fanning out async work that appends.
            DispatchQueue.concurrentPerform(iterations: operations, execute: item)
        } else {
            for index in 0..<operations { item(index) }
        }
        finished.wait(for: operations, seconds: nil)

        let expected = written.withVisibleLock { $0 }.sorted()
        let contents = array.snapshot().sorted()
        context.record(Self.appends, expected.count)
        try context.check(contents.count == expected.count, "the array holds \(contents.count) elements after \(expected.count) appends")
        try context.check(contents == expected, "the array's contents differ from what was appended (\(Set(expected).subtracting(contents).count) missing)")
    }
}

/// The collection under test, whatever guards it.
protocol GuardedArray: Sendable {
    func append(_ value: Int, holdingMilliseconds: Int)
    func element(at index: Int) -> Int?
    func snapshot() -> [Int]
}

/// The blog's reader/writer array: concurrent reads with `sync`, writes as barriers.
///
/// `@unchecked Sendable`: `storage` is touched only inside blocks on `queue`,
/// reads side by side and writes as barriers, which run alone.
final class ConcurrentQueueArray: GuardedArray, @unchecked Sendable {
    private let queue = DispatchQueue(label: "strain.rw-array", attributes: .concurrent)
    private var storage: [Int] = []  // touched only on `queue`
    private let context: ScenarioContext
    private let syncBarrier: Bool

    init(context: ScenarioContext, syncBarrier: Bool) {
        self.context = context
        self.syncBarrier = syncBarrier
    }

    func append(_ value: Int, holdingMilliseconds: Int) {
        let context = context
        let write: @Sendable () -> Void = {
            context.holdingWork {
                if holdingMilliseconds > 0 { usleep(UInt32(holdingMilliseconds) * 1000) }
                self.storage.append(value)
            }
        }
        if syncBarrier {
            context.blocking(on: queue.label) { queue.sync(flags: .barrier, execute: write) }
        } else {
            queue.async(flags: .barrier, execute: write)
        }
    }

    func element(at index: Int) -> Int? {
        context.blocking(on: queue.label) {
            queue.sync { storage.isEmpty ? nil : storage[index % storage.count] }
        }
    }

    func snapshot() -> [Int] { queue.sync { storage } }
}

/// The same array behind one `NSRecursiveLock`.
///
/// `@unchecked Sendable`: `storage` is touched only while `lock` is held.
final class RecursiveLockArray: GuardedArray, @unchecked Sendable {
    private let lock = NSRecursiveLock()
    private var storage: [Int] = []  // touched only under `lock`
    private let context: ScenarioContext

    init(context: ScenarioContext) {
        self.context = context
        lock.name = "strain.rw-array.lock"
    }

    func append(_ value: Int, holdingMilliseconds: Int) {
        context.blocking(on: "strain.rw-array.lock") { lock.lock() }
        defer { lock.unlock() }
        if holdingMilliseconds > 0 { usleep(UInt32(holdingMilliseconds) * 1000) }
        storage.append(value)
    }

    func element(at index: Int) -> Int? {
        context.blocking(on: "strain.rw-array.lock") { lock.lock() }
        defer { lock.unlock() }
        return storage.isEmpty ? nil : storage[index % storage.count]
    }

    func snapshot() -> [Int] {
        lock.lock()
        defer { lock.unlock() }
        return storage
    }
}
