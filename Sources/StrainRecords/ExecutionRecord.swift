/// How a run started its trials: each a fresh process of the binary, or a copy
/// of a trial server that had loaded everything once.
public enum TrialIsolation: String, Codable, Hashable, Sendable, CaseIterable {
    /// A pre-initialised trial server (same binary, single-threaded) copies itself
    /// into each trial; the copy is the runner's child, in its own process group.
    case server
    /// `posix_spawn` of the whole binary per trial.
    case spawn
}

/// How the trials of a run were executed: the isolation asked for, what it came
/// to, and how many trials ran at once. Absent in runs before it was recorded.
public struct ExecutionRecord: Codable, Hashable, Sendable {
    /// The isolation the run asked for.
    public var isolation: TrialIsolation
    /// Trials that were copies of the trial server; the others were spawned.
    public var serverTrials: Int
    /// Times the trial server was started again after it died.
    public var serverRestarts: Int
    /// Why the run fell back to spawning, when it did.
    public var fallback: String?
    /// The most trials that ran at once (`--jobs`).
    public var jobs: Int
    /// The runner's own resident set size as the run went on: after its first
    /// trial, then after every tenth of the plan (so a leak shows as a slope).
    public var runnerRSS: [RunnerRSSSample]?

    /// A record of a run with `isolation`, and what it came to.
    public init(isolation: TrialIsolation, serverTrials: Int = 0, serverRestarts: Int = 0, fallback: String? = nil, jobs: Int = 1) {
        self.isolation = isolation
        self.serverTrials = serverTrials
        self.serverRestarts = serverRestarts
        self.fallback = fallback
        self.jobs = jobs
    }
}

/// The runner's resident set size (VmRSS) after `trials` trials of the run.
public struct RunnerRSSSample: Codable, Hashable, Sendable {
    /// Trials finished when the sample was taken.
    public var trials: Int
    /// The runner's resident set size then, in bytes.
    public var bytes: Int

    /// A sample of `bytes` after `trials` trials.
    public init(trials: Int, bytes: Int) {
        self.trials = trials
        self.bytes = bytes
    }
}
