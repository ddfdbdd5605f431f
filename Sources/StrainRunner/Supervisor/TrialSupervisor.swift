internal import CStrainProbe
import Foundation
import Glibc
import StrainKit
import StrainSymbols
import StrainWire

/// The parent's side of a suite's trial (and a bisect's probe), through the one trial
/// pipeline (`TrialPipeline.swift`): `ChildProcess` starts the child (spawned, or a
/// copy of the trial server) and reaps it; `ChildWatch` reads its pipes with bounds,
/// samples /proc and tears it down at the deadline; `OutcomeClassifier` decides the
/// outcome from what it said; `TrialRecordBuilder` makes the record.
///
/// A child that crashes, hangs, floods its output or closes its pipes ends up
/// as that trial's outcome; it never takes the supervisor down.
package struct TrialSupervisor: Sendable {
    /// The `strain` binary children re-enter through `_trial`.
    package var executable: String
    /// Bytes of standard output and of standard error kept per trial.
    package var outputCap = 64 * 1024
    /// Bytes of the result pipe kept per trial (a fault record with 262,144 frames is ~5 MB).
    package var resultCap = 64 * 1024 * 1024
    /// Seconds between SIGTERM and SIGKILL at a deadline.
    package var gracePeriod = 1.0
    /// Seconds between samples of the child's thread count.
    package var samplingInterval = 0.005
    /// Points kept in a trial's thread-count timeline; longer ones are thinned.
    package var timelineCap = 2000
    /// Decides each trial's outcome from what the watch saw and the child said.
    package let classifier: OutcomeClassifier
    /// How trials are started: copies of `server`, or a spawn each.
    package let isolation: TrialIsolation
    /// The trial server, for `.server` isolation; started at the first trial (or `prepare`).
    package let server: TrialServer?
    /// The counted trial server, for `.server` isolation under callgrind: the binary
    /// started once under callgrind, each counted trial a copy of it. Started at the first
    /// counted trial (or `prepareServers`); not-countable trials are the plain server's.
    package let countedServer: TrialServer?
    /// Where a ThreadSanitizer build's trials write their reports; nil in a plain build.
    let sanitized: SanitizedTrials?
    /// Where trials run under callgrind to count instructions (`measure: [instructions]`); nil otherwise.
    package let callgrind: CallgrindTrials?
    /// Trials that count instructions by perf counters instead (the `pmu` source); nil otherwise.
    package let pmu: PMUTrials?
    /// The child as a command of the caller's own instead of `executable _trial SPEC`
    /// (a test process re-run for one expectation): the spec goes in the environment
    /// (`ChildEnvironment.trialSpec`). Spawned each time; nil for `strain`'s children.
    package var command: TrialCommand?

    /// - Parameter notice: hears the trial server's restarts and a fall back to
    ///   spawning, one line each (standard error by default).
    /// - Parameter callgrind: counts each countable trial's instructions under callgrind
    ///   (a copy of the counted trial server, or spawned under callgrind with `.spawn`
    ///   isolation); `pmu` by perf counters (every trial spawned: a copy is not given the event).
    package init(executable: String, isolation: TrialIsolation = .server, symbolizer: Symbolizer = Symbolizer(),
                callgrind: CallgrindTrials? = nil, pmu: PMUTrials? = nil,
                notice: @escaping @Sendable (String) -> Void = { FileHandle.standardError.write(Data(($0 + "\n").utf8)) }) {
        self.executable = executable
        self.isolation = isolation
        self.sanitized = SanitizedTrials.make()
        self.callgrind = callgrind
        self.pmu = pmu
        self.server = isolation == .server && sanitized == nil && pmu == nil
            ? TrialServer(executable: executable, environment: Self.childEnvironment(heartbeat: false), notice: notice) : nil
        self.countedServer = isolation == .server && sanitized == nil ? callgrind.map {
            TrialServer(counted: $0, environment: Self.childEnvironment(heartbeat: false), notice: notice)
        } : nil
        self.classifier = OutcomeClassifier(traceBuilder: TraceBuilder(symbolizer: symbolizer), dumpBuilder: ThreadDumpBuilder(symbolizer: symbolizer),
                                            symbolizer: symbolizer)
        // A counted trial runs callgrind's stripped copy: its frames are named from this binary.
        if let callgrind { symbolizer.nameFrames(inCopy: callgrind.binary, from: callgrind.original) }
    }

    /// How this supervisor's trials were started, for run.json.
    package func executionRecord(jobs: Int = 1) -> ExecutionRecord {
        let statistics = server?.statistics
        let counted = countedServer?.statistics
        return ExecutionRecord(isolation: isolation, serverTrials: (statistics?.trials ?? 0) + (counted?.trials ?? 0),
                               serverRestarts: (statistics?.restarts ?? 0) + (counted?.restarts ?? 0),
                               fallback: counted?.fallback.map { "the counted trial server: \($0)" } ?? statistics?.fallback
                                   ?? (isolation == .server && sanitized != nil ? SanitizedTrials.serverNote
                                       : isolation == .server && pmu != nil ? "instructions were counted by perf counters, whose event a trial server's copy is not given: every trial was spawned" : nil),
                               jobs: jobs)
    }

    /// Starts the trial server the run's trials need first: the counted one when
    /// instructions are counted under callgrind, else the plain one. Call it on a thread
    /// that lives as long as the run (`TrialServer` says why).
    package func prepareServers() {
        if let countedServer { countedServer.prepare() } else { server?.prepare() }
    }

    /// Runs one trial; a trial the runner stopped (a stop signal) is a `harnessError`.
    package func run(_ spec: TrialSpec) -> TrialRecord {
        runUnlessStopped(spec) ?? TrialRecord(
            graded: spec, outcome: TrialOutcome(kind: .harnessError, message: "the runner was stopped by a signal during this trial"),
            metrics: TrialMetrics(), trace: nil, stdout: nil, stderr: nil, startedAt: Date().formatted(.iso8601))
    }

    /// Runs one trial, or returns nil when a stop signal reached the runner while it
    /// ran: the child's process group is then killed and the trial has no outcome.
    package func runUnlessStopped(_ spec: TrialSpec) -> TrialRecord? {
        if RunnerSignals.stopSignal != nil { return nil }
        let startedAt = Date().formatted(.iso8601)
        // A counted trial runs under callgrind, about 50 times slower after Valgrind's own
        // start: its deadline and stall threshold stretch to match.
        let counted = callgrind.flatMap { $0.notCountable(spec.scenario) == nil ? $0 : nil }
        var launched = spec
        if counted != nil {
            launched.timeoutSeconds = spec.timeoutSeconds * CallgrindTrials.slowdown + CallgrindTrials.startSeconds
            launched.stallSeconds *= CallgrindTrials.slowdown
        }
        let specJSON: String
        do {
            specJSON = String(decoding: try JSONEncoder().encode(launched), as: UTF8.self)
        } catch {
            return TrialRecord(graded: spec, outcome: TrialOutcome(kind: .harnessError, message: "could not encode the trial spec: \(error)"),
                               metrics: TrialMetrics(), trace: nil, stdout: nil, stderr: nil, startedAt: startedAt)
        }
        // The heartbeat in shared memory, so a child too wedged to report can still be judged at its deadline.
        let heartbeat = SharedHeartbeat()
        defer { heartbeat?.close() }
        let start = strain_monotonic_ns()
        let child: ChildProcess
        do {
            if let command {
                child = try ChildProcess.spawn(executable: command.executable, arguments: command.arguments,
                                               environment: Self.childEnvironment(heartbeat: heartbeat != nil, sanitized: sanitized)
                                                   + command.environment + ["\(ChildEnvironment.trialSpec)=\(specJSON)"],
                                               shared: heartbeat?.descriptor)
            } else if counted != nil, let countedServer,
                      let copy = try ChildProcess.copy(from: countedServer, specJSON: specJSON, shared: heartbeat?.descriptor) {
                child = copy
            } else if counted == nil, let server, let copy = try ChildProcess.copy(from: server, specJSON: specJSON, shared: heartbeat?.descriptor) {
                child = copy
            } else if let counted {
                let command = counted.command(trialArguments: ["_trial", specJSON])
                child = try ChildProcess.spawn(executable: command.executable, arguments: command.arguments,
                                               environment: counted.environment(Self.childEnvironment(heartbeat: heartbeat != nil, sanitized: sanitized)),
                                               shared: heartbeat?.descriptor)
            } else {
                child = try ChildProcess.spawn(executable: executable, arguments: ["_trial", specJSON],
                                               environment: Self.childEnvironment(heartbeat: heartbeat != nil, sanitized: sanitized) + (pmu?.environment(of: spec.scenario) ?? []),
                                               shared: heartbeat?.descriptor)
            }
        } catch {
            return TrialRecord(graded: spec, outcome: TrialOutcome(kind: .harnessError, message: error.description),
                               metrics: TrialMetrics(), trace: nil, stdout: nil, stderr: nil, startedAt: startedAt)
        }
        let watch = ChildWatch(outputCap: outputCap, resultCap: resultCap, teardown: TeardownStep.gentleThenForced(graceSeconds: gracePeriod),
                               samplingInterval: samplingInterval, threadLimit: spec.threadLimit)
        let watched = watch.watch(child, start: start, deadline: start &+ TrialSpec.nanoseconds(launched.timeoutSeconds), heartbeat: heartbeat)
        // Grandchildren that left the trial's process group (setsid) and were
        // adopted by the runner when the child ended die with the trial too.
        AdoptedOrphans.killAll()
        if watched.stoppedByRunner { return nil }
        let elapsed = Double(strain_monotonic_ns() - start) / 1e9
        let sanitizerRead = sanitized?.reports(pid: child.pid, symbolizer: classifier.symbolizer) ?? SanitizerLog.Read()
        let classified = classifier.classify(watched, timeoutSeconds: launched.timeoutSeconds, stallSeconds: launched.stallSeconds)
        var trial = TrialRecordBuilder(timelineCap: timelineCap).record(spec, classified, watched: watched, trialSeconds: elapsed,
                                                                        sanitizerReports: sanitizerRead.reports, startedAt: startedAt)
        trial.leftOut = sanitizerRead.leftOut.isEmpty ? nil : sanitizerRead.leftOut
        let completed = trial.outcome.kind == .completed
        if let callgrind { countInstructions(of: &trial, counted: counted != nil, counted?.count(pid: child.pid, completed: completed, symbolizer: classifier.symbolizer)
                                             ?? InstructionCount(source: "callgrind", instructions: nil, notCountable: callgrind.notCountable(spec.scenario))) }
        if let pmu { countInstructions(of: &trial, counted: pmu.notCountable(spec.scenario) == nil, pmu.count(scenario: spec.scenario, completed: completed, reported: trial.metrics.instructions)) }
        return trial
    }

    /// A trial's instruction count (or why it has none) into its record; a counted trial's timings out (callgrind's mean nothing
    /// for the work; a pmu trial's include a counter read at each unit's start and end), and callgrind's RSS (Valgrind's own memory).
    private func countInstructions(of trial: inout TrialRecord, counted: Bool, _ count: InstructionCount) {
        trial.instructionCount = count
        guard counted else { return }
        trial.metrics.instructions = count.instructions
        trial.metrics.wallSeconds = nil
        trial.metrics.userSeconds = nil
        trial.metrics.systemSeconds = nil
        trial.metrics.throughputPerSecond = nil
        trial.metrics.latency = nil
        if count.source == "callgrind" { trial.metrics.peakRSSBytes = nil }  // Valgrind's own memory, not the work's
    }

    /// A trial's environment (the trial server's too, without the heartbeat): the
    /// runner's own, with Swift's backtracer off (it would race our handler for the
    /// same signals) and the runner's pid, which the child checks against getppid()
    /// after asking for a parent-death signal.
    static func childEnvironment(heartbeat: Bool, sanitized: SanitizedTrials? = nil) -> [String] {
        var environment = ProcessInfo.processInfo.environment
        if let sanitized { environment = sanitized.environment(environment) }
        environment["SWIFT_BACKTRACE"] = "enable=no"
        // Swift seeds its hashing per process: a Set's or Dictionary's growth, and so
        // its allocations, would differ between repetitions of the same code. A
        // counted metric needs the same process each time (a runner's own setting stays).
        if environment["SWIFT_DETERMINISTIC_HASHING"] == nil { environment["SWIFT_DETERMINISTIC_HASHING"] = "1" }
        _ = childrenWithoutAddressRandomization
        environment[ChildEnvironment.parentPID] = String(getpid())
        environment[ChildEnvironment.heartbeatDescriptor] = heartbeat ? String(ChildEnvironment.sharedDescriptor) : nil
        return environment.map { "\($0.key)=\($0.value)" }
    }

    /// Address randomization off for every child this process starts from now on
    /// (`personality(ADDR_NO_RANDOMIZE)` is inherited and takes effect at exec): hash
    /// tables keyed by addresses (NSKeyedArchiver's) then grow alike in every run, so
    /// allocation counts repeat exactly (`cyclic-graph` archiving 50 teams: 87,760
    /// allocations in each of 4 runs, against 87,753–88,090 with randomization). The
    /// runner's own layout is unchanged. False where the call is refused (a seccomp
    /// profile may): counts then vary by a few tenths of a percent on such rows.
    static let childrenWithoutAddressRandomization: Bool = {
        typealias Personality = @convention(c) (UInt) -> Int32
        // Not imported by Glibc's module map: looked up by name.
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "personality") else { return false }
        let personality = unsafeBitCast(symbol, to: Personality.self)
        let current = personality(0xffff_ffff)
        guard current >= 0 else { return false }
        let noRandomize: UInt = 0x0040000
        return personality(UInt(current) | noRandomize) >= 0
    }()

    /// Every thread of a live child (or of a descendant), walked from here with ptrace.
    package static func ptraceDump(pid: Int32) -> RawDump {
        let started = strain_monotonic_ns()
        var threads: [RawThread] = []
        let giveUp = started &+ TrialSpec.nanoseconds(RemoteUnwinder.budgetSeconds)
        for tid in ThreadState.tids(pid: String(pid)) {
            let state = ThreadState.read(pid: String(pid), tid: tid)
            let stack = strain_monotonic_ns() < giveUp ? RemoteUnwinder.stack(pid: pid, tid: tid) : nil
            threads.append(RawThread(tid: tid, name: state?.name ?? "?", state: state?.state ?? stack?.state ?? "?",
                                     wait: state?.wait, inWork: false, frames: stack?.frames ?? [], viaPtrace: stack != nil))
        }
        return RawDump(method: "ptrace", threads: threads, maps: ProcFile.contents(of: "/proc/\(pid)/maps"),
                       unanswered: [], dumpNanoseconds: Int(strain_monotonic_ns() - started), waitCycle: nil)
    }

    /// The tids of a complete `REMOTE-UNWIND` line after the report, if the child wrote one.
    static func remoteUnwindRequest(in bytes: [UInt8]) -> [Int]? { ChildProtocol.pendingRemoteUnwind(in: bytes) }
}

/// A trial's child started as a command of the caller's own: a test process re-run
/// for one expectation. Its environment is added to the trial's own.
package struct TrialCommand: Sendable {
    package var executable: String
    package var arguments: [String]
    /// `NAME=VALUE` entries.
    package var environment: [String]

    package init(executable: String, arguments: [String], environment: [String]) {
        self.executable = executable
        self.arguments = arguments
        self.environment = environment
    }
}
