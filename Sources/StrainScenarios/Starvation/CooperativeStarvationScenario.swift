import Dispatch
import Foundation
import StrainKit

/// Swift concurrency's cooperative pool is as wide as the machine has cores
/// and does not grow: work that blocks a pool thread (a semaphore, a lock, a
/// `sync`) takes it from every task. With every pool thread blocked, a probe
/// task at the blockers' priority never runs; the watchdog ends the trial
/// `starved`. Whether a probe at another priority gets through is what the
/// `probe-priority` parameter asks.
public struct CooperativeStarvationScenario: Scenario {
    public static let name = "cooperative-starvation"
    public static let summary = "work items that block their thread (on the task strategy: the cooperative pool), then a probe Task at a chosen priority: does it run?"
    public static let parameters: [ParameterSpec] = [
        ParameterSpec("blockers", .integer(0...1024), default: "0", summary: "blocking items submitted first; 0 means one per core"),
        ParameterSpec("probe-priority", .choice(TaskPriorityName.allCases.map(\.rawValue)), default: "medium",
                      summary: "priority of the probe Task submitted after the blockers"),
        ParameterSpec("hold-ms", .integer(1...3_600_000), default: "60000", summary: "how long a blocker blocks at most (ms); released as soon as the probe runs"),
    ]

    let blockers: Int
    let probePriority: TaskPriorityName
    let holdMilliseconds: Int

    public init(parameters: ParameterValues) {
        let requested = parameters.integer("blockers")
        blockers = requested == 0 ? ProcessInfo.processInfo.activeProcessorCount : requested
        probePriority = TaskPriorityName(rawValue: parameters.string("probe-priority")) ?? .medium
        holdMilliseconds = parameters.integer("hold-ms")
    }

    public func prepare(context: ScenarioContext) throws -> Workload {
        let scenario = self
        return { executor in try scenario.run(on: executor, context: context) }
    }

    func run(on executor: any StrategyExecutor, context: ScenarioContext) throws {
        let gate = Gate()
        let started = Countdown()
        let finished = Countdown()
        let hold = holdMilliseconds
        context.heartbeat.queued(blockers + 1)
        for _ in 0..<blockers {
            executor.submit {
                context.unit {
                    started.add()
                    context.blocking(on: "semaphore") { gate.pass(holdMilliseconds: hold) }
                }
                finished.add()
            }
        }
        // The probe goes in once every blocker holds its thread.
        let allBlocked = started.wait(for: blockers, seconds: 5)
        let probeRan = Stamp()
        let submitted = DispatchTime.now().uptimeNanoseconds
        // Recorded now, so a trial the watchdog ends still says how far it got.
        context.record("blockers", Double(blockers))
        context.record("blockers running before the probe", Double(started.value))
        context.record("probe ran", 0)
        Task.detached(priority: probePriority.taskPriority) {
            context.unit { probeRan.set() }
            finished.add()
        }
        probeRan.wait(milliseconds: hold)
        gate.open(releasing: blockers)
        finished.wait(for: blockers + 1, seconds: nil)

        if let ran = probeRan.value {
            context.record("probe ran", 1)
            context.record("probe latency ms", Double(ran - submitted) / 1e6)
        }
        try context.check(allBlocked || probeRan.value != nil, "only \(started.value) of \(blockers) blockers started within 5 s")
        try context.check(probeRan.value != nil, "the \(probePriority.rawValue)-priority probe never ran within hold-ms (\(hold) ms)")
    }
}
