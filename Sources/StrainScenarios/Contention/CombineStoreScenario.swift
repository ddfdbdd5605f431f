import Foundation
import OpenCombine
import StrainHelpers
import StrainKit
import Synchronization

/// Combine code's everyday shared collection: subscriptions made on many
/// threads, each kept with `store(in: &cancellables)` in one shared
/// `Set<AnyCancellable>`. Unguarded, concurrent inserts corrupt the set or lose
/// subscriptions (a lost `AnyCancellable` cancels itself: its subscriber never
/// hears another value). The situation that made the blog's authors write
/// their thread-safe array; OpenCombine stands in for Combine here.
struct CombineStoreScenario: Scenario {
    static let name = "combine-store"
    /// Its workers wait, sleep or race a clock: a counted run records it as not countable.
    static let workDependsOnTiming = true
    static let summary = "subscriptions made on W workers, each stored with store(in:) into one shared Set<AnyCancellable> through a guard; then one value sent: every subscription must hear it"
    static let guardKind = Parameter<GuardKind>("guard", default: .unguarded, help: "how the shared set is guarded")
    static let workers = Parameter<Int>("workers", in: 0...4096, default: 0, help: "workers subscribing at once; 0 means one per core")
    static let subscriptions = Parameter<Int>("subscriptions", in: 1...10_000_000, default: 20_000, help: "subscriptions in all")
    static let parameters: [any ParameterDeclaration] = [guardKind, workers, subscriptions]
    static let rankings = [RankingRequest(by: "throughput", across: guardKind, ignoring: [subscriptions])]
    static let subscriptionsStored = Metric<Int>.count("subscriptions stored", better: nil, noise: .timing, summary: "subscriptions the shared set held at the end")
    static let subscribersThatHeardTheValue = Metric<Int>.count("subscribers that heard the value", better: nil, noise: .timing, summary: "subscriptions that heard the value sent after")
    static let metrics: [any MetricDeclaration] = [subscriptionsStored, subscribersThatHeardTheValue] + WorkerResults.metrics
    static let typicalOutcomes = [
        TypicalOutcome(.completed, because: "a guard keeps every subscription, and every one hears the value"),
        TypicalOutcome(.crashed, because: "unguarded: concurrent inserts corrupt the set and glibc aborts"),
        TypicalOutcome(.invariantViolated, because: "unguarded: subscriptions lost, and a lost AnyCancellable cancels itself"),
    ]
    static let starterRuns = [
        StarterRun(parameters: ["guard": "NSLock", "workers": "8", "subscriptions": "2000"], strategies: ["gcd-global", "thread(512KiB)"]),
        // Unguarded, a run ends any of three ways: chance decides.
        StarterRun(parameters: ["guard": "unguarded", "workers": "8", "subscriptions": "2000"], strategies: ["thread(512KiB)"], expect: [.completed, .crashed, .invariantViolated]),
    ]

    let guardKind: GuardKind
    let workers: Int
    let subscriptions: Int

    /// Reads the guard, the workers and the subscriptions.
    init(parameters: ParameterValues) {
        guardKind = parameters[Self.guardKind]
        let requested = parameters[Self.workers]
        workers = requested == 0 ? ProcessInfo.processInfo.activeProcessorCount : requested
        subscriptions = parameters[Self.subscriptions]
    }

    func prepare(context: ScenarioContext) throws -> Workload {
        let scenario = self
        return { executor in
            let subject = SharedSubject()
            let heard = AtomicCounter()
            let budget = OperationBudget(scenario.subscriptions, workers: scenario.workers)
            let gate = StartGate(workers: scenario.workers)
            var settledAt: UInt64 = 0
            let results = WorkerResults()
            let finished = Countdown()
            let stored: Int
            context.heartbeat.queued(scenario.workers)
            if scenario.guardKind == .actor {
                let bag = ActorGuard<CancellableBag>()
                for index in 0..<scenario.workers {
                    Task.detached {
                        var latencies = LatencyRecorder()
                        var result = WorkerResult(worker: index)
                        await context.unitAsync {
                            result.startedWith = gate.arrive()
                            result.started = MonotonicClock.nanoseconds
                            while case let chunk = budget.take(), chunk > 0 {
                                for _ in 0..<chunk {
                                    let box = Box(subject.sink { _ in heard.add() })
                                    let start = MonotonicClock.nanoseconds
                                    _ = await bag.perform(.store(box))
                                    latencies.record(nanoseconds: MonotonicClock.nanoseconds &- start)
                                    result.operations += 1
                                }
                                context.heartbeat.beat()
                            }
                            result.ended = MonotonicClock.nanoseconds
                        }
                        results.add(result, latencies: latencies, context: context)
                        finished.add()
                    }
                }
                finished.wait(for: scenario.workers, seconds: nil)
                stored = ActorBridge.wait { await bag.perform(.count) }
                settledAt = MonotonicClock.nanoseconds
                // The set must outlive the value: a released AnyCancellable cancels.
                withExtendedLifetime(bag) { subject.send(1) }
            } else {
                let visitor = StoreSubscriptions(workers: scenario.workers, subject: subject, heard: heard, budget: budget, gate: gate,
                                                 results: results, executor: executor, context: context)
                _ = try scenario.guardKind.open(visitor)
                stored = visitor.stored.load(ordering: .relaxed)
                settledAt = visitor.settledAt.load(ordering: .relaxed)
            }
            results.recordThroughput(context: context, settled: settledAt)
            let made = results.all.reduce(0) { $0 + $1.operations }
            context.record(Self.subscriptionsStored, stored)
            context.record(Self.subscribersThatHeardTheValue, heard.value)
            try context.check(stored == made, "\(made) subscriptions were stored, the set holds \(stored): \(made - stored) lost")
            try context.check(heard.value == made, "\(made) subscriptions, \(heard.value) heard the value sent after")
        }
    }
}

/// Makes a subscription and stores it through the guard, on every worker.
private final class StoreSubscriptions: GuardVisitor, Sendable {
    typealias Value = CancellableBag
    let workers: Int
    let subject: SharedSubject
    let heard: AtomicCounter
    let budget: OperationBudget
    let gate: StartGate
    let results: WorkerResults
    let executor: any StrategyExecutor
    let context: ScenarioContext
    let stored = Atomic<Int>(0)
    let settledAt = Atomic<UInt64>(0)

    init(workers: Int, subject: SharedSubject, heard: AtomicCounter, budget: OperationBudget, gate: StartGate,
         results: WorkerResults, executor: any StrategyExecutor, context: ScenarioContext) {
        self.workers = workers
        self.subject = subject
        self.heard = heard
        self.budget = budget
        self.gate = gate
        self.results = results
        self.executor = executor
        self.context = context
    }

    func visit<Guard: StateGuard>(_ state: Guard) throws where Guard.Value == CancellableBag {
        let finished = Countdown()
        for index in 0..<workers {
            executor.submit { [self] in
                var latencies = LatencyRecorder()
                var result = WorkerResult(worker: index)
                context.unit {
                    result.startedWith = gate.pass(heartbeat: context.heartbeat)
                    result.started = MonotonicClock.nanoseconds
                    while case let chunk = budget.take(), chunk > 0 {
                        for _ in 0..<chunk {
                            let heard = heard
                            let cancellable = subject.sink { _ in heard.add() }
                            let start = MonotonicClock.nanoseconds
                            _ = state.perform(.store(Box(cancellable)))
                            latencies.record(nanoseconds: MonotonicClock.nanoseconds &- start)
                            result.operations += 1
                        }
                        context.heartbeat.beat()
                    }
                    result.ended = MonotonicClock.nanoseconds
                }
                results.add(result, latencies: latencies, context: context)
                finished.add()
            }
        }
        finished.wait(for: workers, seconds: nil)
        stored.store(state.settled().cancellables.count, ordering: .relaxed)
        settledAt.store(MonotonicClock.nanoseconds, ordering: .relaxed)
        // The value goes out while the guard (and the set it keeps) is alive:
        // a released AnyCancellable cancels its subscription.
        withExtendedLifetime(state) { subject.send(1) }
    }
}

/// The shared `Set<AnyCancellable>`.
///
/// `@unchecked Sendable`: `AnyCancellable` is not `Sendable`, but the set is
/// only touched inside its guard's critical section (or, unguarded, raced on
/// purpose: that is the scenario's negative control).
struct CancellableBag: GuardedValue, @unchecked Sendable {
    enum Operation: Sendable {
        case store(Box)
        case count
    }

    var cancellables = Set<AnyCancellable>()

    static func isWrite(_ operation: Operation) -> Bool {
        if case .store = operation { return true }
        return false
    }

    func read(_ operation: Operation) -> Int { cancellables.count }

    mutating func write(_ operation: Operation) {
        if case .store(let box) = operation { box.cancellable.store(in: &cancellables) }
    }
}

/// Carries an `AnyCancellable` (not `Sendable`) into a guard's critical section.
///
/// `@unchecked Sendable`: the cancellable is made on one worker and handed over
/// once, into the set; nothing touches it on two threads at a time.
struct Box: @unchecked Sendable {
    let cancellable: AnyCancellable
    init(_ cancellable: AnyCancellable) { self.cancellable = cancellable }
}

/// The subject every worker subscribes to. OpenCombine's `PassthroughSubject`
/// takes its own lock around subscribing and sending, so sharing it is safe;
/// it is just not marked `Sendable`.
final class SharedSubject: @unchecked Sendable {
    private let subject = PassthroughSubject<Int, Never>()

    func sink(_ receive: @escaping (Int) -> Void) -> AnyCancellable { subject.sink(receiveValue: receive) }
    func send(_ value: Int) { subject.send(value) }
}

