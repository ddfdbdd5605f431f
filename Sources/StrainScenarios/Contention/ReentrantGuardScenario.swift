import Foundation
import StrainHelpers
import StrainKit
import Synchronization

/// A guarded method that calls another guarded method: the guard is entered
/// again by the thread that holds it. `NSRecursiveLock` and an actor allow it;
/// `NSLock` and a default `pthread_mutex` wait for themselves forever
/// (`deadlocked`, with the thread's stack); others trap or spin.
struct ReentrantGuardScenario: Scenario {
    static let name = "reentrant-guard"
    static let summary = "a guard re-entered from inside its own critical section (a guarded method calling another): which guards allow it, deadlock, trap or spin"
    static let guardKind = Parameter<GuardKind>("guard", default: .nsLock, help: "the guard to re-enter",
                                                choices: GuardKind.allCases.filter { $0 != .unguarded })
    static let parameters: [any ParameterDeclaration] = [guardKind]
    static let entries = Metric<Int>.count("entries", better: nil, noise: .deterministic, summary: "times the critical section ran (2 when re-entry is allowed)")
    static let metrics: [any MetricDeclaration] = [entries]
    static let typicalOutcomes = [
        TypicalOutcome(.completed, because: "NSRecursiveLock and an actor allow a second entry"),
        TypicalOutcome(.deadlocked, because: "NSLock, a default pthread mutex and a serial queue's sync wait for themselves forever"),
        TypicalOutcome(.crashed, because: "Mutex traps on a recursive lock; libdispatch stops a sync onto the current queue"),
        TypicalOutcome(.threw, because: "pthread-rwlock refuses the second write lock with EDEADLK"),
    ]
    static let starterRuns = [
        StarterRun(strategies: ["thread(512KiB)"], expect: [.deadlocked], stall: "500ms"),
        StarterRun(parameters: ["guard": "NSRecursiveLock"], strategies: ["gcd-global", "thread(512KiB)"]),
    ]

    let guardKind: GuardKind

    /// Reads the guard.
    init(parameters: ParameterValues) {
        guardKind = parameters[Self.guardKind]
    }

    func prepare(context: ScenarioContext) throws -> Workload {
        let guardKind = guardKind
        return { executor in
            let entered = AtomicCounter()
            context.heartbeat.queued(1)
            if guardKind == .actor {
                let state = ActorGuard<NoCollection>()
                try executor.perform {
                    ActorBridge.wait {
                        await context.unitAsync {
                            await state.reenter { entered.add() }
                        }
                    }
                }
            } else {
                _ = try guardKind.open(Reenter(context: context, executor: executor, entered: entered))
            }
            context.record(Self.entries, entered.value)
            try context.check(entered.value == 2, "the critical section ran \(entered.value) times, not 2")
        }
    }
}


/// Enters the concrete guard twice, nested, on one of the strategy's threads.
private struct Reenter: GuardVisitor {
    typealias Value = NoCollection
    let context: ScenarioContext
    let executor: any StrategyExecutor
    let entered: AtomicCounter

    func visit<Guard: StateGuard>(_ state: Guard) throws where Guard.Value == NoCollection {
        let context = context
        let entered = entered
        try executor.perform {
            try context.unit {
                try context.blocking(on: "the guard", holding: "the guard") {
                    try state.reenter { entered.add() }
                }
            }
        }
    }
}
