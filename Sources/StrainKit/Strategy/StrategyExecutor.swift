import CStrainProbe
import Dispatch
import Foundation
import Synchronization

/// Runs a scenario's work where its strategy says, on threads prepared for
/// fault capture, and reports what the threads measured.
///
/// A workload receives the trial's executor; the harness makes it and shuts it
/// down. `perform` measures the thread it ran on (stack size and high-water
/// mark); `submit` does not, so floods of thousands of items stay cheap.
public protocol StrategyExecutor: Sendable {
    /// The strategy this executor runs work on (`thread(512KiB)`).
    var spec: StrategySpec { get }
    /// Runs `work` once on the strategy and waits until it is done, rethrowing what it threw.
    func perform(_ work: @escaping @Sendable () throws -> Void) throws
    /// Hands `work` to the strategy and returns at once: floods of work items,
    /// fan-outs. The work reports its own progress through the heartbeat.
    func submit(_ work: @escaping @Sendable () -> Void)
    /// Releases long-lived threads; the harness calls it after the workload returns.
    func shutdown()
}

extension StrategySpec {
    /// An executor for this strategy whose threads report to `context`.
    package func makeExecutor(context: ScenarioContext) -> any StrategyExecutor {
        switch self {
        case .gcdGlobal(let qos):
            DispatchExecutor(spec: self, queue: .global(qos: qos.dispatchQoS), context: context)
        case .gcdSerial:
            DispatchExecutor(spec: self, queue: DispatchQueue(label: "strain.gcd-serial"), context: context, servesOvercommitRoot: true)
        case .gcdConcurrent:
            DispatchExecutor(spec: self, queue: DispatchQueue(label: "strain.gcd-concurrent", attributes: .concurrent), context: context)
        case .thread(let bytes):
            ThreadPerTaskExecutor(spec: self, stackBytes: bytes, context: context)
        case .threadQueue(let bytes):
            // One long-lived thread fed in order, as a serial queue would be: the
            // articles' fix for decoding on a bigger stack without a thread per task.
            ThreadPoolExecutor(spec: self, count: 1, stackBytes: bytes, context: context, name: "strain.thread-queue")
        case .threadPool(let count, let bytes):
            ThreadPoolExecutor(spec: self, count: count, stackBytes: bytes, context: context)
        case .gcdSerialQueues:
            SerialQueuePerItemExecutor(spec: self, context: context)
        case .task(let priority):
            TaskExecutor(spec: self, priority: priority.taskPriority, context: context)
        case .main:
            MainThreadExecutor(spec: self, context: context)
        case .operationQueue(let width):
            OperationQueueExecutor(spec: self, width: width, context: context)
        case .taskExecutor(let count, let bytes):
            SizedTaskExecutorStrategy(spec: self, count: count, stackBytes: bytes, context: context)
        }
    }
}

/// Wraps one piece of work with the thread's preparation and measurement.
/// Runs on the thread that does the work.
func runInstrumented(_ work: () throws -> Void, context: ScenarioContext) -> Result<Void, any Error> {
    do {
        try ThreadProbe.begin()
    } catch {
        return .failure(error)
    }
    strain_work_enter()
    let result = Result { try work() }
    strain_work_leave()
    context.addThreadReport(ThreadProbe.finish())
    return result
}

/// Starts `work`, instrumented, wherever `start` runs its job, and waits for
/// its result: how every executor but the main thread's performs.
func handOff(_ work: @escaping @Sendable () throws -> Void, context: ScenarioContext,
             start: (@escaping @Sendable () -> Void) -> Void) throws {
    let handoff = ResultHandoff<Void>()
    start { handoff.deliver(runInstrumented(work, context: context)) }
    try handoff.wait()
}

/// Wraps a submitted work item: the thread gets its alternate signal stack (so
/// an overflow is caught) and is marked as holding scenario work for the
/// watchdog; no stack measurement, which floods of thousands of items would pay for.
@inline(__always)
func runSubmitted(_ work: () -> Void) {
    _ = strain_thread_prepare()
    strain_work_enter()
    work()
    strain_work_leave()
}

/// Hands one result from the thread that produced it to the thread waiting for it.
package final class ResultHandoff<Success: Sendable>: Sendable {
    private let result = Mutex<Result<Success, any Error>?>(nil)
    private let done = DispatchSemaphore(value: 0)

    package init() {}

    package func deliver(_ value: Result<Success, any Error>) {
        result.withVisibleLock { $0 = value }
        done.signal()
    }

    /// Blocks until `deliver`, then returns the value or throws the error.
    package func wait() throws -> Success {
        done.wait()
        return try result.withVisibleLock { $0 }!.get()
    }
}

struct DispatchExecutor: StrategyExecutor {
    let spec: StrategySpec
    let queue: DispatchQueue
    let context: ScenarioContext
    /// Whether `queue` is a serial queue with no target, which libdispatch drains on its
    /// QoS's overcommit root queue: its workers then note that root queue's whole label
    /// for the dumps (the kernel keeps `-qos.overcommit` of it, the same for all six).
    var servesOvercommitRoot = false

    func perform(_ work: @escaping @Sendable () throws -> Void) throws {
        let root = servesOvercommitRoot ? queue.overcommitRoot : nil
        try handOff(work, context: context) { job in
            queue.async {
                if let root { strain_work_note_overcommit_root(root) }
                job()
            }
        }
    }

    func submit(_ work: @escaping @Sendable () -> Void) {
        let root = servesOvercommitRoot ? queue.overcommitRoot : nil
        queue.async {
            if let root { strain_work_note_overcommit_root(root) }
            runSubmitted(work)
        }
    }

    func shutdown() {}
}

/// A new private serial queue for each piece of work.
struct SerialQueuePerItemExecutor: StrategyExecutor {
    let spec: StrategySpec
    let context: ScenarioContext

    private func makeQueue() -> DispatchQueue { DispatchQueue(label: "strain.gcd-serial-queues.item") }

    func perform(_ work: @escaping @Sendable () throws -> Void) throws {
        try DispatchExecutor(spec: spec, queue: makeQueue(), context: context, servesOvercommitRoot: true).perform(work)
    }

    func submit(_ work: @escaping @Sendable () -> Void) {
        DispatchExecutor(spec: spec, queue: makeQueue(), context: context, servesOvercommitRoot: true).submit(work)
    }

    func shutdown() {}
}

/// A detached task per piece of work, on Swift concurrency's cooperative pool.
struct TaskExecutor: StrategyExecutor {
    let spec: StrategySpec
    let priority: TaskPriority
    let context: ScenarioContext

    func perform(_ work: @escaping @Sendable () throws -> Void) throws {
        try handOff(work, context: context) { job in Task.detached(priority: priority) { job() } }
    }

    func submit(_ work: @escaping @Sendable () -> Void) {
        Task.detached(priority: priority) { runSubmitted(work) }
    }

    func shutdown() {}
}

struct ThreadPerTaskExecutor: StrategyExecutor {
    let spec: StrategySpec
    let stackBytes: Int
    let context: ScenarioContext

    func perform(_ work: @escaping @Sendable () throws -> Void) throws {
        if context.givesPlainThreadRoom.load(ordering: .acquiring), let plain = PlainThreadRoom.plain(stackBytes: stackBytes) {
            try handOff(work, context: context) { job in
                NamedThread.start("strain.thread", stackBytes: stackBytes + PlainThreadRoom.allowance) {
                    PlainThreadRoom.arm(as: plain)
                    job()
                }
            }
            return
        }
        try handOff(work, context: context) { job in NamedThread.start("strain.thread", stackBytes: stackBytes) { job() } }
    }

    func submit(_ work: @escaping @Sendable () -> Void) {
        NamedThread.start("strain.thread", stackBytes: stackBytes) { runSubmitted(work) }
    }

    func shutdown() {}
}

/// `count` long-lived threads with a chosen stack size taking work from one
/// FIFO queue: work beyond `count` blocked items waits for a thread, as it does
/// under a platform's GCD cap.
final class ThreadPoolExecutor: StrategyExecutor {
    let spec: StrategySpec
    private let queue = JobQueue()
    private let context: ScenarioContext
    private let count: Int

    init(spec: StrategySpec, count: Int, stackBytes: Int, context: ScenarioContext, name: String = "strain.pool") {
        self.spec = spec
        self.context = context
        self.count = count
        let queue = self.queue
        for index in 0..<count {
            NamedThread.start(count == 1 ? name : "\(name).\(index)", stackBytes: stackBytes) {
                queue.drain()
            }
        }
    }

    func perform(_ work: @escaping @Sendable () throws -> Void) throws {
        try handOff(work, context: context) { job in queue.enqueue { job() } }
    }

    func submit(_ work: @escaping @Sendable () -> Void) {
        queue.enqueue { runSubmitted(work) }
    }

    func shutdown() {
        for _ in 0..<count { queue.enqueue(nil) }
    }
}

/// First in, first out; `nil` tells the worker to stop.
final class JobQueue: Sendable {
    private let jobs = Mutex<[(@Sendable () -> Void)?]>([])
    private let available = DispatchSemaphore(value: 0)

    func enqueue(_ job: (@Sendable () -> Void)?) {
        jobs.withVisibleLock { $0.append(job) }
        available.signal()
    }

    /// Runs jobs as they come until told to stop: a worker thread's whole life.
    /// One named function for every worker, so dumps name it alike.
    @inline(never)
    func drain() {
        while let job = next() { job() }
    }

    /// Blocks until a job is queued; nil when the queue was told to stop.
    func next() -> (@Sendable () -> Void)? {
        available.wait()
        return jobs.withVisibleLock { $0.removeFirst() }
    }
}

/// Runs work inline on the calling thread, which is the child's main thread.
struct MainThreadExecutor: StrategyExecutor {
    let spec: StrategySpec
    let context: ScenarioContext

    func perform(_ work: @escaping @Sendable () throws -> Void) throws {
        try runInstrumented(work, context: context).get()
    }

    /// The main thread runs submitted work at once, before returning.
    func submit(_ work: @escaping @Sendable () -> Void) {
        runSubmitted(work)
    }

    func shutdown() {}
}

extension DispatchQueue {
    /// The overcommit root queue a serial queue with no target drains on, as
    /// `strain_work_note_overcommit_root` numbers them: its QoS's, the default's when it has none.
    var overcommitRoot: Int32 {
        switch qos.qosClass {
        case .background: 1
        case .utility: 2
        case .default, .unspecified: 3
        case .userInitiated: 4
        case .userInteractive: 5
        }
    }
}
