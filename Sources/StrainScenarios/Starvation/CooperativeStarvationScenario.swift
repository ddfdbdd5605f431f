import Dispatch
import Foundation
import StrainHelpers
import StrainKit

/// Swift concurrency's cooperative pool is as wide as the machine has cores
/// and does not grow: work that blocks a pool thread (a semaphore, a lock, a
/// `sync`) takes it from every task. With every pool thread blocked, a probe
/// task at the blockers' priority never runs; the watchdog ends the trial
/// `starved`. Whether a probe at another priority gets through is what the
/// `probe-priority` parameter asks.
struct CooperativeStarvationScenario: Scenario {
    static let name = "cooperative-starvation"
    /// Its workers wait, sleep or race a clock: a counted run records it as not countable.
    static let workDependsOnTiming = true
    static let summary = "work items that block their thread (on the task strategy: the cooperative pool), then a probe Task at a chosen priority: does it run?"
    static let blockers = Parameter<Int>("blockers", in: 0...1024, default: 0, help: "blocking items submitted first; 0 means one per core")
    static let probePriority = Parameter<TaskPriorityName>("probe-priority", default: .medium, help: "priority of the probe Task submitted after the blockers")
    static let hold = Parameter<Int>("hold-ms", in: 1...3_600_000, default: 60_000, help: "how long a blocker blocks at most (ms); released as soon as the probe runs")
    static let parameters: [any ParameterDeclaration] = [blockers, probePriority, hold]
    static let blockersSubmitted = Metric<Int>.count("blockers", better: nil, noise: .deterministic, summary: "blocking items submitted")
    static let blockersRunningBeforeTheProbe = Metric<Int>.count("blockers running before the probe", better: nil, noise: .timing, summary: "blockers holding a thread when the probe was submitted")
    static let probeRan = Metric<Int>.count("probe ran", better: nil, noise: .timing, summary: "1 when the probe ran within the hold time, else 0")
    static let probeLatency = Metric<Double>.seconds("probe latency", better: nil, noise: .timing, summary: "from the probe's submission until it ran (shown, not judged: it measures the pool's growth, not the code)")
    static let metrics: [any MetricDeclaration] = [blockersSubmitted, blockersRunningBeforeTheProbe, probeRan, probeLatency]
    static let typicalOutcomes = [
        TypicalOutcome(.starved, because: "on the task strategy the blockers hold every cooperative thread, and a probe at their priority never runs"),
        TypicalOutcome(.completed, because: "a strategy with threads of its own, or a probe another priority lets through"),
    ]
    static let starterRuns = [
        StarterRun(strategies: ["task", "thread(512KiB)"], expect: [.completed], expectOn: ["task": [.starved]], stall: "400ms"),
    ]

    let blockers: Int
    let probePriority: TaskPriorityName
    let holdMilliseconds: Int

    /// Reads the blockers, the probe's priority and the hold time.
    init(parameters: ParameterValues) {
        let requested = parameters[Self.blockers]
        blockers = requested == 0 ? ProcessInfo.processInfo.activeProcessorCount : requested
        probePriority = parameters[Self.probePriority]
        holdMilliseconds = parameters[Self.hold]
    }

    func prepare(context: ScenarioContext) throws -> Workload {
        let scenario = self
        return { executor in try scenario.run(on: executor, context: context) }
    }

    func run(on executor: any StrategyExecutor, context: ScenarioContext) throws {
        let hold = holdMilliseconds
        let blockers = blockers
        let priority = probePriority.taskPriority
        // The probe goes in once every blocker holds its thread (or after 5 s).
        let flood = FloodThenProbe(items: blockers, holdMilliseconds: hold)
        let result = flood.run(context: context, submit: executor.submit, waitForStartsSeconds: 5, beforeProbe: { started, _ in
            // Recorded now, so a trial the watchdog ends still says how far it got.
            context.record(Self.blockersSubmitted, blockers)
            context.record(Self.blockersRunningBeforeTheProbe, started)
            context.record(Self.probeRan, 0)
        }, submitProbe: { probe in
            Task.detached(priority: priority) { probe() }
        }) { gate in
            context.blocking(on: "semaphore") { gate.pass(holdMilliseconds: hold) }
        }
        if let latency = result.probeLatencySeconds {
            context.record(Self.probeRan, 1)
            context.record(Self.probeLatency, latency)
        }
        try context.check(result.allStarted || result.probeLatencySeconds != nil,
                          "only \(result.startedBeforeProbe) of \(blockers) blockers started within 5 s")
        try context.check(result.probeLatencySeconds != nil, "the \(probePriority.rawValue)-priority probe never ran within hold-ms (\(hold) ms)")
    }
}
