import StrainKit

/// A flood of work items that block, then one probe item: does the probe ever
/// run, and how long does it wait? The shape of every starvation scenario.
///
/// Each item runs inside a unit of work and blocks in `block` until the gate
/// opens (or its hold time runs out); once the probe has run, or the hold time
/// has passed without it, the gate opens and the flood drains. If the probe
/// never runs, the watchdog ends the trial `starved` before ``run(context:submit:waitForStartsSeconds:beforeProbe:submitProbe:block:)``
/// returns.
///
/// ```swift
/// let flood = FloodThenProbe(items: 300, holdMilliseconds: 60_000)
/// let result = flood.run(context: context, submit: executor.submit, submitProbe: executor.submit) { gate in
///     context.blocking(on: "gate") { gate.pass(holdMilliseconds: 60_000) }
/// }
/// ```
public struct FloodThenProbe: Sendable {
    /// What happened to the flood and the probe.
    public struct Result: Sendable {
        /// Items that had started when the probe was submitted.
        public var startedBeforeProbe: Int
        /// Whether every item started before the probe was submitted.
        public var allStarted: Bool
        /// Seconds from the first item's submission to the probe's.
        public var floodSeconds: Double
        /// Seconds from the probe's submission until it ran; nil when it did not
        /// run within the hold time.
        public var probeLatencySeconds: Double?
    }

    /// Items in the flood.
    public let items: Int
    /// How long an item blocks at most, and how long the probe is waited for (0: an hour).
    public let holdMilliseconds: Int
    /// The gate the items wait at; open it early from elsewhere if need be.
    public let gate = ReleaseGate()

    /// A flood of `items` items, each blocking up to `holdMilliseconds`.
    public init(items: Int, holdMilliseconds: Int) {
        self.items = items
        self.holdMilliseconds = holdMilliseconds
    }

    /// Submits the flood, waits up to `waitForStartsSeconds` for every item to
    /// start, calls `beforeProbe` (record there what a trial the watchdog ends
    /// should still say), submits the probe and waits for it, then releases the
    /// flood and waits for every item to finish.
    ///
    /// - Parameters:
    ///   - context: the trial's context: its heartbeat hears of every item and the probe.
    ///   - submit: hands an item to the strategy (`executor.submit`).
    ///   - waitForStartsSeconds: how long to wait for every item to start before the probe goes in.
    ///   - beforeProbe: called with the items started and the flood's seconds, just before the probe.
    ///   - submitProbe: hands the probe to where it should run (the same executor, or a `Task` at some priority).
    ///   - block: what each item does inside its unit: block on the gate, a lock, a `sync`.
    public func run(context: ScenarioContext,
                    submit: (@escaping @Sendable () -> Void) -> Void,
                    waitForStartsSeconds: Double = 5,
                    beforeProbe: (_ startedBeforeProbe: Int, _ floodSeconds: Double) -> Void = { _, _ in },
                    submitProbe: (@escaping @Sendable () -> Void) -> Void,
                    block: @escaping @Sendable (_ gate: ReleaseGate) -> Void) -> Result {
        let gate = gate
        let started = Countdown()
        let finished = Countdown()
        context.heartbeat.queued(items + 1)
        let floodStart = MonotonicClock.nanoseconds
        for _ in 0..<items {
            submit {
                context.unit {
                    started.add()
                    block(gate)
                }
                finished.add()
            }
        }
        let allStarted = started.wait(for: items, seconds: waitForStartsSeconds)
        let startedBeforeProbe = started.value
        let probeRan = EventStamp()
        let probeSubmitted = MonotonicClock.nanoseconds
        beforeProbe(startedBeforeProbe, Double(probeSubmitted - floodStart) / 1e9)
        submitProbe {
            context.unit { probeRan.set() }
            finished.add()
        }
        // Wait for the probe as long as the items may hold their threads; if it
        // never runs, the watchdog ends the trial before this returns.
        probeRan.wait(milliseconds: holdMilliseconds == 0 ? 3_600_000 : holdMilliseconds)
        gate.open(releasing: items + 1)
        finished.wait(for: items + 1, seconds: nil)
        return Result(startedBeforeProbe: startedBeforeProbe, allStarted: allStarted,
                      floodSeconds: Double(probeSubmitted - floodStart) / 1e9,
                      probeLatencySeconds: probeRan.value.map { Double($0 &- probeSubmitted) / 1e9 })
    }
}
