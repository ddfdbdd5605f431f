import CStrainProbe
import Histogram
import StrainKit
import Foundation
import Synchronization

/// The operations left to do, taken in chunks: a fast worker takes more, so
/// the split between workers measures fairness.
final class OperationBudget: Sendable {
    private let remaining: Atomic<Int>
    /// Operations taken at a time: small enough that every worker gets about
    /// 32 chunks, so the split measures fairness; at most 256.
    let chunk: Int

    init(_ operations: Int, workers: Int = 1) {
        remaining = Atomic(operations)
        chunk = max(1, min(256, operations / max(1, workers * 32)))
    }

    /// Up to `chunk` operations, or 0 when none are left.
    @inline(__always)
    func take() -> Int {
        let (before, _) = remaining.wrappingSubtract(chunk, ordering: .relaxed)
        return max(0, min(chunk, before))
    }
}

/// Holds every worker at the start until all have arrived, so W workers really
/// contend: a worker that started late would find the budget spent. The wait
/// ends for everyone half a second after the first arrival, whoever is
/// missing: a pool narrower than W (GCD's, Swift concurrency's) cannot hold
/// them all, and the record says how many were there ("workers at the start").
final class StartGate: Sendable {
    private let arrived = Countdown()
    private let firstArrival = Mutex<Date?>(nil)
    let workers: Int
    let deadlineSeconds: Double

    init(workers: Int, deadlineSeconds: Double = 0.5) {
        self.workers = workers
        self.deadlineSeconds = deadlineSeconds
    }

    /// Waits for the others, beating `heartbeat` (waiting at the gate is not a
    /// stall); returns how many had arrived when this one went.
    func pass(heartbeat: Heartbeat) -> Int {
        let first = firstArrival.withLock { first in
            if first == nil { first = Date() }
            return first!
        }
        arrived.add()
        while true {
            let left = deadlineSeconds - Date().timeIntervalSince(first)
            if left <= 0 || arrived.wait(for: workers, seconds: min(left, 0.05)) { break }
            heartbeat.beat()
        }
        return arrived.value
    }

    /// Counts an async worker in without waiting: tasks must not block the
    /// cooperative pool's few threads, and they interleave at every `await` anyway.
    func arrive() -> Int {
        arrived.add()
        return arrived.value
    }
}

/// How a worker picks its next operation.
struct OperationMix: Sendable {
    /// Percent of operations that read.
    var readPercent: Int
    /// Every this many writes, one is `removeAll` (0: never).
    var clearEvery: Int
    /// Only the guard's cost: every operation is `.nothing`.
    var emptyCriticalSection: Bool
}

/// What one worker did.
struct WorkerResult: Sendable {
    var worker = 0
    /// Workers that had arrived at the start gate when this one began.
    var startedWith = 0
    var operations = 0
    var appended = 0
    var started: UInt64 = 0
    var ended: UInt64 = 0
}

/// A worker's loop, the same for every guard. Latency is sampled: one operation
/// in `sampleEvery` is timed, with a clock read that does not allocate, into
/// the worker's own histogram.
struct Worker {
    let index: Int
    let mix: OperationMix
    let sampleEvery: Int
    let seed: UInt64
    /// Appended ids are `index << 40 | n`, so the check can tell whose each one is.
    static let idShift = 40

    static func histogram() -> Histogram<UInt64> {
        Histogram<UInt64>(lowestDiscernibleValue: 1, highestTrackableValue: highestTrackable, numberOfSignificantValueDigits: .two)
    }

    static let highestTrackable: UInt64 = 60_000_000_000

    /// Runs operations until the budget is spent; `perform` is the guard's.
    @inline(__always)
    func run(budget: OperationBudget, heartbeat: Heartbeat, latencies: inout Histogram<UInt64>,
             perform: (CollectionOperation) -> Int) -> WorkerResult {
        var result = WorkerResult(worker: index)
        var picker = OperationPicker(worker: index, seed: seed, mix: mix)
        var sink = 0
        // Not the first operation: a cold start would weigh on every worker's histogram.
        var untilSample = sampleEvery
        result.started = strain_monotonic_ns()
        while true {
            let chunk = budget.take()
            if chunk == 0 { break }
            for _ in 0..<chunk {
                let operation = picker.next()
                untilSample -= 1
                if untilSample == 0 {
                    untilSample = sampleEvery
                    let start = strain_monotonic_ns()
                    sink &+= perform(operation)
                    latencies.record(min(strain_monotonic_ns() &- start, Self.highestTrackable))
                } else {
                    sink &+= perform(operation)
                }
                result.operations += 1
            }
            heartbeat.beat()
        }
        result.ended = strain_monotonic_ns()
        result.appended = picker.appended
        // Reads must not be optimized away.
        if sink == 42 { heartbeat.beat() }
        return result
    }
}

/// Picks a worker's operations: reads by the mix's percentage (by index 89%,
/// count 10%, iterate 1%), the rest appends with ids only this worker makes,
/// every `clearEvery`-th write a `removeAll`. xorshift64: cheap, and the same
/// sequence for the same seed.
struct OperationPicker {
    let worker: Int
    let mix: OperationMix
    private var random: UInt64
    private var writes = 0
    private var lastAppended: Int
    private(set) var appended = 0

    init(worker: Int, seed: UInt64, mix: OperationMix) {
        self.worker = worker
        self.mix = mix
        random = seed | 1
        lastAppended = worker << Worker.idShift
    }

    @inline(__always)
    mutating func next() -> CollectionOperation {
        random ^= random << 13
        random ^= random >> 7
        random ^= random << 17
        let reads = Int(random % 100) < mix.readPercent
        if mix.emptyCriticalSection { return reads ? .peek : .nothing }
        if reads {
            let pick = (random >> 8) % 100
            return pick == 0 ? .iterate : pick <= 10 ? .count : .read(lastAppended)
        }
        writes += 1
        if mix.clearEvery > 0 && writes % mix.clearEvery == 0 { return .removeAll }
        lastAppended = worker << Worker.idShift | appended
        appended += 1
        return .append(lastAppended)
    }
}

/// Collects the workers' results and merges them into the trial's metrics.
final class WorkerResults: Sendable {
    private let results = Mutex<[WorkerResult]>([])

    func add(_ result: WorkerResult, latencies: Histogram<UInt64>, context: ScenarioContext) {
        results.withLock { $0.append(result) }
        context.addWorker(result.worker, operations: result.operations, latencies: latencies)
    }

    var all: [WorkerResult] { results.withLock { $0 } }

    /// Operations per second from the first worker's start to the last one's
    /// end, or to `settled` when later: work a guard queued (async barriers)
    /// counts until it has run. Also records how many workers really ran together.
    func recordThroughput(context: ScenarioContext, settled: UInt64 = 0) {
        let all = self.all
        guard let start = all.map(\.started).min(), let ended = all.map(\.ended).max() else { return }
        let end = max(ended, settled)
        guard end > start else { return }
        context.recordThroughput(operations: all.reduce(0) { $0 + $1.operations }, seconds: Double(end - start) / 1e9)
        // The workers that did the work, and how many were there when the first of them began.
        let working = all.filter { $0.operations > 0 }
        context.record("workers at the start", Double(working.map(\.startedWith).min() ?? 0))
        context.record("workers that did operations", Double(all.filter { $0.operations > 0 }.count))
    }
}
