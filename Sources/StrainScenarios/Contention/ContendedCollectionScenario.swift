import Dispatch
import Foundation
import StrainHelpers
import StrainKit
import Synchronization

/// A shared collection hammered by W workers through one of eleven guards:
/// throughput, sampled latency, fairness, and whether the collection survived.
///
/// Every guard runs the same worker loop on the same collection; only the
/// locking differs. `unguarded` is the negative control: concurrent appends
/// corrupt the storage (glibc aborts) or lose elements.
struct ContendedCollectionScenario: Scenario {
    static let name = "contended-collection"
    /// Its workers wait, sleep or race a clock: a counted run records it as not countable.
    static let workDependsOnTiming = true
    static let summary = "a shared array, dictionary or set hammered by W workers through one of 11 guards: throughput, latency percentiles, fairness, lost or duplicated elements"
    static let nsPerOp = Metric<Double>.nanoseconds("ns per op", better: .lowerIsBetter, noise: .timing, summary: "the workers' nanoseconds per operation, uncontended reference runs")
    static let ratioToCReference = Metric<Double>.ratio("ratio to C reference", better: .lowerIsBetter, noise: .timing, summary: "the worker loop's cost against a tight C loop")
    static let cReferenceNsPerOp = Metric<Double>.nanoseconds("C reference ns per op", better: nil, noise: .timing, summary: "a tight C pthread_mutex loop in the same child")
    static let operationsDone = Metric<Int>.count("operations", better: nil, noise: .deterministic, summary: "operations done")
    static let appended = Metric<Int>.count("appended", better: nil, noise: .timing, summary: "elements the workers appended")
    static let elementsAtTheEnd = Metric<Int>.count("elements at the end", better: nil, noise: .timing, summary: "elements in the collection once every worker was done")
    static let metrics: [any MetricDeclaration] = [nsPerOp, ratioToCReference, cReferenceNsPerOp, operationsDone, appended, elementsAtTheEnd] + WorkerResults.metrics

    /// The shared collection.
    enum Collection: String, CaseIterable, Sendable { case array, dictionary, set, none }
    /// What the collection holds.
    enum Element: String, CaseIterable, Sendable { case int, token }
    /// How the workers are started.
    enum FanOut: String, CaseIterable, Sendable { case submit, concurrentPerform = "concurrent-perform" }

    static let guardKind = Parameter<GuardKind>("guard", default: .nsLock,
                                                help: "how the collection is guarded; actor runs its workers as tasks whatever the strategy")
    static let collection = Parameter<Collection>("collection", default: .array,
                                                  help: "the shared collection; none leaves the critical section empty (the guard's own cost)")
    static let element = Parameter<Element>("element", default: .int, help: "an Int, or a token class (retains and releases, like AnyCancellable)")
    static let workers = Parameter<Int>("workers", in: 0...4096, default: 0, help: "workers hammering at once; 0 means one per core")
    static let operations = Parameter<Int>("operations", in: 1...1_000_000_000, default: 200_000, help: "operations in all, shared out in chunks of 256")
    static let reads = Parameter<Int>("reads", in: 0...100, default: 50,
                                      help: "percent of operations that read (by index 89%, count 10%, iterate 1%); the rest append")
    static let clearEvery = Parameter<Int>("clear-every", in: 0...1_000_000, default: 4096,
                                           help: "one write in this many is removeAll, which keeps the collection (and each iterate) bounded; 0 never clears")
    static let fanOut = Parameter<FanOut>("fan-out", default: .submit,
                                          help: "submit: each worker a work item on the strategy; concurrent-perform: DispatchQueue.concurrentPerform over the workers")
    static let sampleEvery = Parameter<Int>("sample-every", in: 1...1_000_000, default: 64,
                                            help: "time one operation in this many for the latency histogram (two clock reads each: every 16th costs about 1.5 ns per operation)")
    static let parameters: [any ParameterDeclaration] = [guardKind, collection, element, workers, operations, reads, clearEvery, fanOut, sampleEvery]
    static let rankings = [RankingRequest(by: "throughput", across: guardKind, ignoring: [operations, sampleEvery])]
    static let typicalOutcomes = [
        TypicalOutcome(.completed, because: "every guard keeps every element; the metrics rank their throughput and latency"),
        TypicalOutcome(.crashed, because: "unguarded: concurrent appends corrupt the storage and glibc aborts"),
        TypicalOutcome(.invariantViolated, because: "unguarded: elements lost, duplicated or out of order"),
    ]
    static let starterRuns = [StarterRun(strategies: ["gcd-global", "thread(512KiB)", "thread(8MiB)"])]

    let guardKind: GuardKind
    let collection: Collection
    let element: Element
    let workers: Int
    let operations: Int
    let mix: OperationMix
    let fanOut: FanOut
    let sampleEvery: Int

    /// Reads the guard, the collection, the load and the sampling.
    init(parameters: ParameterValues) {
        guardKind = parameters[Self.guardKind]
        collection = parameters[Self.collection]
        element = parameters[Self.element]
        let requested = parameters[Self.workers]
        workers = requested == 0 ? ProcessInfo.processInfo.activeProcessorCount : requested
        operations = parameters[Self.operations]
        mix = OperationMix(readPercent: parameters[Self.reads], clearEvery: parameters[Self.clearEvery],
                           emptyCriticalSection: collection == .none)
        fanOut = parameters[Self.fanOut]
        sampleEvery = parameters[Self.sampleEvery]
    }

    func prepare(context: ScenarioContext) throws -> Workload {
        let scenario = self
        return { executor in
            switch (scenario.collection, scenario.element) {
            case (.array, .token): try scenario.run(ArrayCollection<Token>.self, on: executor, context: context)
            case (.dictionary, .int): try scenario.run(DictionaryCollection<Int>.self, on: executor, context: context)
            case (.dictionary, .token): try scenario.run(DictionaryCollection<Token>.self, on: executor, context: context)
            case (.set, .int): try scenario.run(SetCollection<Int>.self, on: executor, context: context)
            case (.set, .token): try scenario.run(SetCollection<Token>.self, on: executor, context: context)
            case (.none, _): try scenario.run(NoCollection.self, on: executor, context: context)
            case (.array, .int): try scenario.run(ArrayCollection<Int>.self, on: executor, context: context)
            }
        }
    }

    func run<Value: ContendedCollection>(_ type: Value.Type, on executor: any StrategyExecutor, context: ScenarioContext) throws {
        let reference = Mutex<Double?>(nil)
        if guardKind == .pthreadMutex && collection == .none && workers == 1 {
            // The reference: the same pairs in a tight C loop, on the same kind of thread, in the same child.
            let iterations = operations
            try executor.perform {
                let nanoseconds = ReferenceLoop.pthreadMutexNanoseconds(iterations: iterations)
                context.record(Self.cReferenceNsPerOp, nanoseconds)
                reference.withVisibleLock { $0 = nanoseconds }
            }
        }
        let budget = OperationBudget(operations, workers: workers)
        let gate = StartGate(workers: workers)
        let results = WorkerResults()
        let appended = AppendedCounts()
        var settledAt: UInt64 = 0
        let finished = Countdown()
        let settled: Value
        context.heartbeat.queued(workers)
        if guardKind == .actor {
            // Actor workers are tasks whatever the strategy: the only way to call it without blocking a thread.
            let state = ActorGuard<Value>()
            for index in 0..<workers {
                let loop = WorkerLoop(index: index, sampleEvery: sampleEvery)
                var picker = makePicker(index, context: context)
                Task.detached {
                    var latencies = LatencyRecorder()
                    var result = WorkerResult(worker: index)
                    await context.unitAsync {
                        let startedWith = gate.arrive()
                        result = await loop.run(budget: budget, heartbeat: context.heartbeat, latencies: &latencies) {
                            await state.perform(picker.next())
                        }
                        result.startedWith = startedWith
                    }
                    appended.set(picker.appended, for: index)
                    results.add(result, latencies: latencies, context: context)
                    finished.add()
                }
            }
            finished.wait(for: workers, seconds: nil)
            settled = ActorBridge.wait { await state.settled() }
            settledAt = MonotonicClock.nanoseconds
        } else {
            let visitor = CollectionHammer<Value>(scenario: self, executor: executor, context: context, budget: budget, gate: gate,
                                                  results: results, appended: appended)
            _ = try guardKind.open(visitor)
            settled = visitor.settled.withVisibleLock { $0 }!
            settledAt = visitor.settledAt.withVisibleLock { $0 }
        }
        let seconds = results.recordThroughput(context: context, settled: settledAt)
        let done = results.all.reduce(0) { $0 + $1.operations }
        if let reference = reference.withVisibleLock({ $0 }), let seconds, done > 0 {
            let nanoseconds = seconds * 1e9 / Double(done)
            context.record(Self.nsPerOp, nanoseconds)
            context.record(Self.ratioToCReference, nanoseconds / reference)
        }
        try check(settled, results: results.all, appendedBy: appended.all, context: context)
    }

    func makePicker(_ index: Int, context: ScenarioContext) -> OperationPicker {
        OperationPicker(worker: index, seed: context.seed &+ UInt64(index) &* 0x9E37_79B9_7F4A_7C15, mix: mix)
    }

    /// Lost, duplicated or foreign elements, and counts that do not add up.
    func check<Value: ContendedCollection>(_ value: Value, results: [WorkerResult], appendedBy: [Int: Int], context: ScenarioContext) throws {
        let done = results.reduce(0) { $0 + $1.operations }
        context.record(Self.operationsDone, done)
        try context.check(done == operations, "the workers did \(done) operations of \(operations)")
        guard collection != .none else { return }
        let appended = appendedBy.values.reduce(0, +)
        let ids = value.ids
        let unique = Set(ids)
        let shift = OperationPicker.idShift
        let mask = (1 << shift) - 1
        let foreign = unique.filter { id in
            let worker = id >> shift
            return (id & mask) >= (appendedBy[worker] ?? 0)
        }
        context.record(Self.appended, appended)
        context.record(Self.elementsAtTheEnd, ids.count)
        try context.check(foreign.isEmpty, "\(foreign.count) elements were never appended (corrupted storage)")
        try context.check(unique.count == ids.count, "\(ids.count - unique.count) elements are duplicated")
        if Value.keepsOrder {
            var last: [Int: Int] = [:]
            var outOfOrder = 0
            for id in ids {
                let worker = id >> shift
                if let previous = last[worker], previous >= id { outOfOrder += 1 }
                last[worker] = id
            }
            try context.check(outOfOrder == 0, "\(outOfOrder) elements appear before an element their worker appended earlier (out of order)")
        }
        try context.check(ids.count + value.removed == appended,
                          "\(appended) appended, \(value.removed) removed, but \(ids.count) remain: \(appended - value.removed - ids.count) lost")
    }
}

/// How many elements each worker appended, for the end check.
final class AppendedCounts: Sendable {
    private let counts = Mutex<[Int: Int]>([:])

    func set(_ count: Int, for worker: Int) { counts.withVisibleLock { $0[worker] = count } }
    var all: [Int: Int] { counts.withVisibleLock { $0 } }
}

/// Runs the workers on one concrete guard and keeps what they left.
final class CollectionHammer<Value: ContendedCollection>: GuardVisitor {
    let scenario: ContendedCollectionScenario
    let executor: any StrategyExecutor
    let context: ScenarioContext
    let budget: OperationBudget
    let gate: StartGate
    let results: WorkerResults
    let appended: AppendedCounts
    let settled = Mutex<Value?>(nil)
    let settledAt = Mutex<UInt64>(0)

    init(scenario: ContendedCollectionScenario, executor: any StrategyExecutor, context: ScenarioContext, budget: OperationBudget,
         gate: StartGate, results: WorkerResults, appended: AppendedCounts) {
        self.scenario = scenario
        self.executor = executor
        self.context = context
        self.budget = budget
        self.gate = gate
        self.results = results
        self.appended = appended
    }

    func visit<Guard: StateGuard>(_ state: Guard) throws where Guard.Value == Value {
        let finished = Countdown()
        let scenario = scenario
        let context = context
        let budget = budget
        let gate = gate
        let results = results
        let appended = appended
        let body: @Sendable (Int) -> Void = { index in
            let loop = WorkerLoop(index: index, sampleEvery: scenario.sampleEvery)
            var picker = scenario.makePicker(index, context: context)
            var latencies = LatencyRecorder()
            let result = context.unit {
                let startedWith = gate.pass(heartbeat: context.heartbeat)
                var result = loop.run(budget: budget, heartbeat: context.heartbeat, latencies: &latencies) { state.perform(picker.next()) }
                result.startedWith = startedWith
                return result
            }
            appended.set(picker.appended, for: index)
            results.add(result, latencies: latencies, context: context)
            finished.add()
        }
        if scenario.fanOut == .concurrentPerform {
            DispatchQueue.concurrentPerform(iterations: scenario.workers, execute: body)
        } else {
            for index in 0..<scenario.workers { executor.submit { body(index) } }
        }
        finished.wait(for: scenario.workers, seconds: nil)
        // Work a guard queued (async barriers) is done once settled returns.
        let value = state.settled()
        settledAt.withVisibleLock { $0 = MonotonicClock.nanoseconds }
        settled.withVisibleLock { $0 = value }
    }
}
