import CStrainProbe
import Synchronization

/// What a scenario sees of the trial it runs in: its seed and profile, the
/// heartbeat the watchdog reads, and the places to record what it measured.
///
/// The child creates one context per trial and hands it to
/// ``Scenario/prepare(context:)``; the workload captures it. Every member is
/// safe to call from any thread.
///
/// - Important: The heartbeat, the work marks and the recursion depth behind a
///   context are the child process's own: one trial runs per process.
public final class ScenarioContext: Sendable {
    /// The scenario's parameter values (read them in `init(parameters:)`).
    package let parameters: ParameterValues
    /// The seed the scenario derives any randomness from, so a trial can be rerun.
    public let seed: UInt64
    /// The platform the child emulates.
    public let profile: Profile
    /// Where the scenario reports progress; the watchdog reads it.
    public let heartbeat = Heartbeat()
    /// Who waits for what, for the watchdog to name wait cycles.
    package let waits = WaitRegistry()
    /// Accesses from the wrong queue or thread that `ConfinementChecker`s caught.
    package let confinement = ConfinementLog()
    /// Whether a `.thread(stackBytes:)` trial gives the work's closure the room a
    /// plain `Thread` of that size gives its closure (``PlainThreadRoom``): set in
    /// `prepare` by a scenario that calls its closure through `PlainThreadRoom.call`.
    package let givesPlainThreadRoom = Atomic<Bool>(false)
    private let threadReports = Mutex<[ThreadReport]>([])
    private let customMetrics = Mutex<[String: Double]>([:])
    private let operations = Mutex<OperationMeasurements>(OperationMeasurements())

    package init(parameters: ParameterValues, seed: UInt64, profile: Profile) {
        self.parameters = parameters
        self.seed = seed
        self.profile = profile
    }

    /// Records a metric the scenario declares (``Metric``), kept in the trial's record.
    ///
    /// List the handle in ``Scenario/metrics``: the reports then show it with its
    /// unit and the gate judges it. Recording a metric again replaces its value;
    /// record early what a trial the watchdog may end should still say (how far
    /// it got).
    public func record<Value>(_ metric: Metric<Value>, _ value: Value) {
        customMetrics.withVisibleLock { $0[metric.name] = value.recordedValue }
    }

    /// Records a metric by its name, as 0.1.0 did: kept for packages written against
    /// 0.1.0, for one release. The value is kept under `name` as a ``Metric`` named so
    /// would keep it; the reports show it as declared by no scenario unless a
    /// declaration in ``Scenario/metrics`` has that name.
    @available(*, deprecated, message: "record a declared Metric: `static let documentBytes = Metric<Int>.bytes(\"document bytes\", better: .lowerIsBetter, noise: .deterministic, summary: \"…\")` (or Metric<Double>.seconds, .rate, .ratio, Metric<Int>.count), listed in `static let metrics: [any MetricDeclaration]`, then `context.record(Self.documentBytes, value)`")
    public func record(_ name: String, _ value: Double) {
        record(Metric<Double>(recordedAs: name), value)
    }

    /// Adds one worker's operations: how many it did and the latencies it sampled.
    /// Each worker keeps its own ``LatencyRecorder`` while it runs; they are merged
    /// here into the trial's latency percentiles and fairness.
    public func addWorker(_ worker: Int, operations count: Int, latencies: LatencyRecorder) {
        operations.withVisibleLock { measurements in
            measurements.perWorker.append((worker, count))
            if measurements.latencies == nil {
                measurements.latencies = latencies
            } else {
                measurements.latencies!.merge(latencies)
            }
        }
    }

    /// Records the trial's throughput: `count` operations over `seconds`.
    public func recordThroughput(operations count: Int, seconds: Double) {
        operations.withVisibleLock { $0.throughput = seconds > 0 ? Double(count) / seconds : nil }
    }

    /// What the workers measured, summed up for the trial's metrics.
    package var operationMetrics: (throughput: Double?, latency: LatencySummary?, fairness: Fairness?) {
        operations.withVisibleLock { measurements in
            (measurements.throughput,
             measurements.latencies.map(\.summary),
             measurements.perWorker.isEmpty ? nil : Fairness(operationsPerWorker: measurements.perWorker.sorted { $0.worker < $1.worker }.map(\.count)))
        }
    }

    /// Fails the trial as `invariantViolated` unless `condition` holds.
    ///
    /// - Throws: ``InvariantViolation`` with `message`; let it leave the workload.
    public func check(_ condition: Bool, _ message: @autoclosure () -> String) throws {
        if !condition { throw InvariantViolation(message()) }
    }

    /// Runs one unit of work on the calling thread: reports it started and
    /// finished, and marks the thread as holding scenario work while it runs
    /// (a stalled thread that holds work is what the watchdog looks at).
    public func unit<T>(_ body: () throws -> T) rethrows -> T {
        strain_work_enter()
        heartbeat.started()
        defer {
            heartbeat.finished()
            strain_work_leave()
        }
        return try body()
    }

    /// Marks the calling thread as holding scenario work while `body` runs,
    /// without counting a unit: for work a unit hands to another thread, such
    /// as a barrier block on a GCD worker, so a stall verdict sees it.
    public func holdingWork<T>(_ body: () throws -> T) rethrows -> T {
        strain_work_enter()
        defer { strain_work_leave() }
        return try body()
    }

    /// `unit` for async work: it reports start and finish to the heartbeat, but
    /// marks no thread, since a task may resume on another thread after every
    /// `await`. A stall in async work is judged by the heartbeat alone.
    ///
    /// In a counted trial (`measure: [instructions]`) `body` runs with
    /// a task executor that marks each of its jobs as work (`WorkMarkingTaskExecutor`), so each part of it between
    /// two `await`s is counted on whichever thread runs it.
    public func unitAsync(_ body: () async -> Void) async {
        heartbeat.started()
        if strain_instr_counting() != 0 {
            await withTaskExecutorPreference(WorkMarkingTaskExecutor.shared) { await body() }
        } else {
            await body()
        }
        heartbeat.finished()
    }

    /// Runs `body`, a call that may block (a `sync` onto a queue, a semaphore
    /// wait, a lock), recording that this thread holds `holding` and waits for
    /// `resource`. The watchdog names a wait cycle from these records, and the
    /// trial records the most threads blocked in such calls at once.
    @discardableResult
    public func blocking<T>(on resource: String, holding: String? = nil, _ body: () throws -> T) rethrows -> T {
        let token = waits.begin(resource: resource, holding: holding)
        defer { waits.end(token) }
        return try body()
    }

    /// The deepest recursion marked so far (with `RecursionDepth`).
    public var deepestDepth: Int { strain_deepest_marked_depth() }

    /// Adds a report from a thread that ran scenario work (the executors call this).
    package func addThreadReport(_ report: ThreadReport) {
        threadReports.withVisibleLock { $0.append(report) }
    }

    /// The reports of the threads that ran scenario work.
    package var reports: [ThreadReport] { threadReports.withVisibleLock { $0 } }
    /// The metrics recorded so far, by name.
    package var metrics: [String: Double] { customMetrics.withVisibleLock { $0 } }
}

/// Recursion depth marks for code that has no context at hand, such as an
/// `init(coder:)` deep inside an unarchiver: a fault record carries the depth.
///
/// Call `enter` on the way into each level of a recursion and `leave` on the
/// way out (or `mark` with a depth you count yourself): an overflow's record
/// then says how deep the work went, and the `depth` metric keeps the deepest.
public enum RecursionDepth {
    /// One level deeper on the calling thread.
    public static func enter() { _ = strain_depth_enter() }

    /// One level back up on the calling thread.
    public static func leave() { strain_depth_leave() }

    /// The calling thread is `depth` levels deep.
    public static func mark(_ depth: Int) { strain_mark_depth(depth) }

    /// Runs `body` one level deeper: `enter`, `body`, `leave`.
    public static func measure<T>(_ body: () throws -> T) rethrows -> T {
        _ = strain_depth_enter()
        defer { strain_depth_leave() }
        return try body()
    }
}

/// Progress as the scenario reports it: units of work queued, started and
/// finished. Lock-free counters in C, so a scenario can report every unit.
///
/// The watchdog calls a trial stalled when work is pending (queued, not
/// finished) and nothing was reported for the suite's `stall` threshold; a unit
/// that runs longer than that should `beat` while it runs.
///
/// Report `queued` before handing units to the strategy (a unit that was never
/// queued cannot be seen waiting), and let ``ScenarioContext/unit(_:)`` report
/// `started` and `finished` around each.
public struct Heartbeat: Sendable {
    /// `units` units of work were handed to the strategy and wait to start.
    public func queued(_ units: Int = 1) { strain_heartbeat_queued(units) }
    /// `units` units started (``ScenarioContext/unit(_:)`` reports this).
    public func started(_ units: Int = 1) { strain_heartbeat_started(units) }
    /// `units` units finished (``ScenarioContext/unit(_:)`` reports this).
    public func finished(_ units: Int = 1) { strain_heartbeat_finished(units) }
    /// Progress inside a unit of work: call it in a unit that runs longer than a stall.
    public func beat() { strain_heartbeat_beat() }

    /// The counters as the watchdog reads them.
    package var snapshot: strain_heartbeat { strain_heartbeat_read() }
}

/// The blocking calls in flight: which thread waits for which resource while
/// holding which. Read by the watchdog after a stall, when the writers are blocked.
public final class WaitRegistry: Sendable {
    /// One thread inside a blocking call.
    public struct Wait: Sendable, Hashable {
        /// The waiting thread's kernel id.
        public var tid: Int
        /// What it waits for.
        public var resource: String
        /// What it holds while it waits, if anything.
        public var holding: String?

        /// A thread `tid` waiting for `resource` while holding `holding`.
        public init(tid: Int, resource: String, holding: String?) {
            self.tid = tid
            self.resource = resource
            self.holding = holding
        }
    }

    private struct State {
        var next = 0
        var open: [Int: Wait] = [:]
        var peak = 0
    }

    private let state = Mutex(State())

    /// An empty registry.
    public init() {}

    func begin(resource: String, holding: String?) -> Int {
        let wait = Wait(tid: Int(strain_thread_id()), resource: resource, holding: holding)
        return state.withVisibleLock { state in
            state.next += 1
            state.open[state.next] = wait
            state.peak = max(state.peak, state.open.count)
            return state.next
        }
    }

    func end(_ token: Int) {
        _ = state.withVisibleLock { $0.open.removeValue(forKey: token) }
    }

    /// The waits in flight now.
    public var current: [Wait] { state.withVisibleLock { Array($0.open.values) } }
    /// The most threads that were inside blocking calls at once.
    public var peak: Int { state.withVisibleLock { $0.peak } }
}

struct OperationMeasurements: Sendable {
    var perWorker: [(worker: Int, count: Int)] = []
    var latencies: LatencyRecorder?
    var throughput: Double?
}
