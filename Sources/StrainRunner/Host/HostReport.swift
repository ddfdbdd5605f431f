import StrainKit

/// What a child that finished its work tells the parent, on the result pipe as
/// one line: `RESULT ` and this value as JSON.
public struct HostReport: Codable, Sendable {
    /// The version of this message; the parent checks it first.
    public static let currentVersion = 1

    public var version: Int
    public var outcome: TrialOutcome
    public var metrics: TrialMetrics
    /// Every thread that ran scenario work, as it measured itself.
    public var threads: [ThreadReport]
    /// Threads alive when the child applied its profile; 1 means the stack
    /// settings were in force before any other thread started.
    public var threadsAtStart: Int

    public init(outcome: TrialOutcome, metrics: TrialMetrics, threads: [ThreadReport], threadsAtStart: Int) {
        self.version = Self.currentVersion
        self.outcome = outcome
        self.metrics = metrics
        self.threads = threads
        self.threadsAtStart = threadsAtStart
    }

    /// The line prefix that marks the report on the result pipe.
    public static let linePrefix = "RESULT "
}
