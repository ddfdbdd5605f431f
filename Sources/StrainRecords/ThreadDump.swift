/// Every thread of a stalled child, as the watchdog caught them: identical
/// stacks grouped, symbolized in the parent like an overflow trace.
public struct ThreadDump: Codable, Hashable, Sendable {
    /// How the stacks were taken: `signal` (each thread walked itself),
    /// `signal+ptrace` (threads that did not answer were walked by the parent),
    /// or `ptrace` (the child was too wedged to dump itself).
    public var method: String
    /// Threads in the child when the dump was taken (the watchdog not counted).
    public var threadCount: Int
    /// Identical stacks once each, the largest group first.
    public var groups: [ThreadGroup]
    /// The wait cycle, when the blocked threads' waits close one.
    public var waitCycle: WaitCycle?
    /// Threads whose stacks could not be taken at all.
    public var unreached: [Int]
    /// Nanoseconds from the first request to the last answer in the child.
    public var dumpNanoseconds: Int
    /// How file:line was resolved, and which modules had no debug information.
    public var sourceLocations: SourceLocations?

    /// A dump described by these values.
    public init(method: String, threadCount: Int, groups: [ThreadGroup], waitCycle: WaitCycle?, unreached: [Int], dumpNanoseconds: Int) {
        self.method = method
        self.threadCount = threadCount
        self.groups = groups
        self.waitCycle = waitCycle
        self.unreached = unreached
        self.dumpNanoseconds = dumpNanoseconds
    }
}

/// Threads whose stacks were identical.
public struct ThreadGroup: Codable, Hashable, Sendable {
    /// How many threads had this stack.
    public var count: Int
    /// `futex wait ← DispatchQueue.sync ← ThreadSafeArray.subscript ← …`: what
    /// the threads wait in, then the innermost frames worth naming.
    public var summary: String
    /// Whether these threads were running scenario work (not the harness's or the runtime's idle threads).
    public var inWork: Bool
    /// The threads, one each.
    public var threads: [DumpedThread]
    /// The shared stack, innermost frame first.
    public var frames: [Frame]

    /// A group of `count` threads sharing `frames`.
    public init(count: Int, summary: String, inWork: Bool, threads: [DumpedThread], frames: [Frame]) {
        self.count = count
        self.summary = summary
        self.inWork = inWork
        self.threads = threads
        self.frames = frames
    }
}

/// One thread of a dump.
public struct DumpedThread: Codable, Hashable, Sendable {
    /// The kernel's thread id.
    public var tid: Int
    /// The thread's name (`/proc/…/comm`, at most 15 characters); for a GCD worker that
    /// ran Strain's work from a serial queue, its root queue's whole label
    /// (`com.apple.root.default-qos.overcommit`), whose tail is all the kernel keeps.
    public var name: String
    /// The kernel's state letter: `S` sleeping, `D` uninterruptible, `R` running.
    public var state: String
    /// What it is blocked in, e.g. `futex wait` or `futex wait (timed)`; nil when running.
    public var wait: String?
    /// Whether its stack came from ptrace rather than from the thread itself.
    public var viaPtrace: Bool
    /// Frames of its stack below the group's, which the dump did not keep (it keeps the
    /// innermost 128 of a stack it walks); nil when it kept them all.
    public var framesNotKept: Int?

    /// A thread described by these values.
    public init(tid: Int, name: String, state: String, wait: String?, viaPtrace: Bool, framesNotKept: Int? = nil) {
        self.tid = tid
        self.name = name
        self.state = state
        self.wait = wait
        self.viaPtrace = viaPtrace
        self.framesNotKept = framesNotKept
    }
}

/// Threads each holding what the next one waits for, back to the first.
public struct WaitCycle: Codable, Hashable, Sendable {
    /// `strain.A (thread 12) waits for strain.B, held by thread 13, which waits for strain.A`.
    public var description: String
    /// The threads of the cycle, in order.
    public var links: [WaitLink]

    /// A cycle of `links`, described by `description`.
    public init(description: String, links: [WaitLink]) {
        self.description = description
        self.links = links
    }
}

/// One thread in a wait cycle.
public struct WaitLink: Codable, Hashable, Sendable {
    /// The thread's kernel id.
    public var tid: Int
    /// What it holds, if it said.
    public var holding: String?
    /// What it waits for.
    public var waitsFor: String

    /// Thread `tid`, holding `holding`, waiting for `waitsFor`.
    public init(tid: Int, holding: String?, waitsFor: String) {
        self.tid = tid
        self.holding = holding
        self.waitsFor = waitsFor
    }
}

/// What the watchdog saw when it called the trial stalled.
public struct StallReport: Codable, Hashable, Sendable {
    /// The suite's threshold: seconds without progress while work is pending.
    public var thresholdSeconds: Double
    /// Seconds from the scenario's last heartbeat to the watchdog's decision.
    public var silentSeconds: Double
    /// Seconds from the last heartbeat to the child's report being written,
    /// dump included.
    public var reportedAfterSeconds: Double
    /// Seconds from the last heartbeat to the parent reading the report.
    public var recordedAfterSeconds: Double?
    /// Units of work the scenario had queued, started and finished.
    public var queued: Int
    /// See `queued`.
    public var started: Int
    /// See `queued`.
    public var finished: Int
    /// Threads running scenario work when the stall was called, and how many of
    /// them were blocked in a wait with no timeout.
    public var threadsInWork: Int
    /// See `threadsInWork`.
    public var threadsInUntimedWait: Int

    /// A stall report of these values.
    public init(thresholdSeconds: Double, silentSeconds: Double, reportedAfterSeconds: Double, recordedAfterSeconds: Double? = nil,
                queued: Int, started: Int, finished: Int, threadsInWork: Int, threadsInUntimedWait: Int) {
        self.thresholdSeconds = thresholdSeconds
        self.silentSeconds = silentSeconds
        self.reportedAfterSeconds = reportedAfterSeconds
        self.recordedAfterSeconds = recordedAfterSeconds
        self.queued = queued
        self.started = started
        self.finished = finished
        self.threadsInWork = threadsInWork
        self.threadsInUntimedWait = threadsInUntimedWait
    }
}

/// The child's thread count at one moment, seconds after it was spawned.
public struct ThreadSample: Codable, Hashable, Sendable {
    /// Seconds since the child was spawned.
    public var seconds: Double
    /// Threads the child had then.
    public var threads: Int

    /// A sample of `threads` threads at `seconds`.
    public init(seconds: Double, threads: Int) {
        self.seconds = seconds
        self.threads = threads
    }
}

/// A platform whose GCD thread cap the trial's blocked workers exceeded: the
/// same code hangs there even when it completed here.
public struct CapVerdict: Codable, Hashable, Sendable {
    /// The platforms with this cap, e.g. `ios, macos`.
    public var platforms: String
    /// Threads a worker pool may have there.
    public var cap: Int
    /// The most workers blocked at once in the trial.
    public var needed: Int
    /// `needed 100 blocked workers; GCD's cap on ios, macos is 64: this hangs there`.
    public var message: String

    /// A verdict for `platforms` with `cap` threads, for a trial that needed `needed`.
    public init(platforms: String, cap: Int, needed: Int) {
        self.platforms = platforms
        self.cap = cap
        self.needed = needed
        self.message = "needed \(needed) blocked workers; GCD's cap on \(platforms) is \(cap): this hangs there"
    }
}
