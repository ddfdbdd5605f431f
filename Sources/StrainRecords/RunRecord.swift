/// The record of one run: the one source every report and the gate read.
///
/// - Important: readers check `schemaVersion` before anything else; a version
///   they do not support is an input error, not a guess.
public struct RunRecord: Codable, Sendable {
    /// The version of this format that Strain writes.
    public static let currentSchemaVersion = 4
    /// Versions this Strain reads. Version 2 added the watchdog's records (thread
    /// dumps, stalls, thread timelines, cap verdicts, `stallSeconds`); a version 1
    /// file reads with those absent. Version 3 keys every trial by a typed
    /// `TrialKey` (parameters in order), declares scenario metrics, carries the
    /// suite's gate thresholds, the plan's identity and shard, and the machine's
    /// fingerprint; version 1 and 2 trials read with their parameters in name order.
    /// Version 4 added `bisect`.
    public static let supportedSchemaVersions = 1...4

    /// The format version this record was written in; readers check it first.
    public var schemaVersion: Int
    /// The Strain version that wrote the record.
    public var strainVersion: String
    /// The suite as the run resolved it.
    public var suite: ResolvedSuite
    /// The machine and build that ran it.
    public var environment: EnvironmentRecord
    /// When the run started (ISO 8601).
    public var startedAt: String
    /// When it finished (ISO 8601).
    public var finishedAt: String
    /// The parent's own peak resident set size over the run, in bytes.
    public var runnerPeakRSSBytes: Int
    /// Every trial, in plan order.
    public var trials: [TrialRecord]
    /// The metrics the run's scenarios declared for themselves (absent before version 3).
    public var customMetrics: [MetricDescriptor]?
    /// What was planned: the plan's identity and size, and the shard this run covered.
    public var plan: PlanRecord?
    /// The machines that ran it, one per shard, for a run merged from shards.
    public var shards: [ShardRecord]?
    /// Whether the run was stopped before its plan was done (a signal).
    public var interrupted: Bool?
    /// What `strain bisect` found; its probes are the trials (absent before version 4).
    public var bisect: BisectSection?
    /// The ranking tables the run's scenarios ask for (absent when none does, and
    /// in records written before Strain wrote them: readers then rank by `guard`).
    public var rankings: [MetricRanking]?
    /// How the trials were started and how many ran at once (absent in older runs).
    public var execution: ExecutionRecord?

    /// A record of version `currentSchemaVersion` written by this Strain.
    public init(
        suite: ResolvedSuite, environment: EnvironmentRecord, startedAt: String, finishedAt: String,
        runnerPeakRSSBytes: Int, trials: [TrialRecord], customMetrics: [MetricDescriptor]? = nil, plan: PlanRecord? = nil
    ) {
        self.schemaVersion = Self.currentSchemaVersion
        self.strainVersion = StrainVersion.current
        self.suite = suite
        self.environment = environment
        self.startedAt = startedAt
        self.finishedAt = finishedAt
        self.runnerPeakRSSBytes = runnerPeakRSSBytes
        self.trials = trials
        self.customMetrics = customMetrics
        self.plan = plan
    }

    /// Every metric a reader should know of in this run: Strain's own, the
    /// scenarios' declared ones, and any other a trial carries (never judged).
    public var metricDescriptors: [MetricDescriptor] {
        var descriptors = MetricDescriptor.builtIn
        var known = Set(descriptors.map(\.name))
        for descriptor in customMetrics ?? [] where known.insert(descriptor.name).inserted { descriptors.append(descriptor) }
        for name in Set(trials.flatMap(\.metrics.custom.keys)).sorted() where known.insert(name).inserted {
            descriptors.append(.undeclared(name))
        }
        return descriptors
    }
}

/// What a run set out to do: the whole plan's identity, and which shard of it this
/// run covered.
public struct PlanRecord: Codable, Hashable, Sendable {
    /// A hash of every trial ID in the plan (after filters, before sharding): two
    /// runs with the same hash planned the same trials.
    public var hash: String
    /// Trials in the whole plan.
    public var trialCount: Int
    /// The shard this run covered, nil for the whole plan.
    public var shard: ShardRecord?

    /// A plan of `trialCount` trials with identity `hash`, of which this run covered `shard`.
    public init(hash: String, trialCount: Int, shard: ShardRecord?) {
        self.hash = hash
        self.trialCount = trialCount
        self.shard = shard
    }
}

/// One shard of a plan: `index` of `count`, from 1, and where it ran.
public struct ShardRecord: Codable, Hashable, Sendable {
    /// This shard's number, from 1.
    public var index: Int
    /// How many shards the plan was split into.
    public var count: Int
    /// Trials this shard ran.
    public var trialCount: Int?
    /// The machine that ran it (set when shards are merged).
    public var environment: EnvironmentRecord?

    /// Shard `index` of `count`.
    public init(index: Int, count: Int, trialCount: Int? = nil, environment: EnvironmentRecord? = nil) {
        self.index = index
        self.count = count
        self.trialCount = trialCount
        self.environment = environment
    }
}

/// The suite as the run resolved it: every default filled in.
public struct ResolvedSuite: Codable, Hashable, Sendable {
    /// The suite's `name:`.
    public var name: String
    /// The suite's `description:`, if it has one.
    public var description: String?
    /// Path of the suite file the run read.
    public var path: String
    /// Repetitions of every run, unless a run sets its own.
    public var repetitions: Int
    /// Seconds a trial may take before the parent kills it.
    public var timeoutSeconds: Double
    /// The watchdog's threshold: seconds without progress while work is pending
    /// (absent in version 1 files).
    public var stallSeconds: Double?
    /// The profiles every run uses unless it sets its own.
    public var profiles: [String]
    /// The `runs:` entries, resolved.
    public var runs: [ResolvedRun]
    /// The gate's thresholds for the whole suite, by metric name.
    public var gate: [String: MetricThreshold]?
    /// FNV-1a of the suite file's text, 16 hex digits: two runs of different text
    /// differ here even where the resolved values agree (absent before 0.1.0's gate check).
    public var textHash: String?

    /// A suite resolved with these values.
    public init(name: String, description: String?, path: String, repetitions: Int, timeoutSeconds: Double, stallSeconds: Double?, profiles: [String], runs: [ResolvedRun], gate: [String: MetricThreshold]? = nil, textHash: String? = nil) {
        self.name = name
        self.description = description
        self.path = path
        self.repetitions = repetitions
        self.timeoutSeconds = timeoutSeconds
        self.stallSeconds = stallSeconds
        self.profiles = profiles
        self.runs = runs
        self.gate = gate
        self.textHash = textHash
    }
}

/// One `runs:` entry of a suite, resolved.
public struct ResolvedRun: Codable, Hashable, Sendable {
    /// The scenario the entry runs.
    public var scenario: String
    /// Each parameter's values, in the scenario's order (version 1 and 2 files: in name order).
    public var parameters: [ParameterSweep]
    /// The strategies, as the suite wrote them.
    public var strategies: [String]
    /// The profiles the entry runs on.
    public var profiles: [String]
    /// Repetitions of each combination.
    public var repetitions: Int
    /// Seconds a trial may take.
    public var timeoutSeconds: Double
    /// The watchdog's threshold for this entry (absent in version 1 files).
    public var stallSeconds: Double?
    /// Expected outcomes per strategy; `default` for the rest.
    public var expect: [String: [String]]
    /// The gate's thresholds for this run's trials, by metric name, over the suite's.
    public var gate: [String: MetricThreshold]?
    /// The line of the suite file where this entry starts (for CI annotations).
    public var line: Int?

    /// An entry resolved with these values.
    public init(scenario: String, parameters: [ParameterSweep], strategies: [String], profiles: [String], repetitions: Int, timeoutSeconds: Double, stallSeconds: Double?, expect: [String: [String]], gate: [String: MetricThreshold]? = nil, line: Int? = nil) {
        self.scenario = scenario
        self.parameters = parameters
        self.strategies = strategies
        self.profiles = profiles
        self.repetitions = repetitions
        self.timeoutSeconds = timeoutSeconds
        self.stallSeconds = stallSeconds
        self.expect = expect
        self.gate = gate
        self.line = line
    }

    private enum CodingKeys: String, CodingKey {
        case scenario, parameters, strategies, profiles, repetitions, timeoutSeconds, stallSeconds, expect, gate, line
    }

    /// Decodes an entry, reading version 1 and 2 parameter mappings too.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        scenario = try container.decode(String.self, forKey: .scenario)
        if let sweeps = try? container.decode([ParameterSweep].self, forKey: .parameters) {
            parameters = sweeps
        } else {
            // Versions 1 and 2: a mapping, written with sorted keys.
            parameters = try container.decode([String: [String]].self, forKey: .parameters)
                .sorted { $0.key < $1.key }.map { ParameterSweep(name: $0.key, values: $0.value) }
        }
        strategies = try container.decode([String].self, forKey: .strategies)
        profiles = try container.decode([String].self, forKey: .profiles)
        repetitions = try container.decode(Int.self, forKey: .repetitions)
        timeoutSeconds = try container.decode(Double.self, forKey: .timeoutSeconds)
        stallSeconds = try container.decodeIfPresent(Double.self, forKey: .stallSeconds)
        expect = try container.decode([String: [String]].self, forKey: .expect)
        gate = try container.decodeIfPresent([String: MetricThreshold].self, forKey: .gate)
        line = try container.decodeIfPresent(Int.self, forKey: .line)
    }
}

/// One parameter of a run and the values it sweeps.
public struct ParameterSweep: Codable, Hashable, Sendable {
    /// The parameter's name.
    public var name: String
    /// The values the run sweeps, in the suite's order.
    public var values: [String]

    /// The sweep of `name` over `values`.
    public init(name: String, values: [String]) {
        self.name = name
        self.values = values
    }
}

/// Where a run happened.
public struct EnvironmentRecord: Codable, Hashable, Sendable {
    /// The host name.
    public var host: String
    /// CPUs the machine has.
    public var cores: Int
    /// Physical memory, in bytes.
    public var memoryBytes: Int
    /// The kernel release (`uname -r`).
    public var kernel: String
    /// The CPU architecture (`x86_64`).
    public var architecture: String
    /// The Swift compiler's version line.
    public var swiftVersion: String
    /// Soft limits in force for the runner (`stack`, `nofile`, `nproc`, `as`), bytes or counts; -1 for unlimited.
    public var rlimits: [String: Int]
    /// The git commit of the working directory, when it is a repository: the checkout
    /// the run started in, which is not always the code of the binary (see `build`).
    public var gitCommit: String?
    /// The binary that ran the run: what tells two builds apart when they ran from one checkout.
    public var build: BuildIdentity?
    /// The CPU's model name (`/proc/cpuinfo`).
    public var cpuModel: String?
    /// CPUs the cgroup allows (`cpu.max` quota / period); nil when unlimited.
    public var cgroupCPULimit: Double?
    /// `debug` or `release`: how the runner was built.
    public var buildConfiguration: String?
    /// The 1-minute load average at the start and the end of the run.
    public var loadAverageStart: Double?
    /// See `loadAverageStart`.
    public var loadAverageEnd: Double?
    /// Share of CPU time stolen by the hypervisor during the run (`/proc/stat`), 0 to 1.
    public var stealFraction: Double?
    /// The library the trials' malloc family forwarded to (counting as it went): glibc's
    /// `libc.so.6`, an allocator preloaded through `LD_PRELOAD`, or `sanitizer`.
    public var allocator: String?

    /// A machine described by these values.
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

/// What identifies the executable that ran a run: its path and its ELF build ID
/// (`.note.gnu.build-id`, which the linker derives from the code), or a hash of its
/// bytes when it has none.
public struct BuildIdentity: Codable, Hashable, Sendable {
    /// The executable's path (`/proc/self/exe`).
    public var executablePath: String
    /// The GNU build ID, lowercase hex; nil when the binary has none.
    public var buildID: String?
    /// FNV-1a of the executable's bytes, 16 hex digits: only when it has no build ID.
    public var contentHash: String?

    /// A build identified by these values.
    public init(executablePath: String, buildID: String?, contentHash: String?) {
        self.executablePath = executablePath
        self.buildID = buildID
        self.contentHash = contentHash
    }

    /// `build 7b5e265a7af6` or `binary hash 0123456789ab`: the short name of this build.
    public var shortName: String {
        if let buildID { return "build \(buildID.prefix(12))" }
        if let contentHash { return "binary hash \(contentHash.prefix(12))" }
        return "binary"
    }
}

/// The version of Strain itself, in one place: `strain --version` prints it, every
/// run.json records it, and `.ci/bundle` names the release bundle after it (read from
/// the built binary). A new version gets its entry in StrainCLI's Changelog article.
public enum StrainVersion {
    /// This build's version.
    public static let current = "0.1.0"
}
