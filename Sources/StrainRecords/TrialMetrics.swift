/// What one trial measured. Absent values were not measurable for that ending
/// (a child killed at its deadline reports no work time, for instance).
public struct TrialMetrics: Codable, Hashable, Sendable {
    /// Seconds the scenario's work ran, measured in the child around it.
    public var wallSeconds: Double?
    /// The child's user CPU seconds.
    public var userSeconds: Double?
    /// The child's system CPU seconds.
    public var systemSeconds: Double?
    /// The child's peak resident set size, in bytes.
    public var peakRSSBytes: Int?
    /// Context switches the child asked for (it blocked).
    public var voluntaryContextSwitches: Int?
    /// Context switches forced on the child (preempted).
    public var involuntaryContextSwitches: Int?
    /// The highest thread count seen in the child.
    public var peakThreads: Int?
    /// The most threads that were blocked at once in calls the scenario marked
    /// as blocking (`ScenarioContext.blocking`): what a thread cap must allow.
    public var peakBlockedWorkers: Int?
    /// Operations per second across all workers, for scenarios that count operations.
    public var throughputPerSecond: Double?
    /// Latency per operation (sampled), from the workers' merged HDR histograms.
    public var latency: LatencySummary?
    /// How evenly the workers shared the operations.
    public var fairness: Fairness?
    /// The stack size the threads that ran scenario work really had (the largest
    /// among them), measured from inside each thread.
    public var stackSizeBytes: Int?
    /// The deepest any of those threads' stacks went (touched pages, from the top).
    public var stackHighWaterBytes: Int?
    /// The recursion depth the scenario reported reaching.
    public var depth: Int?
    /// Frames on the faulting thread's stack at a fault.
    public var frames: Int?
    /// Seconds from spawning the child to reaping it: the trial's whole cost.
    public var trialSeconds: Double?
    /// Allocations the work made (malloc, calloc, realloc, posix_memalign,
    /// aligned_alloc, memalign), counted in the child while the work ran.
    public var allocations: Int?
    /// Bytes those allocations asked for.
    public var allocatedBytes: Int?
    /// Blocks the work freed (free, and realloc's old block).
    public var frees: Int?
    /// Instructions the work retired, counted by a perf counter or by callgrind in a counted trial
    /// (`TrialRecord.instructionCount` says how, or why there is none).
    public var instructions: Int?
    /// Metrics a scenario defines for itself.
    public var custom: [String: Double]

    /// Metrics with these values; absent ones were not measured.
    public init(
        wallSeconds: Double? = nil, userSeconds: Double? = nil, systemSeconds: Double? = nil,
        peakRSSBytes: Int? = nil, voluntaryContextSwitches: Int? = nil,
        involuntaryContextSwitches: Int? = nil, peakThreads: Int? = nil,
        stackSizeBytes: Int? = nil, stackHighWaterBytes: Int? = nil, depth: Int? = nil,
        frames: Int? = nil, trialSeconds: Double? = nil, peakBlockedWorkers: Int? = nil, custom: [String: Double] = [:]
    ) {
        self.wallSeconds = wallSeconds
        self.userSeconds = userSeconds
        self.systemSeconds = systemSeconds
        self.peakRSSBytes = peakRSSBytes
        self.voluntaryContextSwitches = voluntaryContextSwitches
        self.involuntaryContextSwitches = involuntaryContextSwitches
        self.peakThreads = peakThreads
        self.stackSizeBytes = stackSizeBytes
        self.stackHighWaterBytes = stackHighWaterBytes
        self.depth = depth
        self.frames = frames
        self.trialSeconds = trialSeconds
        self.peakBlockedWorkers = peakBlockedWorkers
        self.custom = custom
    }
}

/// One thread that ran scenario work, as it measured itself.
public struct ThreadReport: Codable, Hashable, Sendable {
    /// The kernel's thread id.
    public var tid: Int
    /// The stack size the thread really had.
    public var stackSizeBytes: Int
    /// How deep its stack went while it ran the work.
    public var stackHighWaterBytes: Int

    /// A report of these values.
    public init(tid: Int, stackSizeBytes: Int, stackHighWaterBytes: Int) {
        self.tid = tid
        self.stackSizeBytes = stackSizeBytes
        self.stackHighWaterBytes = stackHighWaterBytes
    }
}
