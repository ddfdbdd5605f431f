import Foundation
import StrainKit
import Synchronization

/// The operations left to do, taken in chunks by the workers: a fast worker
/// takes more, so the split between workers measures fairness.
public final class OperationBudget: Sendable {
    @usableFromInline let remaining: Atomic<Int>
    /// Operations taken at a time: small enough that every worker gets about
    /// 32 chunks, so the split measures fairness; at most 256.
    public let chunk: Int

    /// `operations` to share between `workers`.
    public init(_ operations: Int, workers: Int = 1) {
        remaining = Atomic(operations)
        chunk = max(1, min(256, operations / max(1, workers * 32)))
    }

    /// Up to `chunk` operations, or 0 when none are left.
    @inlinable
    public func take() -> Int {
        let (before, _) = remaining.wrappingSubtract(chunk, ordering: .relaxed)
        return max(0, min(chunk, before))
    }
}

/// Holds every worker at the start until all have arrived, so W workers really
/// contend: a worker that started late would find the budget spent. The wait
/// ends for everyone half a second after the first arrival, whoever is
/// missing: a pool narrower than W (GCD's, Swift concurrency's) cannot hold
/// them all, and ``WorkerResults`` records how many were there.
public final class StartGate: Sendable {
    private let arrived = Countdown()
    private let firstArrival = Mutex<UInt64?>(nil)
    /// The workers expected at the gate.
    public let workers: Int
    /// How long after the first arrival the gate opens anyway.
    public let deadlineSeconds: Double

    /// A gate for `workers` workers that opens at the latest `deadlineSeconds` after the first arrives.
    public init(workers: Int, deadlineSeconds: Double = 0.5) {
        self.workers = workers
        self.deadlineSeconds = deadlineSeconds
    }

    /// Waits for the others, beating `heartbeat` (waiting at the gate is not a
    /// stall); returns how many had arrived when this one went.
    public func pass(heartbeat: Heartbeat) -> Int {
        let first = firstArrival.withVisibleLock { first in
            if first == nil { first = MonotonicClock.nanoseconds }
            return first!
        }
        arrived.add()
        while true {
            let left = deadlineSeconds - MonotonicClock.seconds(since: first)
            if left <= 0 || arrived.wait(for: workers, seconds: min(left, 0.05)) { break }
            heartbeat.beat()
        }
        return arrived.value
    }

    /// Counts an async worker in without waiting: tasks must not block the
    /// cooperative pool's few threads, and they interleave at every `await` anyway.
    public func arrive() -> Int {
        arrived.add()
        return arrived.value
    }
}

/// What one worker did.
public struct WorkerResult: Sendable {
    /// The worker's index, from 0.
    public var worker: Int
    /// Workers that had arrived at the start gate when this one began.
    public var startedWith = 0
    /// Operations it did.
    public var operations = 0
    /// `MonotonicClock` (StrainKit) readings at its first and after its last operation.
    public var started: UInt64 = 0
    /// See `started`.
    public var ended: UInt64 = 0

    /// Nothing done yet by worker `worker`.
    public init(worker: Int) { self.worker = worker }
}

/// A worker's loop, the same whatever the operation: it takes chunks of the
/// budget until none are left, beats the heartbeat after each chunk (and, under
/// ThreadSanitizer, starts a new epoch: `RaceDetector.newEpoch()`, StrainKit), and times
/// one operation in `sampleEvery` (with a clock read that does not allocate)
/// into the worker's own `LatencyRecorder` (StrainKit).
///
/// ```swift
/// let loop = WorkerLoop(index: index)
/// var latencies = LatencyRecorder()
/// let result = loop.run(budget: budget, heartbeat: context.heartbeat, latencies: &latencies) {
///     cache.lookup(keys.next())
/// }
/// results.add(result, latencies: latencies, context: context)
/// ```
public struct WorkerLoop: Sendable {
    /// The worker's index, from 0.
    public let index: Int
    /// One operation in this many is timed.
    public let sampleEvery: Int

    /// The loop of worker `index`, timing one operation in `sampleEvery`.
    public init(index: Int, sampleEvery: Int = 64) {
        self.index = index
        self.sampleEvery = max(1, sampleEvery)
    }

    /// Runs `operation` until the budget is spent. The operation returns a
    /// number derived from what it read, so the reads are not optimised away.
    @inlinable
    public func run(budget: OperationBudget, heartbeat: Heartbeat, latencies: inout LatencyRecorder,
                    operation: () -> Int) -> WorkerResult {
        var result = WorkerResult(worker: index)
        var sink = 0
        // Not the first operation: a cold start would weigh on every worker's histogram.
        var untilSample = sampleEvery
        result.started = MonotonicClock.nanoseconds
        while true {
            let chunk = budget.take()
            if chunk == 0 { break }
            for _ in 0..<chunk {
                untilSample -= 1
                if untilSample == 0 {
                    untilSample = sampleEvery
                    let start = MonotonicClock.nanoseconds
                    sink &+= operation()
                    latencies.record(nanoseconds: MonotonicClock.nanoseconds &- start)
                } else {
                    sink &+= operation()
                }
                result.operations += 1
            }
            heartbeat.beat()
            RaceDetector.newEpoch()
        }
        result.ended = MonotonicClock.nanoseconds
        if sink == 42 { heartbeat.beat() }
        return result
    }

    /// The same loop for async operations (an actor's methods): every
    /// operation is awaited.
    public func run(budget: OperationBudget, heartbeat: Heartbeat, latencies: inout LatencyRecorder,
                    operation: () async -> Int) async -> WorkerResult {
        var result = WorkerResult(worker: index)
        var sink = 0
        var untilSample = sampleEvery
        result.started = MonotonicClock.nanoseconds
        while true {
            let chunk = budget.take()
            if chunk == 0 { break }
            for _ in 0..<chunk {
                untilSample -= 1
                if untilSample == 0 {
                    untilSample = sampleEvery
                    let start = MonotonicClock.nanoseconds
                    sink &+= await operation()
                    latencies.record(nanoseconds: MonotonicClock.nanoseconds &- start)
                } else {
                    sink &+= await operation()
                }
                result.operations += 1
            }
            heartbeat.beat()
            RaceDetector.newEpoch()
        }
        result.ended = MonotonicClock.nanoseconds
        if sink == 42 { heartbeat.beat() }
        return result
    }
}

/// Collects the workers' results and merges them into the trial's metrics.
public final class WorkerResults: Sendable {
    private let results = Mutex<[WorkerResult]>([])

    /// Workers waiting at the start gate when the work began, recorded by
    /// ``recordThroughput(context:settled:)``.
    public static let workersAtTheStart = Metric<Int>.count("workers at the start", better: nil, noise: .timing, summary: "workers waiting at the start gate when the work began")
    /// Workers that did at least one operation, recorded by ``recordThroughput(context:settled:)``.
    public static let workersThatDidOperations = Metric<Int>.count("workers that did operations", better: nil, noise: .timing, summary: "workers that did at least one operation")
    /// The metrics ``recordThroughput(context:settled:)`` records: add them to
    /// the scenario's `metrics`.
    public static let metrics: [any MetricDeclaration] = [workersAtTheStart, workersThatDidOperations]

    /// No results yet.
    public init() {}

    /// Keeps `result` and hands the worker's count and latencies to `context`.
    public func add(_ result: WorkerResult, latencies: LatencyRecorder, context: ScenarioContext) {
        results.withVisibleLock { $0.append(result) }
        context.addWorker(result.worker, operations: result.operations, latencies: latencies)
    }

    /// Every result so far.
    public var all: [WorkerResult] { results.withVisibleLock { $0 } }

    /// Records operations per second from the first worker's start to the last
    /// one's end, or to `settled` (a `MonotonicClock` (StrainKit) reading) when later: work
    /// a guard queued (async barriers) counts until it has run. Also records how
    /// many workers really ran together. Returns the seconds measured, if any.
    @discardableResult
    public func recordThroughput(context: ScenarioContext, settled: UInt64 = 0) -> Double? {
        let all = self.all
        guard let start = all.map(\.started).min(), let ended = all.map(\.ended).max() else { return nil }
        let end = max(ended, settled)
        guard end > start else { return nil }
        let seconds = Double(end - start) / 1e9
        context.recordThroughput(operations: all.reduce(0) { $0 + $1.operations }, seconds: seconds)
        // The workers that did the work, and how many were there when the first of them began.
        let working = all.filter { $0.operations > 0 }
        context.record(Self.workersAtTheStart, working.map(\.startedWith).min() ?? 0)
        context.record(Self.workersThatDidOperations, working.count)
        return seconds
    }
}
