import Foundation
/// What a metric is: its name, unit, which direction is better and how noisy it is.
/// The reports and the gate read these instead of knowing metric names.
public struct MetricDescriptor: Codable, Hashable, Sendable {
    /// The unit a metric's values are in.
    public enum Unit: String, Codable, Hashable, Sendable {
        /// Seconds.
        case seconds
        /// Nanoseconds.
        case nanoseconds
        /// Bytes.
        case bytes
        /// A plain count (threads, frames, operations).
        case count
        /// Events per second.
        case perSecond
        /// A dimensionless ratio.
        case ratio
        /// Allocations (calls of the malloc family), counted.
        case allocations
        /// Instructions retired, counted (by a perf counter or by callgrind).
        case instructions

        /// A rate as every report and the gate write it: `12.8 M/s`, `358 k/s`, `42 /s`.
        /// Three digits, as times have (`82 k/s` sat beside `423 k/s`).
        public static func rate(_ perSecond: Double) -> String {
            for (factor, unit) in [(1e6, "M/s"), (1e3, "k/s")] where perSecond >= factor * 0.999_5 {
                let value = perSecond / factor
                return String(format: value >= 99.95 ? "%.0f %@" : value >= 9.995 ? "%.1f %@" : "%.2f %@", value, unit)
            }
            return String(format: "%.0f /s", perSecond)
        }

        /// A count of allocations as every report and the gate write it: `12.4 k allocs`,
        /// `3.1 M allocs`, `1,253 allocs`, `842 allocs`.
        public static func allocations(_ count: Double) -> String {
            let sign = count < 0 ? "-" : ""
            let value = abs(count)
            if value >= 1e6 { return String(format: "%@%.1f M allocs", sign, value / 1e6) }
            if value >= 1e4 { return String(format: "%@%.1f k allocs", sign, value / 1e3) }
            return "\(sign)\(grouped(value)) allocs"
        }

        /// `1,253`: a whole count in groups of three digits, as every count Strain prints
        /// (`3,814 frames`, `+7,420 allocs a trial`) is written.
        public static func grouped(_ value: Double) -> String {
            guard let whole = Int(exactly: value.rounded()) else { return String(format: "%.0f", value) }
            let digits = Array(String(whole.magnitude))
            var out = ""
            for (index, digit) in digits.enumerated() {
                if index > 0, (digits.count - index) % 3 == 0 { out.append(",") }
                out.append(digit)
            }
            return (whole < 0 ? "-" : "") + out
        }

        /// A count of instructions as every report and the gate write it: `3.1 M instr`,
        /// `842 k instr`, `12.4 k instr`, `9,500 instr`; with `signed`, a change: `+20.8 M instr`.
        /// Millions keep one decimal however large (`1040.0 M instr`), so two counts the
        /// gate compares at a 0.2 % tolerance still read apart.
        public static func instructions(_ count: Double, signed: Bool = false) -> String {
            let sign = count < 0 ? "-" : signed ? "+" : ""
            let value = abs(count)
            if value >= 1e6 { return String(format: "%@%.1f M instr", sign, value / 1e6) }
            if value >= 1e5 { return String(format: "%@%.0f k instr", sign, value / 1e3) }
            if value >= 1e4 { return String(format: "%@%.1f k instr", sign, value / 1e3) }
            return "\(sign)\(grouped(value)) instr"
        }

        /// The unit as a column, a chart or a label names it: `s`, `ns`, `bytes`, `count`, `/s`, `ratio`, `allocs`, `instr`.
        public var symbol: String {
            switch self {
            case .seconds: "s"
            case .nanoseconds: "ns"
            case .bytes: "bytes"
            case .count: "count"
            case .perSecond: "/s"
            case .ratio: "ratio"
            case .allocations: "allocs"
            case .instructions: "instr"
            }
        }
    }

    /// Which direction is better.
    public enum Polarity: String, Codable, Hashable, Sendable {
        /// Smaller values are better (time, memory, stack).
        case lowerIsBetter
        /// Larger values are better (throughput).
        case higherIsBetter
    }

    /// How a metric varies between repetitions of unchanged code.
    public enum Noise: String, Codable, Hashable, Sendable {
        /// The same code gives the same value (stack high-water, frames at overflow,
        /// peak threads): compared exactly against an absolute tolerance, one
        /// repetition is enough.
        case deterministic
        /// Varies with the machine's load (wall and CPU time, RSS, throughput,
        /// latency): compared with a statistical test over repetitions.
        case timing
        /// Counted inside the trial, not timed (allocations and their bytes): what the
        /// code does, not how fast. Compared exactly against a tolerance relative to the
        /// baseline's value (a scheduler can add a few allocations to a contended
        /// trial), one repetition is enough; a baseline whose repetitions vary beyond
        /// the tolerance is inconclusive.
        case counted

        /// Whether the gate compares it exactly (deterministic and counted metrics)
        /// rather than with a rank test over repetitions.
        public var isExact: Bool {
            switch self {
            case .deterministic, .counted: true
            case .timing: false
            }
        }
    }

    /// The name suites, reports and the gate use (`wall`, `stack-high-water`).
    public var name: String
    /// The unit its values are in.
    public var unit: Unit
    /// Nil for a metric that is shown but never judged (a scenario's metric that
    /// declares no direction).
    public var polarity: Polarity?
    /// How it varies between repetitions: how the gate compares it.
    public var noise: Noise
    /// One line for the reader.
    public var summary: String

    /// A metric called `name`, in `unit`; `polarity` nil for one shown but never judged.
    public init(name: String, unit: Unit, polarity: Polarity?, noise: Noise, summary: String) {
        self.name = name
        self.unit = unit
        self.polarity = polarity
        self.noise = noise
        self.summary = summary
    }

    /// Strain's own metrics, measured for every trial where they apply.
    public static let builtIn: [MetricDescriptor] = [
        MetricDescriptor(name: "wall", unit: .seconds, polarity: .lowerIsBetter, noise: .timing, summary: "seconds the scenario's work ran"),
        MetricDescriptor(name: "cpu", unit: .seconds, polarity: .lowerIsBetter, noise: .timing, summary: "the child's user and system CPU seconds"),
        MetricDescriptor(name: "rss", unit: .bytes, polarity: .lowerIsBetter, noise: .timing, summary: "the child's peak resident set size"),
        MetricDescriptor(name: "throughput", unit: .perSecond, polarity: .higherIsBetter, noise: .timing, summary: "operations per second across all workers"),
        MetricDescriptor(name: "latency-p50", unit: .nanoseconds, polarity: .lowerIsBetter, noise: .timing, summary: "median latency of an operation"),
        MetricDescriptor(name: "latency-p99", unit: .nanoseconds, polarity: .lowerIsBetter, noise: .timing, summary: "99th percentile latency of an operation"),
        MetricDescriptor(name: "latency-p999", unit: .nanoseconds, polarity: .lowerIsBetter, noise: .timing, summary: "99.9th percentile latency of an operation"),
        MetricDescriptor(name: "stack-high-water", unit: .bytes, polarity: .lowerIsBetter, noise: .deterministic, summary: "the deepest any work thread's stack went"),
        MetricDescriptor(name: "peak-threads", unit: .count, polarity: .lowerIsBetter, noise: .deterministic, summary: "the most threads the child had at once"),
        MetricDescriptor(name: "peak-blocked-workers", unit: .count, polarity: .lowerIsBetter, noise: .deterministic, summary: "the most workers blocked at once in marked blocking calls"),
        MetricDescriptor(name: "depth", unit: .count, polarity: .higherIsBetter, noise: .deterministic, summary: "the recursion depth reached (at an overflow: fewer means larger frames)"),
        MetricDescriptor(name: "frames", unit: .count, polarity: .higherIsBetter, noise: .deterministic, summary: "frames on the stack at an overflow (fewer means larger frames)"),
        MetricDescriptor(name: "allocations", unit: .allocations, polarity: .lowerIsBetter, noise: .counted, summary: "calls of malloc, calloc, realloc, posix_memalign, aligned_alloc and memalign during the work"),
        MetricDescriptor(name: "allocated-bytes", unit: .bytes, polarity: .lowerIsBetter, noise: .counted, summary: "bytes those allocations asked for"),
        MetricDescriptor(name: "frees", unit: .count, polarity: nil, noise: .counted, summary: "blocks freed during the work (shown, not judged)"),
        MetricDescriptor(name: "instructions", unit: .instructions, polarity: .lowerIsBetter, noise: .counted, summary: "instructions the work retired, counted by a perf counter or by callgrind (measure: [instructions])"),
    ]

    /// The built-in descriptor called `name`, if there is one.
    public static func builtIn(named name: String) -> MetricDescriptor? {
        builtIn.first { $0.name == name }
    }

    /// The descriptor for a scenario metric nobody declared: shown, never judged.
    public static func undeclared(_ name: String) -> MetricDescriptor {
        MetricDescriptor(name: name, unit: .ratio, polarity: nil, noise: .timing, summary: "declared by no scenario")
    }
}

extension TrialMetrics {
    /// This trial's value of the metric `name`: a built-in one or a scenario's own;
    /// nil when the trial did not measure it.
    public func value(of name: String) -> Double? {
        switch name {
        case "wall": wallSeconds
        case "cpu": userSeconds.flatMap { user in systemSeconds.map { user + $0 } }
        case "rss": peakRSSBytes.map(Double.init)
        case "throughput": throughputPerSecond
        case "latency-p50": latency.map { Double($0.p50Nanoseconds) }
        case "latency-p99": latency.map { Double($0.p99Nanoseconds) }
        case "latency-p999": latency.map { Double($0.p999Nanoseconds) }
        case "stack-high-water": stackHighWaterBytes.map(Double.init)
        case "peak-threads": peakThreads.map(Double.init)
        case "peak-blocked-workers": peakBlockedWorkers.map(Double.init)
        case "depth": depth.map(Double.init)
        case "frames": frames.map(Double.init)
        case "allocations": allocations.map(Double.init)
        case "allocated-bytes": allocatedBytes.map(Double.init)
        case "frees": frees.map(Double.init)
        case "instructions": instructions.map(Double.init)
        default: custom[name]
        }
    }
}

/// How much worse a metric may get before the gate calls it a regression.
///
/// A timing metric regresses when the test says it is worse by more than `delta`
/// (relative) and the median change also exceeds `floor` (absolute, in the metric's
/// unit). A deterministic metric regresses when it is worse by more than both.
public struct MetricThreshold: Codable, Hashable, Sendable {
    /// Relative change allowed: 0.1 is 10 %.
    public var delta: Double?
    /// Absolute change allowed, in the metric's unit.
    public var floor: Double?

    /// A threshold of `delta` (relative) and `floor` (absolute); nil takes the default.
    public init(delta: Double? = nil, floor: Double? = nil) {
        self.delta = delta
        self.floor = floor
    }

    /// The documented defaults: about 10 % for time, 2 % for RSS, one page for stack,
    /// one thread for the sampled peak thread count, exact for other counts; for
    /// counted allocations and bytes 1 % or 16 (allocations) / 4 KiB (bytes),
    /// whichever is larger, from the A/A spread measured on the bench suites (README).
    public static func defaults(for metric: MetricDescriptor) -> MetricThreshold {
        switch (metric.noise, metric.unit) {
        case (.counted, .bytes): MetricThreshold(delta: 0.01, floor: 4096)
        case (.counted, _) where metric.name == "instructions": MetricThreshold(delta: instructionsDelta, floor: instructionsFloor)
        case (.counted, _): MetricThreshold(delta: 0.01, floor: 16)
        case (.deterministic, .bytes): MetricThreshold(delta: 0, floor: 4096)
        // A sampled thread count moves by one between identical runs (a worker GCD starts for a moment);
        // an overflow's depth by a frame when the harness's own frames change between builds (GatingCI.md).
        case (.deterministic, _) where metric.name == "peak-threads": MetricThreshold(delta: 0, floor: 1)
        case (.deterministic, _) where metric.name == "depth" || metric.name == "frames": MetricThreshold(delta: 0.01, floor: 2)
        case (.deterministic, _): MetricThreshold(delta: 0, floor: 0)
        case (.timing, .bytes): MetricThreshold(delta: 0.02, floor: 256 * 1024)
        case (.timing, .seconds): MetricThreshold(delta: 0.10, floor: 0.001)
        case (.timing, .nanoseconds): MetricThreshold(delta: 0.10, floor: 1_000)
        case (.timing, _): MetricThreshold(delta: 0.10, floor: 0)
        }
    }

    /// The default tolerance for counted instructions, relative: 0.2 % (repetitions of
    /// one build under callgrind spread by 1–32 parts per million on rows of 141 M
    /// instructions; README, "Instructions counted").
    public static let instructionsDelta = 0.002
    /// The default tolerance for counted instructions, absolute: 20,000 a trial (the
    /// harness's own spread, a thread's start and exit falling inside the work or not,
    /// reached 4,747 instructions between repetitions of one build).
    public static let instructionsFloor = 20_000.0

    /// This threshold with the fields `other` sets taking their place.
    public func overridden(by other: MetricThreshold?) -> MetricThreshold {
        guard let other else { return self }
        return MetricThreshold(delta: other.delta ?? delta, floor: other.floor ?? floor)
    }
}
