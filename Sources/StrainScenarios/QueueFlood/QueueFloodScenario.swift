import Dispatch
import Foundation
import StrainHelpers
import StrainKit
import Synchronization

/// A background import that reports progress on a serial "main" queue: for
/// every item, or every 1% of the items (the granularity fix).
///
/// Reporting every item floods the main queue with one block per item. The
/// import itself slows down (each `async` allocates and wakes the queue), every
/// other job on the main queue waits behind the backlog, and a Cancel tapped on
/// the main queue takes effect only once the backlog before it has drained.
/// The scenario runs the import three times on the trial's strategy:
///
/// 1. without reporting: the baseline the slowdown is measured against;
/// 2. reporting at the chosen granularity, with an unrelated job submitted to the
///    main queue halfway through (its wait is the latency a user feels);
/// 3. reporting again, with a Cancel submitted to the main queue halfway through
///    (the time until the import stops is how long cancellation takes).
struct QueueFloodScenario: Scenario {
    static let name = "queue-flood"
    /// Its workers wait, sleep or race a clock: a counted run records it as not countable.
    static let workDependsOnTiming = true
    static let summary = "a background import reporting progress on a serial main queue every item or every 1%: total time, slowdown, an unrelated main-queue job's latency, time to cancel"
    static let progressUpdates = Metric<Int>.count("progressUpdates", better: .lowerIsBetter, noise: .deterministic, summary: "progress blocks the main queue ran")
    static let baselineImportSeconds = Metric<Double>.seconds("baselineImportSeconds", better: .lowerIsBetter, noise: .timing, summary: "the import without reporting")
    static let importSeconds = Metric<Double>.seconds("importSeconds", better: .lowerIsBetter, noise: .timing, summary: "the import with reporting")
    static let slowdown = Metric<Double>.ratio("slowdown", better: .lowerIsBetter, noise: .timing, summary: "the import with reporting over the import without")
    static let totalSeconds = Metric<Double>.seconds("totalSeconds", better: .lowerIsBetter, noise: .timing, summary: "import start until the main queue showed the last update")
    static let unrelatedJobLatencySeconds = Metric<Double>.seconds("unrelatedJobLatencySeconds", better: .lowerIsBetter, noise: .timing, summary: "an unrelated job's wait on the main queue, submitted halfway")
    static let cancelSeconds = Metric<Double>.seconds("cancelSeconds", better: .lowerIsBetter, noise: .timing, summary: "a Cancel tapped on the main queue halfway until the main queue ran it")
    static let cancelledAtItem = Metric<Int>.count("cancelledAtItem", better: .lowerIsBetter, noise: .timing, summary: "items done when the import stopped after the Cancel (all of them: the Cancel came too late)")
    static let metrics: [any MetricDeclaration] = [progressUpdates, baselineImportSeconds, importSeconds, slowdown, totalSeconds, unrelatedJobLatencySeconds, cancelSeconds, cancelledAtItem]
    /// How often the import reports progress.
    enum Progress: String, CaseIterable, Sendable {
        case everyItem = "every-item", everyPercent = "every-percent"
    }

    static let items = Parameter<Int>("items", in: 100...10_000_000, default: 200_000, help: "items the import processes")
    static let progress = Parameter<Progress>("progress", default: .everyItem, help: "how often the import reports progress to the main queue")
    static let work = Parameter<Int>("work", in: 0...100_000, default: 64, help: "bytes of each item's record the import checksums (its own work per item)")
    static let parameters: [any ParameterDeclaration] = [items, progress, work]
    static let typicalOutcomes = [
        TypicalOutcome(.completed, because: "the flood slows things down without breaking them; the metrics say how much"),
    ]
    static let starterRuns = [StarterRun(strategies: ["gcd-global", "thread(512KiB)", "thread(8MiB)"])]

    let items: Int
    let everyItem: Bool
    let workBytes: Int

    /// Reads `items`, `progress` and `work`.
    init(parameters: ParameterValues) {
        items = parameters[Self.items]
        everyItem = parameters[Self.progress] == .everyItem
        workBytes = parameters[Self.work]
    }

    func prepare(context: ScenarioContext) throws -> Workload {
        let scenario = self
        let record = Prepared([UInt8]((0..<max(1, workBytes)).map { UInt8(truncatingIfNeeded: $0 &* 31) }))
        return { executor in
            try executor.perform {
                try context.unit { try scenario.run(record: record.value, context: context) }
            }
        }
    }

    /// The three imports, on the calling (strategy's) thread.
    func run(record: [UInt8], context: ScenarioContext) throws {
        let main = DispatchQueue(label: "strain.queue-flood.main")
        let stride = everyItem ? 1 : max(1, items / 100)

        // 1. The baseline: the same work, no reporting.
        // The faster of two runs, so a cold first run does not pass for the baseline.
        let baseline = [0, 1].map { _ in importItems(record: record, context: context, report: nil, halfway: {}, cancelled: nil) }
            .min { $0.seconds < $1.seconds }!

        // 2. Reporting, with an unrelated job halfway.
        let progress = ProgressModel()
        let unrelatedSubmitted = EventStamp()
        let unrelatedRan = EventStamp()
        let started = MonotonicClock.nanoseconds
        let reported = importItems(record: record, context: context, report: { done in
            if done % stride == 0 || done == items {
                main.async { progress.update(done: done, of: items) }
            }
        }, halfway: {
            unrelatedSubmitted.set()
            main.async { unrelatedRan.set() }
        }, cancelled: nil)
        // The user sees the import finish when the main queue has shown its last update.
        context.blocking(on: main.label) { main.sync {} }
        let total = Double(MonotonicClock.nanoseconds - started) / 1e9

        // 3. Reporting again, with a Cancel tapped on the main queue halfway.
        let cancelFlag = CancelFlag()
        let tapped = EventStamp()
        let cancelRan = EventStamp()
        let cancelProgress = ProgressModel()
        let cancelledRun = importItems(record: record, context: context, report: { done in
            if done % stride == 0 || done == items {
                main.async { cancelProgress.update(done: done, of: items) }
            }
        }, halfway: {
            tapped.set()
            main.async {
                cancelFlag.cancel()
                cancelRan.set()
            }
        }, cancelled: cancelFlag)
        context.blocking(on: main.label) { main.sync {} }

        let updates = progress.updates
        let expectedUpdates = everyItem ? items : items / stride + (items % stride == 0 ? 0 : 1)
        context.record(Self.progressUpdates, updates)
        context.record(Self.baselineImportSeconds, baseline.seconds)
        context.record(Self.importSeconds, reported.seconds)
        context.record(Self.slowdown, reported.seconds / max(baseline.seconds, 1e-9))
        context.record(Self.totalSeconds, total)
        context.record(Self.unrelatedJobLatencySeconds, Double((unrelatedRan.value ?? 0) &- (unrelatedSubmitted.value ?? 0)) / 1e9)
        context.record(Self.cancelSeconds, Double((cancelRan.value ?? 0) &- (tapped.value ?? 0)) / 1e9)
        context.record(Self.cancelledAtItem, cancelledRun.done)
        try context.check(updates == expectedUpdates, "the main queue showed \(updates) progress updates; the import sent \(expectedUpdates)")
        try context.check(progress.lastDone == items, "the last update showed \(progress.lastDone) of \(items) items")
        try context.check(reported.checksum == baseline.checksum, "the reported import computed another checksum")
    }

    /// One import: checksums `items` records, reporting each item done, calling
    /// `halfway` once at the middle, stopping early when `cancelled` is set.
    func importItems(record: [UInt8], context: ScenarioContext, report: ((Int) -> Void)?, halfway: () -> Void,
                     cancelled: CancelFlag?) -> (seconds: Double, done: Int, checksum: UInt64) {
        let started = MonotonicClock.nanoseconds
        var checksum: UInt64 = 0xcbf2_9ce4_8422_2325
        var done = 0
        let middle = items / 2
        for item in 1...items {
            if let cancelled, cancelled.isCancelled { break }
            record.withUnsafeBufferPointer { bytes in
                for byte in bytes {
                    checksum ^= UInt64(byte)
                    checksum &*= 0x0000_0100_0000_01b3
                }
            }
            checksum ^= UInt64(item)
            done = item
            report?(item)
            if item == middle { halfway() }
            if item & 4095 == 0 { context.heartbeat.beat() }
        }
        return (Double(MonotonicClock.nanoseconds - started) / 1e9, done, checksum)
    }
}

/// A Cancel button's effect: set on the main queue, read by the import.
final class CancelFlag: Sendable {
    private let flag = Atomic<Bool>(false)
    func cancel() { flag.store(true, ordering: .releasing) }
    var isCancelled: Bool { flag.load(ordering: .acquiring) }
}

/// What the main queue shows: the fraction done, as a label would.
final class ProgressModel: Sendable {
    private let state = Mutex<(updates: Int, lastDone: Int, label: String)>((0, 0, ""))

    /// Runs on the main queue, as a UI update would.
    func update(done: Int, of total: Int) {
        let label = String(format: "%.1f%%", Double(done) * 100 / Double(total))
        state.withVisibleLock { $0 = ($0.updates + 1, done, label) }
    }

    var updates: Int { state.withVisibleLock { $0.updates } }
    var lastDone: Int { state.withVisibleLock { $0.lastDone } }
}
