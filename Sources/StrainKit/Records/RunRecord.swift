/// The record of one run: the one source every report and the gate read.
///
/// - Important: readers check `schemaVersion` before anything else; a version
///   they do not support is an input error, not a guess.
public struct RunRecord: Codable, Sendable {
    /// The version of this format that Strain writes.
    public static let currentSchemaVersion = 3
    /// Versions this Strain reads. Version 2 added the watchdog's records (thread
    /// dumps, stalls, thread timelines, cap verdicts, `stallSeconds`); version 3
    /// added `bisect`. An older file reads with those absent.
    public static let supportedSchemaVersions = 1...3

    public var schemaVersion: Int
    /// The Strain version that wrote the record.
    public var strainVersion: String
    public var suite: ResolvedSuite
    public var environment: EnvironmentRecord
    public var startedAt: String
    public var finishedAt: String
    /// The parent's own peak resident set size over the run, in bytes.
    public var runnerPeakRSSBytes: Int
    public var trials: [TrialRecord]
    /// What `strain bisect` found; its probes are the trials (absent before version 3).
    public var bisect: BisectSection?

    public init(
        suite: ResolvedSuite, environment: EnvironmentRecord, startedAt: String, finishedAt: String,
        runnerPeakRSSBytes: Int, trials: [TrialRecord]
    ) {
        self.schemaVersion = Self.currentSchemaVersion
        self.strainVersion = StrainVersion.current
        self.suite = suite
        self.environment = environment
        self.startedAt = startedAt
        self.finishedAt = finishedAt
        self.runnerPeakRSSBytes = runnerPeakRSSBytes
        self.trials = trials
    }
}

/// The suite as the run resolved it: every default filled in.
public struct ResolvedSuite: Codable, Hashable, Sendable {
    public var name: String
    public var description: String?
    /// Path of the suite file the run read.
    public var path: String
    public var repetitions: Int
    public var timeoutSeconds: Double
    /// The watchdog's threshold: seconds without progress while work is pending
    /// (absent in version 1 files).
    public var stallSeconds: Double?
    public var profiles: [String]
    public var runs: [ResolvedRun]

    public init(name: String, description: String?, path: String, repetitions: Int, timeoutSeconds: Double, stallSeconds: Double?, profiles: [String], runs: [ResolvedRun]) {
        self.name = name
        self.description = description
        self.path = path
        self.repetitions = repetitions
        self.timeoutSeconds = timeoutSeconds
        self.stallSeconds = stallSeconds
        self.profiles = profiles
        self.runs = runs
    }
}

/// One `runs:` entry of a suite, resolved.
public struct ResolvedRun: Codable, Hashable, Sendable {
    public var scenario: String
    /// Each parameter's values, by name, in the order the suite listed them.
    public var parameters: [String: [String]]
    public var strategies: [String]
    public var profiles: [String]
    public var repetitions: Int
    public var timeoutSeconds: Double
    public var stallSeconds: Double?
    /// Expected outcomes per strategy; `default` for the rest.
    public var expect: [String: [String]]

    public init(scenario: String, parameters: [String: [String]], strategies: [String], profiles: [String], repetitions: Int, timeoutSeconds: Double, stallSeconds: Double?, expect: [String: [String]]) {
        self.scenario = scenario
        self.parameters = parameters
        self.strategies = strategies
        self.profiles = profiles
        self.repetitions = repetitions
        self.timeoutSeconds = timeoutSeconds
        self.stallSeconds = stallSeconds
        self.expect = expect
    }
}

/// Where a run happened.
public struct EnvironmentRecord: Codable, Hashable, Sendable {
    public var host: String
    public var cores: Int
    public var memoryBytes: Int
    public var kernel: String
    public var architecture: String
    public var swiftVersion: String
    /// Soft limits in force for the runner (`stack`, `nofile`, `nproc`, `as`), bytes or counts; -1 for unlimited.
    public var rlimits: [String: Int]
    /// The git commit of the working directory, when it is a repository.
    public var gitCommit: String?

    public init(host: String, cores: Int, memoryBytes: Int, kernel: String, architecture: String, swiftVersion: String, rlimits: [String: Int], gitCommit: String?) {
        self.host = host
        self.cores = cores
        self.memoryBytes = memoryBytes
        self.kernel = kernel
        self.architecture = architecture
        self.swiftVersion = swiftVersion
        self.rlimits = rlimits
        self.gitCommit = gitCommit
    }
}

/// The version of Strain itself.
public enum StrainVersion {
    public static let current = "0.1.0"
}
