import CStrainProbe
import Histogram
import StrainKit
import Synchronization

/// The operations left to do, taken in chunks: a fast worker takes more, so
/// the split between workers measures fairness.
final class OperationBudget: Sendable {
    private let remaining: Atomic<Int>
    static let chunk = 256

    init(_ operations: Int) { remaining = Atomic(operations) }

    /// Up to `chunk` operations, or 0 when none are left.
    @inline(__always)
    func take() -> Int {
        let (before, _) = remaining.wrappingSubtract(Self.chunk, ordering: .relaxed)
        return max(0, min(Self.chunk, before))
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
        var random = seed | 1
        var writes = 0
        var lastAppended = index << Self.idShift
        var sink = 0
        var untilSample = 1
        result.started = strain_monotonic_ns()
        while true {
            let chunk = budget.take()
            if chunk == 0 { break }
            for _ in 0..<chunk {
                // xorshift64: cheap, and the same sequence for the same seed.
                random ^= random << 13
                random ^= random >> 7
                random ^= random << 17
                let operation: CollectionOperation
                if mix.emptyCriticalSection {
                    operation = .nothing
                } else if Int(random % 100) < mix.readPercent {
                    let pick = (random >> 8) % 100
                    operation = pick == 0 ? .iterate : pick <= 10 ? .count : .read(lastAppended)
                } else {
                    writes += 1
                    if mix.clearEvery > 0 && writes % mix.clearEvery == 0 {
                        operation = .removeAll
                    } else {
                        lastAppended = index << Self.idShift | result.appended
                        result.appended += 1
                        operation = .append(lastAppended)
                    }
                }
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
        // Reads must not be optimized away.
        if sink == 42 { heartbeat.beat() }
        return result
    }
}

/// Collects the workers' results and merges them into the trial's metrics.
final class WorkerResults: Sendable {
    private let results = Mutex<[WorkerResult]>([])

    func add(_ result: WorkerResult, latencies: Histogram<UInt64>, context: ScenarioContext) {
        results.withLock { $0.append(result) }
        context.addWorker(operations: result.operations, latencies: latencies)
    }

    var all: [WorkerResult] { results.withLock { $0 } }

    /// Operations per second from the first worker's start to the last one's end.
    func recordThroughput(context: ScenarioContext) {
        let all = self.all
        guard let start = all.map(\.started).min(), let end = all.map(\.ended).max(), end > start else { return }
        context.recordThroughput(operations: all.reduce(0) { $0 + $1.operations }, seconds: Double(end - start) / 1e9)
    }
}
