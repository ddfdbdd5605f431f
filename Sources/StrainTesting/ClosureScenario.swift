import StrainHost
import StrainKit

/// A closure from a test, as the scenario its trial runs: `prepare` hands it to the
/// strategy's executor, which runs it once, as one unit, with the thread's measurements.
///
/// The closure is not a type's member, so it reaches the scenario through a slot set
/// once, in the re-run test process, before the trial starts; the trial's threads
/// read it after they were started (thread creation orders the write before them).
struct ClosureScenario: Scenario {
    static let name = "test-closure"
    static let summary = "A closure from a test, run as a trial by StrainTesting"

    /// The closure the re-run test process runs as its trial.
    nonisolated(unsafe) static var body: PlainThreadRoom.Call?

    init(parameters: ParameterValues) throws {}

    func prepare(context: ScenarioContext) throws -> Workload {
        guard let body = Self.body else { throw ClosureMissing() }
        // One unit, pending until the closure returns: the watchdog judges a closure
        // that stops making progress (from its threads' waits: it reports nothing else).
        // Allocations are counted around the closure alone: an empty one counts 0.
        // On a `.thread` trial the closure starts where a plain `Thread`'s closure would.
        context.givesPlainThreadRoom.store(true, ordering: .releasing)
        return { executor in
            context.heartbeat.queued()
            try executor.perform { try context.unit { try AllocationWindow.around { try PlainThreadRoom.call(body) } } }
        }
    }

    struct ClosureMissing: Error, CustomStringConvertible {
        var description: String { "the test's closure was not set before its trial started" }
    }
}
