import Foundation
import StrainKit
import Synchronization

/// A guarded method that calls another guarded method: the guard is entered
/// again by the thread that holds it. `NSRecursiveLock` and an actor allow it;
/// `NSLock` and a default `pthread_mutex` wait for themselves forever
/// (`deadlocked`, with the thread's stack); others trap or spin.
public struct ReentrantGuardScenario: Scenario {
    public static let name = "reentrant-guard"
    public static let summary = "a guard re-entered from inside its own critical section (a guarded method calling another): which guards allow it, deadlock, trap or spin"
    public static let parameters: [ParameterSpec] = [
        ParameterSpec("guard", .choice(GuardKind.names.filter { $0 != "unguarded" }), default: "NSLock", summary: "the guard to re-enter"),
    ]

    let guardKind: GuardKind

    public init(parameters: ParameterValues) {
        guardKind = GuardKind(rawValue: parameters.string("guard")) ?? .nsLock
    }

    public func prepare(context: ScenarioContext) throws -> Workload {
        let guardKind = guardKind
        return { executor in
            let entered = EntryCounter()
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
            context.record("entries", Double(entered.value))
            try context.check(entered.value == 2, "the critical section ran \(entered.value) times, not 2")
        }
    }
}

final class EntryCounter: Sendable {
    private let count = Atomic<Int>(0)
    func add() { count.add(1, ordering: .relaxed) }
    var value: Int { count.load(ordering: .relaxed) }
}

/// Enters the concrete guard twice, nested, on one of the strategy's threads.
private struct Reenter: GuardVisitor {
    typealias Value = NoCollection
    let context: ScenarioContext
    let executor: any StrategyExecutor
    let entered: EntryCounter

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
