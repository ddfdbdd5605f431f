import Dispatch
import Foundation
import StrainHelpers
import StrainKit

/// A flood of work items that block, then one probe item: how many threads the
/// strategy starts, how fast, and whether the probe ever runs.
///
/// On this machine `DispatchQueue.global()` adds about one worker a second and
/// stops at 255; private serial queues reach 255 at once; a `thread-pool(n, …)`
/// stops at n. Items beyond the cap, and the probe behind them, wait for good:
/// the watchdog ends the trial `starved`.
struct ThreadExplosionScenario: Scenario {
    static let name = "thread-explosion"
    /// Its workers wait, sleep or race a clock: a counted run records it as not countable.
    static let workDependsOnTiming = true
    static let summary = "N blocking work items, then a probe item: peak threads, pool growth, the probe's start latency (or that it never ran)"

    /// How each item blocks.
    enum Block: String, CaseIterable, Sendable {
        case semaphore, sleep, syncBusyQueue = "sync-busy-queue"
    }

    static let items = Parameter<Int>("items", in: 1...10_000, default: 300, help: "work items submitted in the flood")
    static let block = Parameter<Block>("block", default: .semaphore,
                                        help: "how each item blocks: a semaphore, a sleep, or a sync onto a serial queue another item keeps busy")
    static let hold = Parameter<Int>("hold-ms", in: 0...3_600_000, default: 60_000,
                                     help: "how long an item blocks at most (ms); the flood is released as soon as the probe runs")
    static let probeAfter = Parameter<Int>("probe-after-ms", in: 0...60_000, default: 200,
                                           help: "ms after the flood before the probe is submitted, unless every item started sooner")
    static let parameters: [any ParameterDeclaration] = [items, block, hold, probeAfter]
    static let itemsStartedBeforeTheProbe = Metric<Int>.count("items started before the probe", better: nil, noise: .timing, summary: "flood items running when the probe was submitted")
    static let floodSeconds = Metric<Double>.seconds("flood seconds", better: nil, noise: .timing, summary: "from the flood's first item to the probe's submission")
    static let probeRan = Metric<Int>.count("probe ran", better: nil, noise: .timing, summary: "1 when the probe ran within the hold time, else 0")
    static let probeLatency = Metric<Double>.seconds("probe latency", better: nil, noise: .timing, summary: "from the probe's submission until it ran (shown, not judged: it measures the pool's growth, not the code)")
    static let metrics: [any MetricDeclaration] = [itemsStartedBeforeTheProbe, floodSeconds, probeRan, probeLatency]
    static let typicalOutcomes = [
        TypicalOutcome(.starved, because: "more blocked items than the pool's cap: the items past it and the probe behind them never start"),
        TypicalOutcome(.completed, because: "the pool grows to hold the flood, or the items' hold time runs out first"),
    ]
    static let starterRuns = [
        // GCD's pool grows about a thread a second: the probe behind 300 blocked items waits past the stall.
        StarterRun(strategies: ["gcd-global", "thread(512KiB)"], expect: [.starved], expectOn: ["thread(512KiB)": [.completed]], stall: "750ms"),
    ]

    let items: Int
    let block: Block
    let holdMilliseconds: Int
    let probeAfterMilliseconds: Int

    /// Reads the flood's size, how it blocks and for how long.
    init(parameters: ParameterValues) {
        items = parameters[Self.items]
        block = parameters[Self.block]
        holdMilliseconds = parameters[Self.hold]
        probeAfterMilliseconds = parameters[Self.probeAfter]
    }

    func prepare(context: ScenarioContext) throws -> Workload {
        let scenario = self
        return { executor in try scenario.run(on: executor, context: context) }
    }

    func run(on executor: any StrategyExecutor, context: ScenarioContext) throws {
        let flood = FloodThenProbe(items: items, holdMilliseconds: holdMilliseconds)
        let busy = DispatchQueue(label: "strain.thread-explosion.busy")
        let hold = holdMilliseconds
        let block = block
        if block == .syncBusyQueue {
            // The queue every item syncs onto stays busy until the gate opens.
            let gate = flood.gate
            busy.async { gate.pass(holdMilliseconds: hold) }
        }
        let result = flood.run(context: context, submit: executor.submit, waitForStartsSeconds: Double(probeAfterMilliseconds) / 1000,
                               beforeProbe: { started, seconds in
                                   // Recorded now, so a trial the watchdog ends still says how far it got.
                                   context.record(Self.itemsStartedBeforeTheProbe, started)
                                   context.record(Self.floodSeconds, seconds)
                                   context.record(Self.probeRan, 0)
                               }, submitProbe: executor.submit) { gate in
            switch block {
            case .sleep: _ = context.blocking(on: "sleep") { usleep(UInt32(hold) * 1000) }
            case .syncBusyQueue: context.blocking(on: busy.label) { busy.sync {} }
            case .semaphore: context.blocking(on: "gate") { gate.pass(holdMilliseconds: hold) }
            }
        }
        if let latency = result.probeLatencySeconds {
            context.record(Self.probeRan, 1)
            context.record(Self.probeLatency, latency)
        }
        try context.check(result.probeLatencySeconds != nil, "the probe item never ran within hold-ms (\(hold) ms)")
    }
}
