import CStrainProbe
import CStrainTools
import Dispatch
import Foundation
import Histogram
import StrainKit
import Synchronization

/// A shared collection hammered by W workers through one of eleven guards:
/// throughput, sampled latency, fairness, and whether the collection survived.
///
/// Every guard runs the same worker loop on the same collection; only the
/// locking differs. `unguarded` is the negative control: concurrent appends
/// corrupt the storage (glibc aborts) or lose elements.
public struct ContendedCollectionScenario: Scenario {
    public static let name = "contended-collection"
    public static let summary = "a shared array, dictionary or set hammered by W workers through one of 11 guards: throughput, latency percentiles, fairness, lost or duplicated elements"
    public static let metrics: [MetricDescriptor] = [
        MetricDescriptor(name: "ns per op", unit: .nanoseconds, polarity: .lowerIsBetter, noise: .timing, summary: "the workers' nanoseconds per operation, uncontended reference runs"),
        MetricDescriptor(name: "ratio to C reference", unit: .ratio, polarity: .lowerIsBetter, noise: .timing, summary: "the worker loop's cost against a tight C loop"),
        MetricDescriptor(name: "C reference ns per op", unit: .nanoseconds, polarity: nil, noise: .timing, summary: "a tight C pthread_mutex loop in the same child"),
        MetricDescriptor(name: "workers at the start", unit: .count, polarity: nil, noise: .timing, summary: "workers waiting at the start gate when the work began"),
        MetricDescriptor(name: "operations", unit: .count, polarity: nil, noise: .deterministic, summary: "operations done"),
    ]
    public static let parameters: [ParameterSpec] = [
        ParameterSpec("guard", .choice(GuardKind.names), default: "NSLock",
                      summary: "how the collection is guarded; actor runs its workers as tasks whatever the strategy"),
        ParameterSpec("collection", .choice(["array", "dictionary", "set", "none"]), default: "array",
                      summary: "the shared collection; none leaves the critical section empty (the guard's own cost)"),
        ParameterSpec("element", .choice(["int", "token"]), default: "int", summary: "an Int, or a token class (retains and releases, like AnyCancellable)"),
        ParameterSpec("workers", .integer(0...4096), default: "0", summary: "workers hammering at once; 0 means one per core"),
        ParameterSpec("operations", .integer(1...1_000_000_000), default: "200000", summary: "operations in all, shared out in chunks of 256"),
        ParameterSpec("reads", .integer(0...100), default: "50", summary: "percent of operations that read (by index 89%, count 10%, iterate 1%); the rest append"),
        ParameterSpec("clear-every", .integer(0...1_000_000), default: "4096",
                      summary: "one write in this many is removeAll, which keeps the collection (and each iterate) bounded; 0 never clears"),
        ParameterSpec("fan-out", .choice(["submit", "concurrent-perform"]), default: "submit",
                      summary: "submit: each worker a work item on the strategy; concurrent-perform: DispatchQueue.concurrentPerform over the workers"),
        ParameterSpec("sample-every", .integer(1...1_000_000), default: "64",
                      summary: "time one operation in this many for the latency histogram (two clock reads each: every 16th costs about 1.5 ns per operation)"),
    ]

    let guardKind: GuardKind
    let collection: String
    let element: String
    let workers: Int
    let operations: Int
    let mix: OperationMix
    let fanOut: String
    let sampleEvery: Int

    public init(parameters: ParameterValues) {
        guardKind = GuardKind(rawValue: parameters.string("guard")) ?? .nsLock
        collection = parameters.string("collection")
        element = parameters.string("element")
        let requested = parameters.integer("workers")
        workers = requested == 0 ? ProcessInfo.processInfo.activeProcessorCount : requested
        operations = parameters.integer("operations")
        mix = OperationMix(readPercent: parameters.integer("reads"), clearEvery: parameters.integer("clear-every"),
                           emptyCriticalSection: parameters.string("collection") == "none")
        fanOut = parameters.string("fan-out")
        sampleEvery = parameters.integer("sample-every")
    }

    public func prepare(context: ScenarioContext) throws -> Workload {
        let scenario = self
        return { executor in
            switch (scenario.collection, scenario.element) {
            case ("array", "token"): try scenario.run(ArrayCollection<Token>.self, on: executor, context: context)
            case ("dictionary", "int"): try scenario.run(DictionaryCollection<Int>.self, on: executor, context: context)
            case ("dictionary", "token"): try scenario.run(DictionaryCollection<Token>.self, on: executor, context: context)
            case ("set", "int"): try scenario.run(SetCollection<Int>.self, on: executor, context: context)
            case ("set", "token"): try scenario.run(SetCollection<Token>.self, on: executor, context: context)
            case ("none", _): try scenario.run(NoCollection.self, on: executor, context: context)
            default: try scenario.run(ArrayCollection<Int>.self, on: executor, context: context)
            }
        }
    }

    func run<Value: ContendedCollection>(_ type: Value.Type, on executor: any StrategyExecutor, context: ScenarioContext) throws {
        if guardKind == .pthreadMutex && collection == "none" && workers == 1 {
            // The reference: the same pairs in a tight C loop, on the same kind of thread, in the same child.
            let iterations = operations
            try executor.perform { context.record("C reference ns per op", strain_reference_mutex_ns(iterations)) }
        }
        let budget = OperationBudget(operations, workers: workers)
        let gate = StartGate(workers: workers)
        let results = WorkerResults()
        var settledAt: UInt64 = 0
        let finished = Countdown()
        let settled: Value
        context.heartbeat.queued(workers)
        if guardKind == .actor {
            // Actor workers are tasks whatever the strategy: the only way to call it without blocking a thread.
            let state = ActorGuard<Value>()
            for index in 0..<workers {
                let worker = makeWorker(index, context: context)
                Task.detached {
                    var latencies = Worker.histogram()
                    var result = WorkerResult(worker: index)
                    await context.unitAsync {
                        let startedWith = gate.arrive()
                        result = await worker.runAsync(budget: budget, heartbeat: context.heartbeat, latencies: &latencies, state: state)
                        result.startedWith = startedWith
                    }
                    results.add(result, latencies: latencies, context: context)
                    finished.add()
                }
            }
            finished.wait(for: workers, seconds: nil)
            settled = ActorBridge.wait { await state.settled() }
            settledAt = strain_monotonic_ns()
        } else {
            let visitor = CollectionHammer<Value>(scenario: self, executor: executor, context: context, budget: budget, gate: gate, results: results)
            _ = try guardKind.open(visitor)
            settled = visitor.settled.withLock { $0 }!
            settledAt = visitor.settledAt.withLock { $0 }
        }
        results.recordThroughput(context: context, settled: settledAt)
        try check(settled, results: results.all, context: context)
    }

    func makeWorker(_ index: Int, context: ScenarioContext) -> Worker {
        Worker(index: index, mix: mix, sampleEvery: sampleEvery, seed: context.seed &+ UInt64(index) &* 0x9E37_79B9_7F4A_7C15)
    }

    /// Lost, duplicated or foreign elements, and counts that do not add up.
    func check<Value: ContendedCollection>(_ value: Value, results: [WorkerResult], context: ScenarioContext) throws {
        let done = results.reduce(0) { $0 + $1.operations }
        context.record("operations", Double(done))
        if let reference = context.metrics["C reference ns per op"], let seconds = context.operationMetrics.throughput.map({ 1 / $0 }) {
            context.record("ns per op", seconds * 1e9)
            context.record("ratio to C reference", seconds * 1e9 / reference)
        }
        try context.check(done == operations, "the workers did \(done) operations of \(operations)")
        guard collection != "none" else { return }
        let appendedBy = Dictionary(uniqueKeysWithValues: results.map { ($0.worker, $0.appended) })
        let appended = results.reduce(0) { $0 + $1.appended }
        let ids = value.ids
        let unique = Set(ids)
        let mask = (1 << Worker.idShift) - 1
        let foreign = unique.filter { id in
            let worker = id >> Worker.idShift
            return (id & mask) >= (appendedBy[worker] ?? 0)
        }
        context.record("appended", Double(appended))
        context.record("elements at the end", Double(ids.count))
        try context.check(foreign.isEmpty, "\(foreign.count) elements were never appended (corrupted storage)")
        try context.check(unique.count == ids.count, "\(ids.count - unique.count) elements are duplicated")
        if Value.keepsOrder {
            var last: [Int: Int] = [:]
            var outOfOrder = 0
            for id in ids {
                let worker = id >> Worker.idShift
                if let previous = last[worker], previous >= id { outOfOrder += 1 }
                last[worker] = id
            }
            try context.check(outOfOrder == 0, "\(outOfOrder) elements appear before an element their worker appended earlier (out of order)")
        }
        try context.check(ids.count + value.removed == appended,
                          "\(appended) appended, \(value.removed) removed, but \(ids.count) remain: \(appended - value.removed - ids.count) lost")
    }
}

/// Runs the workers on one concrete guard and keeps what they left.
final class CollectionHammer<Value: ContendedCollection>: GuardVisitor {
    let scenario: ContendedCollectionScenario
    let executor: any StrategyExecutor
    let context: ScenarioContext
    let budget: OperationBudget
    let gate: StartGate
    let results: WorkerResults
    let settled = Mutex<Value?>(nil)
    let settledAt = Mutex<UInt64>(0)

    init(scenario: ContendedCollectionScenario, executor: any StrategyExecutor, context: ScenarioContext, budget: OperationBudget,
         gate: StartGate, results: WorkerResults) {
        self.scenario = scenario
        self.executor = executor
        self.context = context
        self.budget = budget
        self.gate = gate
        self.results = results
    }

    func visit<Guard: StateGuard>(_ state: Guard) throws where Guard.Value == Value {
        let finished = Countdown()
        let scenario = scenario
        let context = context
        let budget = budget
        let gate = gate
        let results = results
        let body: @Sendable (Int) -> Void = { index in
            let worker = scenario.makeWorker(index, context: context)
            var latencies = Worker.histogram()
            let result = context.unit {
                let startedWith = gate.pass(heartbeat: context.heartbeat)
                var result = worker.run(budget: budget, heartbeat: context.heartbeat, latencies: &latencies) { state.perform($0) }
                result.startedWith = startedWith
                return result
            }
            results.add(result, latencies: latencies, context: context)
            finished.add()
        }
        if scenario.fanOut == "concurrent-perform" {
            DispatchQueue.concurrentPerform(iterations: scenario.workers, execute: body)
        } else {
            for index in 0..<scenario.workers { executor.submit { body(index) } }
        }
        finished.wait(for: scenario.workers, seconds: nil)
        // Work a guard queued (async barriers) is done once settled returns.
        let value = state.settled()
        settledAt.withLock { $0 = strain_monotonic_ns() }
        settled.withLock { $0 = value }
    }
}

extension Worker {
    /// The same loop for the actor guard: every operation is a hop onto the actor.
    func runAsync<Value: ContendedCollection>(budget: OperationBudget, heartbeat: Heartbeat, latencies: inout Histogram<UInt64>,
                                              state: ActorGuard<Value>) async -> WorkerResult {
        var result = WorkerResult(worker: index)
        var picker = OperationPicker(worker: index, seed: seed, mix: mix)
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
                    _ = await state.perform(operation)
                    latencies.record(min(strain_monotonic_ns() &- start, Self.highestTrackable))
                } else {
                    _ = await state.perform(operation)
                }
                result.operations += 1
            }
            heartbeat.beat()
        }
        result.appended = picker.appended
        result.ended = strain_monotonic_ns()
        return result
    }
}

/// Waits on the calling thread for async work: how synchronous code reaches an actor.
enum ActorBridge {
    static func wait<T: Sendable>(_ body: @escaping @Sendable () async -> T) -> T {
        let handoff = ResultHandoff<T>()
        Task.detached { handoff.deliver(.success(await body())) }
        return try! handoff.wait()
    }
}
