import Foundation
import OrderModel
import StrainHelpers
import StrainKit
import Synchronization

/// The app's cache of decoded orders, shared by W workers behind the guard the
/// team chose: each worker looks orders up and adds the ones it misses, as the
/// order screens do. Does the guard keep the cache whole, and what does it cost?
public struct OrderCacheScenario: Scenario {
    public static let name = "order-cache"
    public static let summary = "a cache of decoded orders shared by W workers behind a guard: throughput, latency, and whether every order it hands out is the one asked for"

    static let guardKind = Parameter<GuardKind>("guard", default: .nsLock, help: "how the cache is guarded (unguarded: the negative control)",
                                                choices: GuardKind.allCases.filter { $0 != .actor })
    static let workers = Parameter<Int>("workers", in: 1...256, default: 4, help: "workers using the cache at once")
    static let lookups = Parameter<Int>("lookups", in: 1...100_000_000, default: 100_000, help: "lookups in all, shared out between the workers")
    static let orders = Parameter<Int>("orders", in: 1...1_000_000, default: 1000, help: "distinct order ids asked for")
    public static let parameters: [any ParameterDeclaration] = [guardKind, workers, lookups, orders]
    /// The report's table: the guards ranked by throughput.
    public static let rankings = [RankingRequest(by: "throughput", across: guardKind, ignoring: [lookups])]
    public static let hitRatio = Metric<Double>.ratio("hit ratio", better: .higherIsBetter, noise: .timing, summary: "lookups the cache answered")
    public static let ordersCached = Metric<Int>.count("orders cached", better: nil, noise: .deterministic, summary: "orders in the cache at the end")
    public static let metrics: [any MetricDeclaration] = [hitRatio, ordersCached] + WorkerResults.metrics
    public static let typicalOutcomes = [
        TypicalOutcome(.completed, because: "every guard keeps the cache whole"),
        TypicalOutcome(.crashed, because: "unguarded: concurrent inserts corrupt the dictionary's storage"),
        TypicalOutcome(.invariantViolated, because: "unguarded: an order lost, or handed out for the wrong id"),
    ]

    let guardKind: GuardKind
    let workers: Int
    let lookups: Int
    let orders: Int

    public init(parameters: ParameterValues) {
        guardKind = parameters[Self.guardKind]
        workers = parameters[Self.workers]
        lookups = parameters[Self.lookups]
        orders = parameters[Self.orders]
    }

    public func prepare(context: ScenarioContext) throws -> Workload {
        let scenario = self
        return { executor in
            let budget = OperationBudget(scenario.lookups, workers: scenario.workers)
            let gate = StartGate(workers: scenario.workers)
            let results = WorkerResults()
            let misses = AtomicCounter()
            let wrong = AtomicCounter()
            // The guard as its concrete type, so each lookup is a direct call.
            let visitor = CacheVisitor(scenario: scenario, executor: executor, context: context, budget: budget, gate: gate,
                                       results: results, misses: misses, wrong: wrong)
            _ = try scenario.guardKind.open(visitor)
            let cached = visitor.cached.withLock { $0 }
            results.recordThroughput(context: context)
            context.record(Self.hitRatio, Double(scenario.lookups - misses.value) / Double(scenario.lookups))
            context.record(Self.ordersCached, cached)
            try context.check(wrong.value == 0, "\(wrong.value) lookups returned another order than the one asked for")
            try context.check(cached <= scenario.orders, "the cache holds \(cached) orders; only \(scenario.orders) ids exist")
        }
    }

    /// Runs the workers on `cache`: each looks ids up and inserts what it missed.
    func hammer<Guard: StateGuard<OrderCache>>(_ cache: Guard, executor: any StrategyExecutor, context: ScenarioContext, budget: OperationBudget,
                                               gate: StartGate, results: WorkerResults, misses: AtomicCounter, wrong: AtomicCounter) {
        let finished = Countdown()
        let orders = orders
        context.heartbeat.queued(workers)
        for index in 0..<workers {
            executor.submit {
                let loop = WorkerLoop(index: index)
                var latencies = LatencyRecorder()
                var next = UInt64(index + 1) &* 0x9E37_79B9_7F4A_7C15 ^ context.seed
                let result = context.unit {
                    let startedWith = gate.pass(heartbeat: context.heartbeat)
                    var result = loop.run(budget: budget, heartbeat: context.heartbeat, latencies: &latencies) {
                        next = next &* 6364136223846793005 &+ 1442695040888963407
                        let id = Int((next >> 33) % UInt64(orders))
                        let found = cache.perform(.lookup(id))
                        if found == OrderCache.missing {
                            misses.add()
                            _ = cache.perform(.insert(Order(id: id, customer: "customer-\(id)", lines: [])))
                        } else if found != id {
                            wrong.add()
                        }
                        return found
                    }
                    result.startedWith = startedWith
                    return result
                }
                results.add(result, latencies: latencies, context: context)
                finished.add()
            }
        }
        finished.wait(for: workers, seconds: nil)
    }
}

/// The cache: orders by id.
struct OrderCache: GuardedValue {
    /// What a lookup of an id the cache does not hold returns.
    static let missing = -1

    enum Operation: Sendable {
        case lookup(Int)
        case insert(Order)
    }

    var orders: [Int: Order] = [:]

    static func isWrite(_ operation: Operation) -> Bool {
        if case .insert = operation { return true }
        return false
    }

    /// The id of the order found under the id asked for, or `missing`.
    func read(_ operation: Operation) -> Int {
        guard case .lookup(let id) = operation else { return Self.missing }
        return orders[id]?.id ?? Self.missing
    }

    mutating func write(_ operation: Operation) {
        if case .insert(let order) = operation { orders[order.id] = order }
    }
}

/// Runs the workers on the guard's concrete type.
private final class CacheVisitor: GuardVisitor, Sendable {
    typealias Value = OrderCache
    let scenario: OrderCacheScenario
    let executor: any StrategyExecutor
    let context: ScenarioContext
    let budget: OperationBudget
    let gate: StartGate
    let results: WorkerResults
    let misses: AtomicCounter
    let wrong: AtomicCounter
    let cached = Mutex<Int>(0)

    init(scenario: OrderCacheScenario, executor: any StrategyExecutor, context: ScenarioContext, budget: OperationBudget, gate: StartGate,
         results: WorkerResults, misses: AtomicCounter, wrong: AtomicCounter) {
        self.scenario = scenario
        self.executor = executor
        self.context = context
        self.budget = budget
        self.gate = gate
        self.results = results
        self.misses = misses
        self.wrong = wrong
    }

    func visit<Guard: StateGuard>(_ state: Guard) where Guard.Value == OrderCache {
        scenario.hammer(state, executor: executor, context: context, budget: budget, gate: gate, results: results, misses: misses, wrong: wrong)
        cached.withLock { $0 = state.settled().orders.count }
    }
}
