import CStrainProbe
import Histogram
import Synchronization

/// What a scenario sees of the trial it runs in: its parameters, its seed, and
/// the places to record what it measured.
public final class ScenarioContext: Sendable {
    public let parameters: ParameterValues
    /// The seed the scenario derives any randomness from, so a trial can be rerun.
    public let seed: UInt64
    /// The platform the child emulates.
    public let profile: Profile
    /// Where the scenario reports progress; the watchdog reads it.
    public let heartbeat = Heartbeat()
    /// Who waits for what, for the watchdog to name wait cycles.
    public let waits = WaitRegistry()
    /// Accesses from the wrong queue or thread that `ConfinementChecker`s caught.
    public let confinement = ConfinementLog()
    private let threadReports = Mutex<[ThreadReport]>([])
    private let customMetrics = Mutex<[String: Double]>([:])
    private let operations = Mutex<OperationMeasurements>(OperationMeasurements())

    public init(parameters: ParameterValues, seed: UInt64, profile: Profile) {
        self.parameters = parameters
        self.seed = seed
        self.profile = profile
    }

    /// Records a metric the scenario defines (`nodes`, `bytes`), kept in the trial's record.
    public func record(_ name: String, _ value: Double) {
        customMetrics.withLock { $0[name] = value }
    }

    /// Adds one worker's operations: how many it did and the latencies it sampled.
    /// Each worker keeps its own histogram while it runs; they are merged here.
    public func addWorker(_ worker: Int, operations count: Int, latencies: Histogram<UInt64>) {
        operations.withLock { measurements in
            measurements.perWorker.append((worker, count))
            if measurements.latencies == nil {
                measurements.latencies = latencies
            } else {
                measurements.latencies!.add(latencies)
            }
        }
    }

    /// Operations per second over the whole run of the workers.
    public func recordThroughput(operations count: Int, seconds: Double) {
        operations.withLock { $0.throughput = seconds > 0 ? Double(count) / seconds : nil }
    }

    /// What the workers measured, summed up for the trial's metrics.
    public var operationMetrics: (throughput: Double?, latency: LatencySummary?, fairness: Fairness?) {
        operations.withLock { measurements in
            (measurements.throughput,
             measurements.latencies.map(LatencySummary.init),
             measurements.perWorker.isEmpty ? nil : Fairness(operationsPerWorker: measurements.perWorker.sorted { $0.worker < $1.worker }.map(\.count)))
        }
    }

    /// Fails the trial as `invariantViolated` unless `condition` holds.
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
    public func unitAsync(_ body: () async -> Void) async {
        heartbeat.started()
        await body()
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
    public func addThreadReport(_ report: ThreadReport) {
        threadReports.withLock { $0.append(report) }
    }

    public var reports: [ThreadReport] { threadReports.withLock { $0 } }
    public var metrics: [String: Double] { customMetrics.withLock { $0 } }
}

/// Recursion depth marks for code that has no context at hand, such as an
/// `init(coder:)` deep inside an unarchiver: a fault record carries the depth.
public enum RecursionDepth {
    @inline(__always)
    public static func enter() { _ = strain_depth_enter() }

    @inline(__always)
    public static func leave() { strain_depth_leave() }

    @inline(__always)
    public static func mark(_ depth: Int) { strain_mark_depth(depth) }
}

/// Progress as the scenario reports it: units of work queued, started and
/// finished. Lock-free counters in C, so a scenario can report every unit.
///
/// The watchdog calls a trial stalled when work is pending (queued, not
/// finished) and nothing was reported for the suite's `stall` threshold; a unit
/// that runs longer than that should `beat` while it runs.
public struct Heartbeat: Sendable {
    public func queued(_ units: Int = 1) { strain_heartbeat_queued(units) }
    public func started(_ units: Int = 1) { strain_heartbeat_started(units) }
    public func finished(_ units: Int = 1) { strain_heartbeat_finished(units) }
    /// Progress inside a unit of work.
    public func beat() { strain_heartbeat_beat() }

    public var snapshot: strain_heartbeat { strain_heartbeat_read() }
}

/// The blocking calls in flight: which thread waits for which resource while
/// holding which. Read by the watchdog after a stall, when the writers are blocked.
public final class WaitRegistry: Sendable {
    /// One thread inside a blocking call.
    public struct Wait: Sendable, Hashable {
        public var tid: Int
        public var resource: String
        public var holding: String?

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

    public init() {}

    func begin(resource: String, holding: String?) -> Int {
        let wait = Wait(tid: Int(strain_thread_id()), resource: resource, holding: holding)
        return state.withLock { state in
            state.next += 1
            state.open[state.next] = wait
            state.peak = max(state.peak, state.open.count)
            return state.next
        }
    }

    func end(_ token: Int) {
        _ = state.withLock { $0.open.removeValue(forKey: token) }
    }

    /// The waits in flight now.
    public var current: [Wait] { state.withLock { Array($0.open.values) } }
    /// The most threads that were inside blocking calls at once.
    public var peak: Int { state.withLock { $0.peak } }
}

struct OperationMeasurements: Sendable {
    var perWorker: [(worker: Int, count: Int)] = []
    var latencies: Histogram<UInt64>?
    var throughput: Double?
}
