import StrainRecords

/// What a child that finished its work tells the parent, on the result pipe as
/// one line: `RESULT ` and this value as JSON.
package struct HostReport: Codable, Sendable {
    /// The version of this message; the parent checks it first.
    package static let currentVersion = 1

    package var version: Int
    package var outcome: TrialOutcome
    package var metrics: TrialMetrics
    /// Every thread that ran scenario work, as it measured itself.
    package var threads: [ThreadReport]
    /// Threads alive when the child applied its profile; 1 means the stack
    /// settings were in force before any other thread started.
    package var threadsAtStart: Int
    /// For `starved` and `deadlocked`: what the watchdog saw, and every thread's stack.
    package var stall: StallReport?
    package var dump: RawDump?
    /// CLOCK_MONOTONIC of the scenario's last heartbeat (shared by parent and
    /// child), so the parent can time the stall to the moment it reads the report.
    package var lastHeartbeatNanoseconds: UInt64?
    /// For `confinementViolated`: each violation with raw stacks, and the child's
    /// memory map to name their frames by.
    package var confinementViolations: [RawConfinementViolation]?
    package var maps: String?
    /// Where the work allocated most (raw addresses, named by the parent with `maps`).
    package var allocationSites: [RawAllocationSite]?

    package init(outcome: TrialOutcome, metrics: TrialMetrics, threads: [ThreadReport], threadsAtStart: Int,
                stall: StallReport? = nil, dump: RawDump? = nil, lastHeartbeatNanoseconds: UInt64? = nil) {
        self.version = Self.currentVersion
        self.outcome = outcome
        self.metrics = metrics
        self.threads = threads
        self.threadsAtStart = threadsAtStart
        self.stall = stall
        self.dump = dump
        self.lastHeartbeatNanoseconds = lastHeartbeatNanoseconds
    }

    /// The line prefix that marks the report on the result pipe.
    package static let linePrefix = "RESULT "
    /// The line after a report whose dump missed threads: `REMOTE-UNWIND tid tid …`.
    /// The child then waits for the parent to walk those threads with ptrace and kill it.
    package static let remoteUnwindPrefix = "REMOTE-UNWIND "
}
