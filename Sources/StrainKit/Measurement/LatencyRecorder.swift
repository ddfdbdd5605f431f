import Histogram

/// A worker's latencies, in nanoseconds, kept in an HDR histogram (two
/// significant digits, from 1 ns to 60 s) that records without allocating.
///
/// Keep one per worker while it runs (recording is not synchronised), then
/// hand it to ``ScenarioContext/addWorker(_:operations:latencies:)``, which
/// merges the workers' recorders into the trial's latency percentiles.
///
/// ```swift
/// var latencies = LatencyRecorder()
/// let value = latencies.time { cache.lookup(key) }
/// context.addWorker(index, operations: 1, latencies: latencies)
/// ```
public struct LatencyRecorder: Sendable {
    /// The longest latency kept as such; longer ones are recorded as this.
    public static let highestTrackableNanoseconds: UInt64 = 60_000_000_000

    var histogram = Histogram<UInt64>(lowestDiscernibleValue: 1, highestTrackableValue: LatencyRecorder.highestTrackableNanoseconds,
                                      numberOfSignificantValueDigits: .two)

    /// An empty recorder.
    public init() {}

    /// Records one latency.
    public mutating func record(nanoseconds: UInt64) {
        histogram.record(min(nanoseconds, Self.highestTrackableNanoseconds))
    }

    /// Runs `body` and records how long it took on ``MonotonicClock``.
    @discardableResult
    public mutating func time<T>(_ body: () throws -> T) rethrows -> T {
        let start = MonotonicClock.nanoseconds
        defer { record(nanoseconds: MonotonicClock.nanoseconds &- start) }
        return try body()
    }

    /// Adds every latency `other` recorded.
    public mutating func merge(_ other: LatencyRecorder) {
        histogram.add(other.histogram)
    }

    /// How many latencies were recorded.
    public var count: Int { Int(histogram.totalCount) }

    /// The latency at `percentile` (0 to 100), in nanoseconds.
    public func nanoseconds(atPercentile percentile: Double) -> UInt64 {
        histogram.valueAtPercentile(percentile)
    }

    /// The recorded latencies summed up as run.json keeps them.
    public var summary: LatencySummary { LatencySummary(histogram) }
}

extension LatencySummary {
    /// Sums up an HDR histogram of nanoseconds.
    package init(_ histogram: Histogram<UInt64>) {
        self.init(
            count: Int(histogram.totalCount),
            minNanoseconds: Int(histogram.min),
            p50Nanoseconds: Int(histogram.valueAtPercentile(50)),
            p90Nanoseconds: Int(histogram.valueAtPercentile(90)),
            p99Nanoseconds: Int(histogram.valueAtPercentile(99)),
            p999Nanoseconds: Int(histogram.valueAtPercentile(99.9)),
            maxNanoseconds: Int(histogram.max),
            meanNanoseconds: histogram.totalCount == 0 ? 0 : histogram.mean,
            curve: [0, 25, 50, 75, 90, 95, 99, 99.5, 99.9, 99.95, 99.99, 100].map { percentile in
                LatencyPoint(percentile: percentile, nanoseconds: Int(histogram.valueAtPercentile(percentile)))
            }
        )
    }
}
