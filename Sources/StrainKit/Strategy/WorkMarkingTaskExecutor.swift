import CStrainProbe
import Dispatch

/// Runs each job of a counted trial's async work on a GCD thread marked as holding
/// work (`strain_work_enter`) while the job runs, so callgrind, which counts the
/// threads that hold work, counts every part of the work between two `await`s,
/// wherever it resumes. On the cooperative pool a task resumes on a thread nothing
/// marks: measured, a counted trial's instructions left out all of an async body.
///
/// Used by ``ScenarioContext/unitAsync(_:)`` in counted trials only: it moves the
/// work off the cooperative pool, which a counted scenario (whose work does not
/// depend on timing) does not notice; an actor's methods called from that work run
/// here too (a default actor runs on its caller's task executor preference). It
/// also replaces a preference the task already had: under `task-executor(n, stack)`
/// a counted trial's async work runs on GCD's threads, not the strategy's, so a
/// stack limit is measured by an uncounted run (a counted trial that does not
/// complete is not countable anyway).
///
/// `_Concurrency.TaskExecutor`: StrainKit has a strategy of its own called `TaskExecutor`.
final class WorkMarkingTaskExecutor: _Concurrency.TaskExecutor {
    /// The one instance: it has no state.
    static let shared = WorkMarkingTaskExecutor()

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = asUnownedTaskExecutor()
        DispatchQueue.global().async {
            strain_work_enter()
            job.runSynchronously(on: executor)
            strain_work_leave()
        }
    }
}
