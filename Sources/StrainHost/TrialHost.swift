internal import CStrainProbe
internal import CStrainTools
import Dispatch
import Foundation
import StrainKit
import StrainWire

/// The child's side of a trial: applies the profile, installs the fault
/// handler, runs the scenario on its strategy and reports on the result pipe.
///
/// - Important: `run` must be the first thing the child does. The profile's
///   stack settings only reach threads created after it, so the child checks
///   that it is still single-threaded and says so in its report.
package enum TrialHost {
    /// The file descriptor of the result pipe in the child.
    package static let resultDescriptor = ChildEnvironment.resultDescriptor
    /// Frames the fault handler keeps (head and tail); an 8 MiB overflow is ~131,000.
    package static let frameCapacity = 1 << 18
    /// Stack of the harness thread that prepares a scenario (building and archiving deep graphs).
    static let preparationStackBytes = 1 << 30
    /// How long a child that asked for a remote unwind waits to be killed.
    static let remoteUnwindPatienceSeconds = 30

    package static func run(specJSON: String, catalog: ScenarioCatalog) -> Never {
        run(decoding: specJSON, as: { try JSONDecoder().decode(TrialSpec.self, from: Data($0.utf8)) }, catalog: catalog)
    }

    /// The same, in a process that already runs threads of its own: a test process
    /// re-run for one expectation (`StrainTesting`). The profile's stack size reaches
    /// the threads created from here on (the strategy's); threads that were there
    /// before keep theirs, and each thread that ran the work reports the size it had.
    package static func runInRunningProcess(specJSON: String, catalog: ScenarioCatalog) -> Never {
        run(decoding: specJSON, as: { try JSONDecoder().decode(TrialSpec.self, from: Data($0.utf8)) }, catalog: catalog,
            requiringOneThread: false, workUnmarked: true)
    }

    /// The same, for a copy of the trial server, which decoded the spec before the copy.
    static func run(decoded: Result<TrialSpec, any Error>, catalog: ScenarioCatalog) -> Never {
        run(decoding: decoded, as: { try $0.get() }, catalog: catalog)
    }

    private static func run<Source>(decoding source: Source, as decode: (Source) throws -> TrialSpec, catalog: ScenarioCatalog,
                                    requiringOneThread: Bool = true, workUnmarked: Bool = false) -> Never {
        let threadsAtStart = Int(strain_thread_count())
        // First of all: never outlive the runner, even one killed with SIGKILL.
        let parent = getenv(ChildEnvironment.parentPID).flatMap { Int32(String(cString: $0)) } ?? 0
        var bindStatus = strain_child_bind_to_parent(parent)
        // Valgrind refuses the parent-death signal (a counted trial): a watcher process stands in.
        if InstructionCounter.excusesParentDeathFailure(bindStatus) { bindStatus = InstructionCounter.watchParent(parent) }
        let spec: TrialSpec
        do {
            spec = try decode(source)
        } catch {
            finish(HostReport(outcome: TrialOutcome(kind: .harnessError, message: "the child could not read its trial spec: \(error)"),
                              metrics: TrialMetrics(), threads: [], threadsAtStart: threadsAtStart))
        }
        if let bytes = spec.memoryLimitBytes {
            // Alternate stacks a trial server mapped ahead for this copy count against
            // the limit: gone, the copy's address space is a spawned trial's.
            strain_thread_drain_alternate_stacks()
            // `memory-limit:`: allocations past it fail in this child only.
            var limit = rlimit(rlim_cur: rlim_t(bytes), rlim_max: rlim_t(bytes))
            _ = setrlimit(__rlimit_resource_t(9) /* RLIMIT_AS */, &limit)
        }
        let profileStatus = strain_set_stack_profile(spec.profile.threadStackBytes ?? 0, spec.profile.mainStackBytes ?? 0)
        let installStatus = strain_probe_install(resultDescriptor, frameCapacity)
        // The fast walk's buffer, for the deepest stack this trial's threads may have,
        // and the main thread warmed for it (a trial server's copy inherits both warm).
        // Without them a fault is walked with unw_step, and its record says so.
        _ = strain_probe_reserve_fast_walk(max(spec.strategy.chosenStackBytes ?? 0, spec.profile.threadStackBytes ?? 0, spec.profile.mainStackBytes ?? 0))
        _ = strain_thread_warm_fast_walk()
        guard profileStatus == 0, installStatus == 0, bindStatus == 0 else {
            var message = "could not set up the child (profile errno \(profileStatus), fault handler errno \(installStatus), parent-death signal errno \(bindStatus))"
            // Out of memory under a tight `memory-limit:` (the fault handler's buffers come first): say which limit, and the fix.
            if let bytes = spec.memoryLimitBytes, profileStatus == ENOMEM || installStatus == ENOMEM {
                message = "memory-limit \(ByteSize.format(bytes)) leaves no room to set up the trial: \(message); raise the limit"
            }
            finish(HostReport(outcome: TrialOutcome(kind: .harnessError, message: message),
                              metrics: TrialMetrics(), threads: [], threadsAtStart: threadsAtStart))
        }
        // The parent shares the heartbeat's block, before any work reports progress.
        if let value = getenv(ChildEnvironment.heartbeatDescriptor), let shared = Int32(String(cString: value)) {
            _ = strain_heartbeat_share(shared)
        }
        guard threadsAtStart == 1 || !requiringOneThread else {
            finish(HostReport(outcome: TrialOutcome(kind: .harnessError, message: "\(threadsAtStart) threads were running before the profile was applied; its stack sizes would not reach them"),
                              metrics: TrialMetrics(), threads: [], threadsAtStart: threadsAtStart))
        }
        finish(runTrial(spec, catalog: catalog, threadsAtStart: threadsAtStart, workUnmarked: workUnmarked))
    }

    /// `workUnmarked`: the work reports none of its units or waits (a test's closure);
    /// the watchdog judges a stall from the threads alone (`Watchdog.workUnmarked`).
    static func runTrial(_ spec: TrialSpec, catalog: ScenarioCatalog, threadsAtStart: Int, workUnmarked: Bool = false) -> HostReport {
        func failure(_ kind: TrialOutcome.Kind, _ message: String) -> HostReport {
            HostReport(outcome: TrialOutcome(kind: kind, message: message), metrics: TrialMetrics(), threads: [], threadsAtStart: threadsAtStart)
        }
        guard let scenarioType = catalog.scenario(named: spec.scenario) else {
            return failure(.harnessError, "this strain binary has no scenario named '\(spec.scenario)'")
        }
        let parameters = ParameterValues(spec.parameters, for: scenarioType)
        for parameter in scenarioType.parameterSpecs {
            if let problem = parameter.problem(with: parameters.values[parameter.name] ?? "") { return failure(.harnessError, problem) }
        }
        let context = ScenarioContext(parameters: parameters, seed: spec.seed, profile: spec.profile)

        let workload: Workload
        // Under a `memory-limit:` a 1 GiB stack could not even be reserved (and the
        // thread would never start): take a quarter of the limit at most.
        let stackBytes = spec.memoryLimitBytes.map { min(preparationStackBytes, $0 / 4) } ?? preparationStackBytes
        // A thread whose stack cannot be mapped never starts, and Foundation does not
        // say so: the trial would wait for it until its deadline (a `deadlocked` of
        // the harness's own making). Under a limit, try the mapping first.
        if let limit = spec.memoryLimitBytes, !canMap(stackBytes + (1 << 20)) {
            return failure(.harnessError, "memory-limit \(ByteSize.format(limit)) leaves no room for the preparation thread's \(ByteSize.format(stackBytes)) stack; raise the limit")
        }
        switch prepare(scenarioType, parameters: parameters, context: context, stackBytes: stackBytes) {
        case .success(let prepared): workload = prepared
        case .failure(let error as UndeclaredParameterError): return failure(.harnessError, error.description)
        case .failure(let error): return failure(.threw, "while preparing: \(ErrorText.describe(error))")
        }
        // Sent now, while no work runs that could write to the pipe too: a trial that
        // crashes or hangs from here on keeps what `prepare` measured.
        // A value JSON cannot hold (NaN) leaves the line out: the report still carries it as before.
        let prepared = context.metrics
        if !prepared.isEmpty, let json = try? JSONEncoder().encode(PreparedMetrics(custom: prepared)) {
            writeAll(Data(PreparedMetrics.linePrefix.utf8) + json + Data("\n".utf8))
        }

        let executor = spec.strategy.makeExecutor(context: context)
        let before = ResourceUsage.current()
        let started = strain_monotonic_ns()
        let watchdog = Watchdog(
            stallSeconds: spec.stallSeconds, context: context, workUnmarked: workUnmarked, claim: { strain_claim_result() == 1 },
            measure: { measure(context: context, before: before, started: started, ended: strain_monotonic_ns()) }
        ) { stall in
            var report = HostReport(
                outcome: stall.outcome,
                metrics: stall.metrics,
                threads: context.reports, threadsAtStart: threadsAtStart,
                stall: stall.report, dump: stall.dump, lastHeartbeatNanoseconds: stall.lastHeartbeatNanoseconds
            )
            report.stall?.reportedAfterSeconds = Double(strain_monotonic_ns() - stall.lastHeartbeatNanoseconds) / 1e9
            finish(report, remoteUnwind: stall.dump.unanswered, claimed: true)
        }
        // STRAIN_WATCHDOG=off leaves stalls to the parent's deadline (with ptrace and the
        // shared heartbeat): for debugging the watchdog, and for testing that path.
        if getenv(ChildEnvironment.watchdogSwitch).map({ String(cString: $0) }) != "off" {
            do {
                try watchdog.start()
            } catch {
                return failure(.harnessError, "could not start the watchdog: \(error)")
            }
        }
        // Allocations are counted around the work alone, as its time is.
        // STRAIN_ALLOCATIONS=off leaves them uncounted: for measuring what counting costs.
        let countsAllocations = getenv("STRAIN_ALLOCATIONS").map({ String(cString: $0) }) != "off"
        if countsAllocations { AllocationCounter.begin() }
        // In a counted trial (callgrind or perf counters), instructions too: innermost,
        // so the allocation counter's own start and stop are not counted.
        InstructionCounter.begin()
        let result = Result { try workload(executor) }
        let counted = InstructionCounter.end()
        AllocationCounter.end()
        let ended = strain_monotonic_ns()
        executor.shutdown()

        let outcome: TrialOutcome
        switch result {
        case .success: outcome = .completed
        case .failure(let violation as InvariantViolation): outcome = TrialOutcome(kind: .invariantViolated, message: violation.description)
        case .failure(let error): outcome = TrialOutcome(kind: .threw, message: ErrorText.describe(error))
        }
        var report = HostReport(outcome: outcome, metrics: measure(context: context, before: before, started: started, ended: ended),
                                threads: context.reports, threadsAtStart: threadsAtStart)
        ConfinementVerdict.apply(context.confinement, to: &report)
        InstructionCounter.record(counted, in: &report)
        let sites = AllocationCounter.topSites()
        if !sites.isEmpty {
            report.allocationSites = sites
            if report.maps == nil { report.maps = AllocationCounter.mappings(of: sites) }
        }
        return report
    }

    /// Whether `bytes` of address space can be reserved now (then given back).
    static func canMap(_ bytes: Int) -> Bool {
        guard let region = mmap(nil, bytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0), region != MAP_FAILED else { return false }
        munmap(region, bytes)
        return true
    }

    /// The trial's measurements from its start to `ended`.
    static func measure(context: ScenarioContext, before: ResourceUsage, started: UInt64, ended: UInt64) -> TrialMetrics {
        let after = ResourceUsage.current()
        let threads = context.reports
        let depth = context.deepestDepth
        let blocked = context.waits.peak
        let operations = context.operationMetrics
        var metrics = TrialMetrics(
            wallSeconds: Double(ended - started) / 1e9,
            userSeconds: after.userSeconds - before.userSeconds,
            systemSeconds: after.systemSeconds - before.systemSeconds,
            peakRSSBytes: ProcessStatus.read("/proc/self/status")?.peakRSSBytes ?? after.peakRSSBytes,
            voluntaryContextSwitches: after.voluntaryContextSwitches - before.voluntaryContextSwitches,
            involuntaryContextSwitches: after.involuntaryContextSwitches - before.involuntaryContextSwitches,
            peakThreads: Int(strain_thread_count()),
            stackSizeBytes: threads.map(\.stackSizeBytes).max(),
            stackHighWaterBytes: threads.map(\.stackHighWaterBytes).max(),
            depth: depth > 0 ? depth : nil,
            peakBlockedWorkers: blocked > 0 ? blocked : nil,
            custom: context.metrics
        )
        metrics.throughputPerSecond = operations.throughput
        metrics.latency = operations.latency
        metrics.fairness = operations.fairness
        if strain_alloc_is_counting() != 0 || getenv("STRAIN_ALLOCATIONS").map({ String(cString: $0) }) != "off" {
            AllocationCounter.add(to: &metrics)
        }
        return metrics
    }

    /// Runs the scenario's `prepare` on a harness thread with a large stack, so
    /// that building and archiving a deep graph is never what overflows.
    static func prepare(_ type: any Scenario.Type, parameters: ParameterValues, context: ScenarioContext, stackBytes: Int) -> Result<Workload, any Error> {
        let handoff = ResultHandoff<Workload>()
        // A Foundation `Thread`, not a `HarnessThread`: Foundation does its first-use
        // work for threads here, before any scenario thread starts, so that work does
        // not land in a `thread(…)` trial's measured stack (a raw pthread here made a
        // `noop` on `thread(512KiB)` measure 16 KiB instead of 8).
        NamedThread.start("strain.prepare", stackBytes: stackBytes) {
            let outcome = Result<Workload, any Error> {
                // Not warmed for the fast walk: a new thread's warm-up (libunwind's cache for it)
                // cost every `noop` trial about 0.27 ms (median 2.90 ms without it, 3.17 ms with,
                // 300 trials each in one run), and this thread's 1 GiB stack is there so that
                // `prepare` never overflows; a fault here is walked with unw_step, as its record says.
                try ThreadProbe.begin(warmingFastWalk: false)
                let scenario = try type.init(parameters: parameters)
                // The runner refused a suite whose scenario reads a parameter it
                // does not declare; a binary built since the plan is caught here.
                let problems = parameters.problems
                if !problems.isEmpty { throw UndeclaredParameterError(problems: problems) }
                return try scenario.prepare(context: context)
            }
            handoff.deliver(outcome)
        }
        return Result { try handoff.wait() }
    }

    /// Writes the report on the result pipe and leaves without running exit
    /// handlers: threads a scenario left blocked must not hold the child up.
    /// The first to finish the trial (the main thread when the work returns,
    /// the watchdog at a stall, the fault handler at a crash) claims the result
    /// pipe; the others park. With `remoteUnwind` threads listed, the child
    /// stays (stopped threads and all) until the parent has walked those
    /// threads with ptrace and killed it.
    static func finish(_ report: HostReport, remoteUnwind: [Int] = [], claimed: Bool = false) -> Never {
        guard claimed || strain_claim_result() == 1 else {
            while true { pause() }
        }
        var line = Data(HostReport.linePrefix.utf8)
        line.append((try? JSONEncoder().encode(report)) ?? Data("{}".utf8))
        line.append(UInt8(ascii: "\n"))
        if !remoteUnwind.isEmpty {
            line.append(Data((HostReport.remoteUnwindPrefix + remoteUnwind.map(String.init).joined(separator: " ") + "\n").utf8))
        }
        writeAll(line)
        fflush(nil)
        if !remoteUnwind.isEmpty {
            // Wait for the parent's kill, but not for ever: a parent that died
            // (or never reads the request) must not leave this child behind.
            let parent = getppid()
            for _ in 0..<(Self.remoteUnwindPatienceSeconds * 10) {
                guard getppid() == parent else { break }
                usleep(100_000)
            }
        }
        _exit(0)
    }
}

extension TrialHost {
    /// Writes every byte of `data` on the result pipe, retrying interrupted writes.
    static func writeAll(_ data: Data) {
        data.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let written = write(resultDescriptor, buffer.baseAddress! + offset, buffer.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    break
                }
                offset += written
            }
        }
    }
}

/// An error's text, safe to build on any thread: Foundation's coding errors
/// carry the whole failing value, and describing a deeply nested one recurses
/// as deep as the value did (on a small main stack, that is an overflow).
enum ErrorText {
    static let limit = 2000

    static func describe(_ error: any Error) -> String {
        let text: String
        switch error {
        case EncodingError.invalidValue(_, let context):
            text = "EncodingError.invalidValue at depth \(context.codingPath.count): \(context.debugDescription)"
        case DecodingError.dataCorrupted(let context), DecodingError.keyNotFound(_, let context),
             DecodingError.typeMismatch(_, let context), DecodingError.valueNotFound(_, let context):
            let underlying = context.underlyingError.map { " (\(String(describing: $0).prefix(limit)))" } ?? ""
            text = "DecodingError at depth \(context.codingPath.count): \(context.debugDescription)\(underlying)"
        default:
            text = String(describing: error)
        }
        return text.count > limit ? String(text.prefix(limit)) + "…" : text
    }
}
