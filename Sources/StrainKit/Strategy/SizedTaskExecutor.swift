import Foundation

/// A Swift concurrency `TaskExecutor` backed by `count` threads of a chosen
/// stack size: async code given this executor as its preference
/// (`Task(executorPreference:)`, `withTaskExecutorPreference`) runs its
/// nonisolated parts on these threads rather than on the cooperative pool, so
/// a deep decode in async code can have an 8 MiB stack on any platform.
///
/// With the cooperative pool: the preference moves only the task's own
/// nonisolated code (and its child tasks, which inherit it). Actor-isolated
/// code still runs on its actor; `MainActor` on the main thread. A task that
/// blocks one of these threads holds only this executor's threads, never the
/// cooperative pool's, so the pool's other tasks keep running; and work past
/// `count` blocked jobs waits here, as on any fixed pool.
public final class SizedTaskExecutor: _Concurrency.TaskExecutor, Sendable {
    private let jobs = JobQueue()
    private let count: Int

    /// Starts `count` threads named `strain.task-executor.N` with `stackBytes` of stack.
    public init(count: Int, stackBytes: Int) {
        self.count = count
        let jobs = jobs
        for index in 0..<count {
            NamedThread.start(count == 1 ? "strain.task-exec" : "strain.task-exec.\(index)", stackBytes: stackBytes) {
                jobs.drain()
            }
        }
    }

    /// Queues `job` for the next free thread of this executor, first in first out.
    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = asUnownedTaskExecutor()
        jobs.enqueue { job.runSynchronously(on: executor) }
    }

    /// Stops the threads once the jobs queued before this have run.
    public func shutdown() {
        for _ in 0..<count { jobs.enqueue(nil) }
    }
}

/// The `task-executor(n, stack)` strategy: a `Task` per piece of work, with a
/// `SizedTaskExecutor` as its executor preference.
struct SizedTaskExecutorStrategy: StrategyExecutor {
    let spec: StrategySpec
    let executor: SizedTaskExecutor
    let context: ScenarioContext

    init(spec: StrategySpec, count: Int, stackBytes: Int, context: ScenarioContext) {
        self.spec = spec
        self.context = context
        executor = SizedTaskExecutor(count: count, stackBytes: stackBytes)
    }

    func perform(_ work: @escaping @Sendable () throws -> Void) throws {
        let executor = executor
        try handOff(work, context: context) { job in Task(executorPreference: executor) { job() } }
    }

    func submit(_ work: @escaping @Sendable () -> Void) {
        Task(executorPreference: executor) { runSubmitted(work) }
    }

    func shutdown() { executor.shutdown() }
}
