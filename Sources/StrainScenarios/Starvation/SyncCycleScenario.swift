import Dispatch
import Foundation
import StrainHelpers
import StrainKit
import Synchronization

/// Serial queues that `sync` onto each other in a ring: each block holds its
/// queue and waits for the next one, which is held by a block waiting in turn.
/// The watchdog ends the trial `deadlocked` and names the cycle.
///
/// `self-sync` calls `sync` on the queue the block runs on: libdispatch notices
/// that one and stops the process with SIGILL ("dispatch_sync called on queue
/// already owned by current thread"). `self-wait` hides the same mistake from it:
/// the block waits on a semaphore that only a block queued behind it would signal.
struct SyncCycleScenario: Scenario {
    static let name = "sync-cycle"
    /// Its workers wait, sleep or race a clock: a counted run records it as not countable.
    static let workDependsOnTiming = true
    static let summary = "serial queues that sync onto each other (a ring), or onto themselves: a deadlock, with the wait cycle named"
    /// Who syncs onto whom.
    enum Shape: String, CaseIterable, Sendable {
        case ring, selfSync = "self-sync", selfWait = "self-wait"
    }

    /// A yes-or-no choice as suites write it.
    enum YesNo: String, CaseIterable, Sendable { case no, yes }

    static let shape = Parameter<Shape>("shape", default: .ring,
                                        help: "ring: queue i syncs onto queue i+1, the last onto the first; self-sync: a block syncs onto its own queue; self-wait: a block waits for work queued behind it")
    static let queues = Parameter<Int>("queues", in: 2...16, default: 2, help: "queues in the ring")
    static let maskSignals = Parameter<YesNo>("mask-signals", default: .no,
                                              help: "yes: the blocked threads block every signal first, as some libraries' threads do; their stacks then come from ptrace")
    static let parameters: [any ParameterDeclaration] = [shape, queues, maskSignals]
    static let typicalOutcomes = [
        TypicalOutcome(.deadlocked, because: "every queue's block waits for the next queue, held by a block waiting in turn; the watchdog names the cycle"),
        TypicalOutcome(.crashed, because: "self-sync: libdispatch stops the process (SIGILL, dispatch_sync on the current queue)"),
    ]
    static let starterRuns = [StarterRun(strategies: ["gcd-global", "thread(512KiB)", "thread(8MiB)"], expect: [.deadlocked])]

    let shape: Shape
    let queueCount: Int
    let maskSignals: Bool

    /// Reads the shape, the queue count and whether signals are masked.
    init(parameters: ParameterValues) {
        shape = parameters[Self.shape]
        queueCount = parameters[Self.queues]
        maskSignals = parameters[Self.maskSignals] == .yes
    }

    func prepare(context: ScenarioContext) throws -> Workload {
        let scenario = self
        return { executor in
            try executor.perform { scenario.run(context: context) }
        }
    }

    func run(context: ScenarioContext) {
        let count = shape == .ring ? queueCount : 1
        let queues = (0..<count).map { DispatchQueue(label: "strain.sync-cycle.\($0)") }
        let done = Countdown()
        let arrived = Countdown()
        let mask = maskSignals
        let shape = shape
        context.heartbeat.queued(count)
        for (index, queue) in queues.enumerated() {
            queue.async {
                context.unit {
                    if mask { Self.blockAllSignals() }
                    switch shape {
                    case .selfSync:
                        context.blocking(on: queue.label, holding: queue.label) { queue.sync {} }
                    case .selfWait:
                        let signalled = DispatchSemaphore(value: 0)
                        queue.async { signalled.signal() }
                        // Named as a queue: the wait is on work queued behind this block, not a sync the dump shows.
                        context.blocking(on: "queue " + queue.label, holding: "queue " + queue.label) { signalled.wait() }
                    case .ring:
                        // Every queue is held before any block syncs: the ring closes for sure.
                        arrived.add()
                        arrived.wait(for: count, seconds: 5)
                        let next = queues[(index + 1) % count]
                        context.blocking(on: next.label, holding: queue.label) { next.sync {} }
                    }
                }
                done.add()
            }
        }
        done.wait(for: count, seconds: nil)
    }

    static func blockAllSignals() {
        var all = sigset_t()
        sigfillset(&all)
        pthread_sigmask(SIG_BLOCK, &all, nil)
    }
}
