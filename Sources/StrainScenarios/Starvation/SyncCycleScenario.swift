import Dispatch
import Foundation
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
public struct SyncCycleScenario: Scenario {
    public static let name = "sync-cycle"
    public static let summary = "serial queues that sync onto each other (a ring), or onto themselves: a deadlock, with the wait cycle named"
    public static let parameters: [ParameterSpec] = [
        ParameterSpec("shape", .choice(["ring", "self-sync", "self-wait"]), default: "ring",
                      summary: "ring: queue i syncs onto queue i+1, the last onto the first; self-sync: a block syncs onto its own queue; self-wait: a block waits for work queued behind it"),
        ParameterSpec("queues", .integer(2...16), default: "2", summary: "queues in the ring"),
        ParameterSpec("mask-signals", .choice(["no", "yes"]), default: "no",
                      summary: "yes: the blocked threads block every signal first, as some libraries' threads do; their stacks then come from ptrace"),
    ]

    let shape: String
    let queueCount: Int
    let maskSignals: Bool

    public init(parameters: ParameterValues) {
        shape = parameters.string("shape")
        queueCount = parameters.integer("queues")
        maskSignals = parameters.string("mask-signals") == "yes"
    }

    public func prepare(context: ScenarioContext) throws -> Workload {
        let scenario = self
        return { executor in
            try executor.perform { scenario.run(context: context) }
        }
    }

    func run(context: ScenarioContext) {
        let count = shape == "ring" ? queueCount : 1
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
                    case "self-sync":
                        context.blocking(on: queue.label, holding: queue.label) { queue.sync {} }
                    case "self-wait":
                        let signalled = DispatchSemaphore(value: 0)
                        queue.async { signalled.signal() }
                        context.blocking(on: queue.label, holding: queue.label) { signalled.wait() }
                    default:
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
