/// One finished trial as the run records it.
///
/// Grading (`expected`) and the platform cap verdicts are decided by the runner
/// and stored here; the record computes nothing.
public struct TrialRecord: Codable, Hashable, Sendable {
    /// The trial's identity: its key and repetition.
    public var id: TrialID
    /// Position of the trial in its plan, from 0 (the order it ran in a serial run).
    public var index: Int
    /// The seed the scenario derived its randomness from.
    public var seed: UInt64
    /// How the trial ended.
    public var outcome: TrialOutcome
    /// Whether the suite listed this outcome among those it expects.
    public var expected: Bool
    /// What the suite expected, for the reader of a report.
    public var expectedOutcomes: [String]
    /// What it measured.
    public var metrics: TrialMetrics
    /// The stack of the faulting thread, for `stackOverflow` and `crashed`.
    public var trace: FaultTrace?
    /// Every thread's stack, grouped, for `starved` and `deadlocked`.
    public var dump: ThreadDump?
    /// What the watchdog saw when it called the stall.
    public var stall: StallReport?
    /// Accesses from the wrong queue or thread, for `confinementViolated`.
    public var confinementViolations: [ConfinementViolation]?
    /// Where the work allocated, most allocations first (the top sites only).
    public var allocationSites: [AllocationSite]?
    /// The instruction count of a counted trial (`measure: [instructions]`), or why it has none.
    public var instructionCount: InstructionCount?
    /// What a sanitizer reported about the trial's process, for `dataRace` (ThreadSanitizer)
    /// and as the evidence of a crash (AddressSanitizer).
    public var sanitizerReports: [SanitizerReport]?
    /// The child's thread count over the whole trial, sampled by the parent
    /// (a point where the count changed).
    public var threadTimeline: [ThreadSample]?
    /// Platforms whose GCD cap this trial's blocked workers exceeded.
    public var capVerdicts: [CapVerdict]?
    /// The child's standard output and error, capped.
    public var stdout: String?
    /// See `stdout`.
    public var stderr: String?
    /// ISO 8601 time the trial started.
    public var startedAt: String
    /// The runtime's last words before the fault, as the probe read them in the
    /// process: glibc's abort message (`free(): double free detected in tcache 2`),
    /// the Swift runtime's `Fatal error: …`; else, under `strain exec`, the line that
    /// says why in what the program last wrote to its standard error (a JVM's
    /// `Exception in thread "main" …`, Rust's `… panicked at …` and its message).
    /// What the program writes reaches its standard error unchanged.
    public var lastWords: String?
    /// Faults of the program's other processes (a forked child), each under its own
    /// pid; the trial's outcome stays the program's own.
    public var processFaults: [ProcessFault]?
    /// What Strain left out of the files the trial's process wrote for it, each in a
    /// sentence (`sanitizer log sanitizer.4242 cut at 16 MiB of 2048 MiB`, `9,744 further
    /// distinct sanitizer reports counted, not read`): those files are the program's
    /// input to Strain, read with a bound.
    public var leftOut: [String]?

    /// A record of these values.
    public init(
        id: TrialID, index: Int, seed: UInt64, outcome: TrialOutcome, expected: Bool, expectedOutcomes: [String],
        metrics: TrialMetrics, trace: FaultTrace? = nil, capVerdicts: [CapVerdict]? = nil,
        stdout: String? = nil, stderr: String? = nil, startedAt: String
    ) {
        self.id = id
        self.index = index
        self.seed = seed
        self.outcome = outcome
        self.expected = expected
        self.expectedOutcomes = expectedOutcomes
        self.metrics = metrics
        self.trace = trace
        self.capVerdicts = capVerdicts
        self.stdout = stdout
        self.stderr = stderr
        self.startedAt = startedAt
    }

    /// The trial's configuration.
    public var key: TrialKey { id.key }
    /// The scenario it ran.
    public var scenario: String {
        get { id.key.scenario }
        set { id.key.scenario = newValue }
    }
    /// Where its work ran.
    public var strategy: StrategySpec { id.key.strategy }
    /// The platform the child emulated.
    public var profile: Profile { id.key.profile }
    /// Which repetition, from 1.
    public var repetition: Int { id.repetition }
    /// Parameter values by name; setting one keeps the others' order and appends a new name.
    public var parameters: [String: String] {
        get { Dictionary(id.key.parameters.map { ($0.name, $0.value) }, uniquingKeysWith: { first, _ in first }) }
        set {
            var ordered = id.key.parameters.compactMap { old in newValue[old.name].map { TrialKey.Parameter(name: old.name, value: $0) } }
            let known = Set(ordered.map(\.name))
            ordered += newValue.filter { !known.contains($0.key) }.sorted { $0.key < $1.key }.map { TrialKey.Parameter(name: $0.key, value: $0.value) }
            id.key.parameters = ordered
        }
    }

    private enum CodingKeys: String, CodingKey {
        case key, repetition, index, seed, outcome, expected, expectedOutcomes, metrics, trace, dump, stall
        case threadTimeline, capVerdicts, stdout, stderr, startedAt
        case confinementViolations, allocationSites, instructionCount, sanitizerReports
        case lastWords, processFaults, leftOut
        // Versions 1 and 2 spelled the key out flat.
        case scenario, parameters, strategy, profile
    }

    /// Decodes a record, reading version 1 and 2 shapes too.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let key: TrialKey
        if container.contains(.key) {
            key = try container.decode(TrialKey.self, forKey: .key)
        } else {
            // Versions 1 and 2: parameters were a mapping written with sorted keys, so
            // their order is the names' order.
            let parameters = try container.decode([String: String].self, forKey: .parameters)
            key = TrialKey(
                scenario: try container.decode(String.self, forKey: .scenario),
                parameters: parameters.sorted { $0.key < $1.key }.map { TrialKey.Parameter(name: $0.key, value: $0.value) },
                strategy: try container.decode(StrategySpec.self, forKey: .strategy),
                profile: try container.decode(Profile.self, forKey: .profile)
            )
        }
        id = TrialID(key: key, repetition: try container.decode(Int.self, forKey: .repetition))
        index = try container.decode(Int.self, forKey: .index)
        seed = try container.decode(UInt64.self, forKey: .seed)
        outcome = try container.decode(TrialOutcome.self, forKey: .outcome)
        expected = try container.decode(Bool.self, forKey: .expected)
        expectedOutcomes = try container.decode([String].self, forKey: .expectedOutcomes)
        metrics = try container.decode(TrialMetrics.self, forKey: .metrics)
        trace = try container.decodeIfPresent(FaultTrace.self, forKey: .trace)
        dump = try container.decodeIfPresent(ThreadDump.self, forKey: .dump)
        stall = try container.decodeIfPresent(StallReport.self, forKey: .stall)
        confinementViolations = try container.decodeIfPresent([ConfinementViolation].self, forKey: .confinementViolations)
        allocationSites = try container.decodeIfPresent([AllocationSite].self, forKey: .allocationSites)
        instructionCount = try container.decodeIfPresent(InstructionCount.self, forKey: .instructionCount)
        sanitizerReports = try container.decodeIfPresent([SanitizerReport].self, forKey: .sanitizerReports)
        threadTimeline = try container.decodeIfPresent([ThreadSample].self, forKey: .threadTimeline)
        capVerdicts = try container.decodeIfPresent([CapVerdict].self, forKey: .capVerdicts)
        stdout = try container.decodeIfPresent(String.self, forKey: .stdout)
        stderr = try container.decodeIfPresent(String.self, forKey: .stderr)
        startedAt = try container.decode(String.self, forKey: .startedAt)
        lastWords = try container.decodeIfPresent(String.self, forKey: .lastWords)
        processFaults = try container.decodeIfPresent([ProcessFault].self, forKey: .processFaults)
        leftOut = try container.decodeIfPresent([String].self, forKey: .leftOut)
    }

    /// Encodes the record in the current version.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id.key, forKey: .key)
        try container.encode(id.repetition, forKey: .repetition)
        try container.encode(index, forKey: .index)
        try container.encode(seed, forKey: .seed)
        try container.encode(outcome, forKey: .outcome)
        try container.encode(expected, forKey: .expected)
        try container.encode(expectedOutcomes, forKey: .expectedOutcomes)
        try container.encode(metrics, forKey: .metrics)
        try container.encodeIfPresent(trace, forKey: .trace)
        try container.encodeIfPresent(dump, forKey: .dump)
        try container.encodeIfPresent(stall, forKey: .stall)
        try container.encodeIfPresent(confinementViolations, forKey: .confinementViolations)
        try container.encodeIfPresent(allocationSites, forKey: .allocationSites)
        try container.encodeIfPresent(instructionCount, forKey: .instructionCount)
        try container.encodeIfPresent(sanitizerReports, forKey: .sanitizerReports)
        try container.encodeIfPresent(threadTimeline, forKey: .threadTimeline)
        try container.encodeIfPresent(capVerdicts, forKey: .capVerdicts)
        try container.encodeIfPresent(stdout, forKey: .stdout)
        try container.encodeIfPresent(stderr, forKey: .stderr)
        try container.encode(startedAt, forKey: .startedAt)
        try container.encodeIfPresent(lastWords, forKey: .lastWords)
        try container.encodeIfPresent(processFaults, forKey: .processFaults)
        try container.encodeIfPresent(leftOut, forKey: .leftOut)
    }
}

/// A fault in one of the program's other processes (a forked child that kept the
/// probe): which process, how it faulted, and its symbolized stack.
public struct ProcessFault: Codable, Hashable, Sendable {
    /// The process that faulted.
    public var pid: Int32
    /// Its parent when it faulted.
    public var parentPid: Int32?
    /// Its command line (a forked child shares its parent's).
    public var commandLine: [String]
    /// `crashed` or `stackOverflow`, with the signal.
    public var outcome: TrialOutcome
    /// The runtime's last words in that process (see `TrialRecord.lastWords`).
    public var lastWords: String?
    /// The faulting thread's stack.
    public var trace: FaultTrace

    /// A process fault of these values.
    public init(pid: Int32, parentPid: Int32?, commandLine: [String], outcome: TrialOutcome, lastWords: String?, trace: FaultTrace) {
        self.pid = pid
        self.parentPid = parentPid
        self.commandLine = commandLine
        self.outcome = outcome
        self.lastWords = lastWords
        self.trace = trace
    }
}
