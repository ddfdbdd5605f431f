import Dispatch
import Foundation
import StrainKit

/// A flood of work items that block, then one probe item: how many threads the
/// strategy starts, how fast, and whether the probe ever runs.
///
/// On this machine `DispatchQueue.global()` adds about one worker a second and
/// stops at 255; private serial queues reach 255 at once; a `thread-pool(n, …)`
/// stops at n. Items beyond the cap, and the probe behind them, wait for good:
/// the watchdog ends the trial `starved`.
public struct ThreadExplosionScenario: Scenario {
    public static let name = "thread-explosion"
    public static let summary = "N blocking work items, then a probe item: peak threads, pool growth, the probe's start latency (or that it never ran)"
    public static let parameters: [ParameterSpec] = [
        ParameterSpec("items", .integer(1...10_000), default: "300", summary: "work items submitted in the flood"),
        ParameterSpec("block", .choice(["semaphore", "sleep", "sync-busy-queue"]), default: "semaphore",
                      summary: "how each item blocks: a semaphore, a sleep, or a sync onto a serial queue another item keeps busy"),
        ParameterSpec("hold-ms", .integer(0...3_600_000), default: "60000",
                      summary: "how long an item blocks at most (ms); the flood is released as soon as the probe runs"),
        ParameterSpec("probe-after-ms", .integer(0...60_000), default: "200",
                      summary: "ms after the flood before the probe is submitted, unless every item started sooner"),
    ]

    let items: Int
    let block: String
    let holdMilliseconds: Int
    let probeAfterMilliseconds: Int

    public init(parameters: ParameterValues) {
        items = parameters.integer("items")
        block = parameters.string("block")
        holdMilliseconds = parameters.integer("hold-ms")
        probeAfterMilliseconds = parameters.integer("probe-after-ms")
    }

    public func prepare(context: ScenarioContext) throws -> Workload {
        let scenario = self
        return { executor in try scenario.run(on: executor, context: context) }
    }

    func run(on executor: any StrategyExecutor, context: ScenarioContext) throws {
        let gate = Gate()
        let started = Countdown()
        let finished = Countdown()
        let busy = DispatchQueue(label: "strain.thread-explosion.busy")
        let hold = holdMilliseconds
        let block = block

        if block == "sync-busy-queue" {
            // The queue every item syncs onto stays busy until the gate opens.
            busy.async { gate.pass(holdMilliseconds: hold) }
        }
        context.heartbeat.queued(items + 1)
        let floodStart = DispatchTime.now().uptimeNanoseconds
        for _ in 0..<items {
            executor.submit {
                context.unit {
                    started.add()
                    switch block {
                    case "sleep":
                        context.blocking(on: "sleep") { usleep(UInt32(hold) * 1000) }
                    case "sync-busy-queue":
                        context.blocking(on: busy.label) { busy.sync {} }
                    default:
                        context.blocking(on: "gate") { gate.pass(holdMilliseconds: hold) }
                    }
                }
                finished.add()
            }
        }
        started.wait(for: items, seconds: Double(probeAfterMilliseconds) / 1000)
        let startedBeforeProbe = started.value

        let probeRan = Stamp()
        let probeSubmitted = DispatchTime.now().uptimeNanoseconds
        // Recorded now, so a trial the watchdog ends still says how far it got.
        context.record("items started before the probe", Double(startedBeforeProbe))
        context.record("flood seconds", Double(probeSubmitted - floodStart) / 1e9)
        context.record("probe ran", 0)
        executor.submit {
            context.unit { probeRan.set() }
            finished.add()
        }
        // Wait for the probe as long as the items may hold their threads; if it
        // never runs, the watchdog ends the trial before this returns.
        probeRan.wait(milliseconds: hold == 0 ? 3_600_000 : hold)
        gate.open(releasing: items + 1)
        finished.wait(for: items + 1, seconds: nil)

        if let ran = probeRan.value {
            context.record("probe ran", 1)
            context.record("probe latency ms", Double(ran - probeSubmitted) / 1e6)
        }
        try context.check(probeRan.value != nil, "the probe item never ran within hold-ms (\(hold) ms)")
    }
}
